"""Signing an acceptance record, and checking its signature.

By default a record is sealed like an audit entry: HMAC-SHA256 under the user's audit key (``PASSHAT_AUDIT_KEY``
or the key file passhat keeps), over the record's canonical JSON. Whoever checks it needs that same key: it
proves the record to the team that holds the key. With ``--key PEM`` it is signed with an Ed25519 private key
instead, and checked with the public key alone, so anyone can be handed the public key and check the record;
that needs the ``cryptography`` package (``pip install 'passhat[sign]'``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from pathlib import Path
from typing import Any, Literal

from passhat.errors import UserError
from passhat.guard.audit import canonical, how_to_provide_key, load_key, signing_key

Algorithm = Literal["hmac-sha256", "ed25519"]
ALGORITHMS: tuple[Algorithm, ...] = ("hmac-sha256", "ed25519")
MAX_PEM_BYTES = 64 * 1024  # a PEM key is a few hundred bytes; anything far larger is not one


def sign(record: dict[str, Any], pem: Path | None) -> dict[str, Any]:
    """The record's signature: HMAC under the audit key, or Ed25519 under the private key in ``pem``."""
    if pem is None:
        key = signing_key()
        return {"algorithm": "hmac-sha256", "key_id": key.id, "value": key.seal(record)}
    private = _private_key(pem)
    public = private.public_key()
    return {
        "algorithm": "ed25519",
        "key_id": _public_id(public),
        "value": base64.b64encode(private.sign(canonical(record))).decode(),
    }


def signature_problem(record: dict[str, Any], signature: dict[str, Any], pem: Path | None) -> str | None:
    """Why the signature does not prove the record (None: it does). A check that cannot be made at all (no key,
    the wrong kind of key) is a UserError: there is nothing to answer yet."""
    algorithm = signature.get("algorithm")
    value = signature.get("value")
    if algorithm not in ALGORITHMS or not isinstance(value, str):
        return f"the signature is not one passhat makes (algorithm {algorithm!r}; passhat signs with {' or '.join(ALGORITHMS)})"
    if algorithm == "hmac-sha256":
        return _hmac_problem(record, signature.get("key_id"), value, pem)
    if pem is None:
        raise UserError("the record is signed with an Ed25519 key: pass --key with its public key (PEM) to check it.")
    return _ed25519_problem(record, value, _public_key(pem))


def _hmac_problem(record: dict[str, Any], key_id: object, value: str, pem: Path | None) -> str | None:
    if pem is not None:
        raise UserError(f"--key {pem}: the record is sealed with an audit key (HMAC), not an Ed25519 key; leave --key out.")
    key = load_key(create=False)
    if key is None:
        raise UserError(f"no audit key is available to check the record's seal (key {key_id}); {how_to_provide_key()}.")
    if key.id != key_id:
        return f"the record is sealed with audit key {key_id!r}, the key in {key.source} is {key.id!r}"
    if not hmac.compare_digest(key.seal(record), value):
        return f"its seal does not match the record under audit key {key.id} (the record was edited after it was signed)"
    return None


def _ed25519_problem(record: dict[str, Any], value: str, public: Any) -> str | None:
    from cryptography.exceptions import InvalidSignature

    try:
        public.verify(base64.b64decode(value, validate=True), canonical(record))
    except (InvalidSignature, binascii.Error, ValueError):
        return f"its Ed25519 signature does not match the record under public key {_public_id(public)}"
    return None


def _public_id(public: Any) -> str:
    from cryptography.hazmat.primitives import serialization

    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def _crypto() -> Any:
    try:
        from cryptography.hazmat.primitives import serialization
    except ImportError:
        raise UserError("--key needs the cryptography package: pip install 'passhat[sign]'.") from None
    return serialization


def _pem(path: Path) -> bytes:
    try:
        with path.open("rb") as file:
            data = file.read(MAX_PEM_BYTES + 1)
    except OSError as exc:
        raise UserError(f"cannot read the key file {path} (--key): {exc.strerror or exc}.") from None
    if len(data) > MAX_PEM_BYTES or b"-----BEGIN" not in data:
        raise UserError(f"--key {path} is not a PEM key file (one that starts with -----BEGIN).")
    return data


def _private_key(path: Path) -> Any:
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    try:
        key = serialization.load_pem_private_key(_pem(path), password=None)
    except (ValueError, TypeError) as exc:
        raise UserError(f"--key {path} holds no unencrypted private key passhat can read ({exc}).") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise UserError(f"--key {path} is a {type(key).__name__.removesuffix('PrivateKey') or 'other'} key; passhat signs with Ed25519 (openssl genpkey -algorithm ed25519).")  # fmt: skip
    return key


def _public_key(path: Path) -> Any:
    """The public key in ``path``, or the public half of the private key there."""
    serialization = _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

    data = _pem(path)
    try:
        key: Any = serialization.load_pem_public_key(data)
    except ValueError:
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise UserError(f"--key {path} holds no public or unencrypted private key passhat can read ({exc}).") from None
    if isinstance(key, Ed25519PrivateKey):
        key = key.public_key()
    if not isinstance(key, Ed25519PublicKey):
        raise UserError(f"--key {path} is not an Ed25519 key; the record is signed with Ed25519.")
    return key
