"""Faults between the agent and the tools, for one trial, drawn from the trial's own seed.

The injector draws one number per tool call from a ``random.Random`` derived from the trial seed and
nothing else, so a fault plan never shifts the customer's or the agent's randomness, and the same
seed injects the same faults. Each injection comes back as a ``fault`` record for the call's event:
the class, and what the backend really returned (``actual``; None when the call never ran).
"""

from __future__ import annotations

import dataclasses
import json
import random
import sqlite3
from collections.abc import Callable
from typing import Any

from passhat.env import Execution, ToolRunner, ToolSpec
from passhat.env.tools import invoke, ok
from passhat.faults import kinds
from passhat.faults.plan import CALL_FAULTS, DATA_FAULTS, WRITE_FAULTS

Fault = dict[str, Any]


class FaultInjector:
    def __init__(self, plan: dict[str, float], seed: int, runner: ToolRunner):
        self._plan, self._runner = plan, runner
        self._rng = random.Random(f"passhat-faults|{seed}")
        self._reads: dict[str, dict[str, Any]] = {}  # each read's last true result, for contradictions
        self._before_last_write: bytes | None = None  # the backend image before the last write, for stale reads
        self._write_tools = sorted(name for name, spec in runner.tools.items() if spec.meta.write)

    def execute(self, name: str, args: Any, run: Callable[[], Execution]) -> tuple[Execution, Fault | None]:
        """Run the call through ``run`` (or not), and say what the agent gets back instead, if anything."""
        spec = self._runner.tools.get(name)
        if spec is None:
            return run(), None
        fault = self._draw(spec.meta.write)
        if fault in CALL_FAULTS:
            return Execution(name, args, kinds.call_error(fault, name)), {"class": fault, "actual": None}
        if spec.meta.write:
            return self._write(name, fault, run)
        ex = run()
        altered = self._alter(fault, spec, ex) if fault and ex.result["status"] == "ok" else None
        self._reads[_read_key(name, ex.args)] = ex.result
        if altered is None:
            return ex, None
        shown, extra = altered
        return dataclasses.replace(ex, result=shown), {"class": fault, "actual": ex.result, **extra}

    def _draw(self, write: bool) -> str | None:
        """One draw per call: the class whose slice of [0, 1) it falls in, among those that fit the call."""
        u, edge = self._rng.random(), 0.0
        for fault in CALL_FAULTS + (WRITE_FAULTS if write else DATA_FAULTS):
            edge += self._plan.get(fault, 0.0)
            if u < edge:
                return fault
        return None

    def _write(self, name: str, fault: str | None, run: Callable[[], Execution]) -> tuple[Execution, Fault | None]:
        snapshot = self._runner.db.serialize() if "stale_read" in self._plan else None
        ex = run()
        if ex.result["status"] != "ok":
            return ex, None
        if snapshot is not None:
            self._before_last_write = snapshot
        if fault == "lost_response":
            return dataclasses.replace(ex, result=kinds.call_error(fault, name)), {"class": fault, "actual": ex.result}
        return ex, None

    def _alter(self, fault: str, spec: ToolSpec, ex: Execution) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """What the agent is shown instead of a successful read's result, or None if the fault cannot apply."""
        data = ex.result["data"]
        if fault == "stale_read":
            stale = self._stale(spec, ex.args)
            return (stale, {}) if stale is not None and stale != ex.result else None
        if fault == "contradiction":
            if self._reads.get(_read_key(ex.name, ex.args)) != ex.result:
                return None  # only a repeated read of an unchanged record can contradict the first
            return _shown(kinds.wrong_value(data, self._rng))
        if fault == "wrong_value":
            return _shown(kinds.wrong_value(data, self._rng))
        if fault == "silent_empty":
            return _shown(kinds.silent_empty(data))
        if fault == "schema_drift":
            return _shown(kinds.schema_drift(data, self._rng))
        injected = kinds.injected_instruction(data, self._rng, self._write_tools, spec.meta.prose)
        return None if injected is None else (ok(injected[0]), {"instruction": injected[1]})

    def _stale(self, spec: ToolSpec, args: dict[str, Any]) -> dict[str, Any] | None:
        """The read as it would have answered before the last successful write."""
        if self._before_last_write is None:
            return None
        old = sqlite3.connect(":memory:")
        old.row_factory = self._runner.db.row_factory
        try:
            old.deserialize(self._before_last_write)
            return invoke(spec, old, args)
        finally:
            old.close()


def _shown(data: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    return None if data is None else (ok(data), {})


def _read_key(name: str, args: Any) -> str:
    return name + json.dumps(args, sort_keys=True, default=str)
