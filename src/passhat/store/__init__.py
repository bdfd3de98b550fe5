"""The results database: one SQLite store per run directory."""

from passhat.store.results import (
    STORE_FILE,
    DuplicateTrialError,
    EncodedTrial,
    ResultStore,
    RunEntry,
    TrialRecord,
    list_runs,
)

__all__ = ["STORE_FILE", "DuplicateTrialError", "EncodedTrial", "ResultStore", "RunEntry", "TrialRecord", "list_runs"]
