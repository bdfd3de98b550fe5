"""Per-trial seeds: a trial's randomness depends on what it is, never on when or where it ran."""

from __future__ import annotations

import hashlib


def trial_seed(run_seed: int, task_id: str, persona: str, trial: int) -> int:
    digest = hashlib.blake2b(f"{run_seed}|{task_id}|{persona}|{trial}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1  # fits a signed 64-bit SQLite integer
