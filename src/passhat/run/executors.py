"""Where a run's trials execute: ``local`` (this process, or ``--workers`` processes on this machine) or ``ray``
(Ray actors on a cluster, ``passhat.run.ray_executor``).

Kept apart from the executors themselves, and free of heavy imports, so that the command line can offer the
choice and check it (before a run's folder is made) without loading the run machinery or Ray.
"""

from __future__ import annotations

import importlib.util
from typing import Literal, get_args

from passhat.errors import UserError

Executor = Literal["local", "ray"]
EXECUTORS: tuple[Executor, ...] = get_args(Executor)


def check_executor(executor: Executor, ray_address: str | None) -> None:
    """Refuse (UserError) --ray-address without --executor ray, and --executor ray without Ray installed."""
    if ray_address is not None and executor != "ray":
        raise UserError(
            f"--ray-address {ray_address} names a Ray cluster, but the trials run with --executor {executor}; "
            "add --executor ray, or drop --ray-address."
        )
    if ray_address is not None and not ray_address.strip():
        raise UserError("--ray-address is empty; give the cluster's address (host:port), or drop it to start a local Ray.")
    if executor == "ray" and importlib.util.find_spec("ray") is None:
        raise UserError("--executor ray needs Ray, which is not installed: pip install 'passhat[ray]'.")
