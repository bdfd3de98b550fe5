"""Files passhat writes for its user: replaced whole or not at all, appended whole or not at all, and a
run folder with one writer at a time.

A kill can land at any instant. ``write_atomically`` leaves the previous file or the new one, never a
truncated one; ``append_whole`` writes the bytes of one call at once, so a kill in the middle can leave
only an unterminated last line, which readers recognise as torn; ``FolderLock`` is an flock the kernel
releases when its process ends, however it ends. ``durable`` writes are also on disk (fsync) before
they return, against a crash of the machine; a file rebuilt from a database that is the record (a
run's audit mirror) can skip that cost.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import BinaryIO

from passhat.crashpoints import CrashWindow, crash_point
from passhat.errors import UserError

LOCK_FILE = "writer.lock"


def write_atomically(
    path: Path, data: str | bytes | Iterable[str | bytes], window: CrashWindow | None = None, durable: bool = True
) -> None:
    """Replace ``path`` with ``data`` (text is UTF-8; data in pieces is written piece by piece, never joined: a
    large report's page): written to a temporary file in the same folder, then renamed over ``path``.
    ``window`` names the file's crash point for tests (a kill halfway through the first piece)."""
    pieces = (data,) if isinstance(data, (str, bytes)) else data
    mode = _mode_for(path)
    prefix = temporary_prefix(path)
    _remove_leftovers(path.parent, prefix)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{prefix}{os.getpid()}-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            for i, piece in enumerate(pieces):
                raw = piece.encode("utf-8") if isinstance(piece, str) else piece
                if window and i == 0:
                    crash_point(window, functools.partial(_write_half, f, raw))
                f.write(raw)
            f.flush()
            os.fchmod(f.fileno(), mode)
            if durable:
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if durable:
        _sync_folder(path.parent)


def temporary_prefix(path: Path) -> str:
    """The start of every temporary name of ``path``'s writes: short whatever the name (any valid name fits)."""
    return f".passhat-{hashlib.sha256(path.name.encode(errors='surrogateescape')).hexdigest()[:12]}-"


def _remove_leftovers(folder: Path, prefix: str) -> None:
    """Delete the temporary files a killed write of the same file left behind, so kills do not pile them up;
    a file of a writer still alive (its pid in the name) is left to it."""
    with contextlib.suppress(OSError):
        for leftover in folder.glob(f"{prefix}*.tmp"):
            pid = leftover.name.removeprefix(prefix).partition("-")[0]
            if pid.isdigit() and not _alive(int(pid)):
                with contextlib.suppress(OSError):
                    leftover.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # OverflowError: a number no process can have
        return False
    except PermissionError:  # another user's process, alive
        return True
    return True


def append_whole(path: Path, data: bytes, window: CrashWindow | None = None, durable: bool = True) -> None:
    """Append ``data`` to ``path`` (created if absent) in one write."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        if window:
            crash_point(window, lambda: os.write(fd, data[: len(data) // 2]))
        view = memoryview(data)
        while view:  # a regular file takes it all in one call but for a full disk or a signal
            view = view[os.write(fd, view) :]
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)


class FolderLock:
    """An exclusive lock on a folder's ``writer.lock``, held until ``release()`` or the process ends."""

    def __init__(self, fd: int):
        self._fd: int | None = fd

    @classmethod
    def acquire(cls, folder: Path, what: str) -> FolderLock:
        """Take the lock or refuse (UserError naming ``what`` and the process holding it)."""
        path = Path(folder) / LOCK_FILE
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise UserError(f"cannot lock {what} ({path}): {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            os.close(fd)
            raise UserError(
                f"{what} is being written by another passhat process{f' (pid {holder})' if holder.isdigit() else ''}: "
                "one process writes a run at a time; wait for it to finish (or stop it), then try again."
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)  # who holds it, for the message above
        return cls(fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor releases the flock
            self._fd = None


def _write_half(f: BinaryIO, raw: bytes) -> None:
    f.write(raw[: len(raw) // 2])
    f.flush()


def _mode_for(path: Path) -> int:
    """The permissions the file keeps (if it exists) or would get from a plain open() under the umask."""
    with contextlib.suppress(OSError):
        return stat.S_IMODE(path.stat().st_mode)
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o666 & ~umask


def _sync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (where the platform allows opening a folder)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
