"""The response cache: a SQLite file of model answers keyed by everything that shapes them.

The key covers the model, the sampling parameters (temperature, the trial's seed, max tokens), the
messages and the tool schemas. It never covers the endpoint's address or key, and the file holds
only answers, with known secrets redacted (an endpoint may echo its key), so it carries no secret.
Each trial sends its own seed, so trials that open with the same words still get their own answers:
a rerun reproduces every trajectory without making a call.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from passhat.errors import UserError
from passhat.llm.model import Completion, Message, ModelRef, Sampling, ToolSchema

SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, response TEXT NOT NULL)"


def cache_key(model: ModelRef, sampling: Sampling, messages: list[Message], tools: list[ToolSchema]) -> str:
    material: dict[str, Any] = {"model": str(model), "sampling": sampling.__dict__, "messages": messages, "tools": tools}
    text = json.dumps(material, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()  # any text has a key, even lone surrogates


class ResponseCache:
    def __init__(self, path: Path):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(path, isolation_level=None, timeout=30.0)
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise UserError(f"cannot use {path} as the response cache (--cache): {exc}.") from None

    def get(self, key: str) -> Completion | None:
        row = self._conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return Completion.from_json(json.loads(row[0])) if row else None

    def put(self, key: str, completion: Completion) -> None:
        self._conn.execute(
            "INSERT OR IGNORE INTO responses (key, response) VALUES (?, ?)", (key, json.dumps(completion.to_json()))
        )

    def close(self) -> None:
        self._conn.close()
