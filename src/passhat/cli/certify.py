"""`passhat certify` (a signed acceptance record of a stored run) and `passhat verify` (check one)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from passhat.cli import main
from passhat.cli.common import InputFile, OutputFile, console, err, existing_run_dir, out_option, run_gate, shown
from passhat.errors import UserError
from passhat.file_writes import write_atomically
from passhat.run.stored import check_gate
from passhat.store import ResultStore

if TYPE_CHECKING:  # the metrics load numpy and scipy: not for `--help`
    from passhat.metrics.gate import Gate

MAX_RECORD_BYTES = 256 * 1024 * 1024  # a record holds a digest per trial: ~100 bytes each, for runs of millions
key_option = click.option(
    "--key",
    "pem",
    type=InputFile(),
    help="An Ed25519 key (PEM) instead of the audit key: certify signs with the private key, verify checks with the "
    "public (or private) one. Needs pip install 'passhat[sign]'.",
)


@main.command()
@click.argument("run_id")
@click.option("-o", "--output", required=True, type=OutputFile(regular_only=True), help="The record file to write (JSON).")
@click.option(
    "--gate",
    "gate_spec",
    metavar="SPEC",
    help='The gate the run is accepted under, "k=8,min=0.9[,persona=P]"; default: pass^k at k = the run\'s trials >= 0.9.',
)
@key_option
@out_option
def certify(run_id: str, output: Path, gate_spec: str | None, pem: Path | None, out: Path) -> None:
    """Write a signed acceptance record of a run that meets its gate: what was evaluated (digests of the agent,
    domain, tasks, simulator and every trial), how, and every figure of its report. Exit 1 (nothing written) when
    the gate is not met."""
    from passhat.certify.record import NotCertifiable, record_of
    from passhat.certify.signing import sign
    from passhat.metrics.gate import Gate
    from passhat.report.terminal_stats import print_gate
    from passhat.run_config import stored_config

    with ResultStore.open(existing_run_dir(out, run_id, "RUN_ID")) as store:
        config = stored_config(store)
        gate = run_gate(gate_spec, early_stop=False) or Gate(config.trials, 0.9)
        check_gate(gate, config, "--gate")
        try:
            record = record_of(store, gate, require_met=True)
        except NotCertifiable as refused:
            print_gate(refused.decision, console)
            err.print(f"no record written: run {run_id} is not accepted under the gate {gate}.", highlight=False, markup=False)
            sys.exit(1)
    _check_tasks_unchanged(record, run_id)
    document = {"record": record, "signature": sign(record, pem)}
    try:
        write_atomically(output, (json.dumps(document, indent=2), "\n"), window="report_write")
    except OSError as exc:
        raise UserError(f"cannot write the record to {output} (-o): {exc.strerror or exc}.") from None
    console.print(f"gate {gate}: MEETS THE BAR — {record['gate']['reason']}", highlight=False, markup=False)
    err.print(f"acceptance record of run {run_id} written to {output}", highlight=False, markup=False)


def _check_tasks_unchanged(record: dict[str, Any], run_id: str) -> None:
    """A record says which tasks passed: those the run ran, not files edited since."""
    tasks = record["tasks"]
    if tasks["fingerprint_at_run"] not in (None, tasks["fingerprint"]) or None in tasks["each"].values():
        raise UserError(
            f"run {shown(run_id)}'s task files changed since it ran (fingerprint {tasks['fingerprint_at_run']} then, "
            f"{tasks['fingerprint']} now): a record would pin tasks the run never ran; run the evaluation again."
        )


@main.command()
@click.argument("cert", type=InputFile())
@key_option
@out_option
def verify(cert: Path, pem: Path | None, out: Path) -> None:
    """Check an acceptance record: its signature, and every digest and figure re-derived from the stored run and
    the files as they are now. Exit 0 verified, 1 not verified (each difference named)."""
    from passhat.certify.record import differences, record_of
    from passhat.certify.signing import signature_problem
    from passhat.run_config import stored_config

    record, signature = read_record(cert)
    problems = [p for p in [signature_problem(record, signature, pem)] if p]
    with ResultStore.open(existing_run_dir(out, str(record["run_id"]), f"the run of {cert}")) as store:
        check_gate(record_gate(record), stored_config(store), f"the record {cert}")
        now = record_of(store, record_gate(record), require_met=False)
    problems.extend(differences(record, now))
    if record.get("passhat_version") != now["passhat_version"]:
        err.print(f"note: the record was made by passhat {record.get('passhat_version')}, this is {now['passhat_version']}.",
                  highlight=False, markup=False)  # fmt: skip
    if problems:
        console.print(f"NOT VERIFIED: {cert} (run {record['run_id']})", highlight=False, markup=False)
        for problem in problems:
            console.print(f"  - {problem}", highlight=False, markup=False, soft_wrap=True)
        sys.exit(1)
    console.print(
        f"VERIFIED: {cert}: run {record['run_id']}, signed {signature['algorithm']} by key {signature.get('key_id')}; "
        f"every digest and figure re-derived from the stored run matches; gate {record_gate(record)}: {record['gate']['reason']}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )


def read_record(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(record, signature) of an acceptance record file; anything else is a UserError naming the file and field."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_RECORD_BYTES + 1)
        if len(data) > MAX_RECORD_BYTES:
            raise UserError(f"{path} is over {MAX_RECORD_BYTES // 2**20} MiB: not an acceptance record passhat writes.")
        document = json.loads(data)
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}.") from None
    except (ValueError, RecursionError) as exc:
        raise UserError(f"{path} is not JSON ({exc}); give an acceptance record written by `passhat certify`.") from None
    record = document.get("record") if isinstance(document, dict) else None
    signature = document.get("signature") if isinstance(document, dict) else None
    from passhat.certify.record import KIND

    if not isinstance(record, dict) or record.get("kind") != KIND or not isinstance(signature, dict):
        raise UserError(f"{path} is not an acceptance record (no \"record\" of kind {KIND!r} and \"signature\"); "
                        "give a file written by `passhat certify`.")  # fmt: skip
    _check_fields(path, record)
    return record, signature


def _check_fields(path: Path, record: dict[str, Any]) -> None:
    """The fields verify reads before it can compare anything: their absence is a malformed file, not a difference."""
    from passhat.cli.common import checked_id

    gate = record.get("gate")
    if not isinstance(record.get("run_id"), str) or not isinstance(gate, dict):
        raise UserError(f"{path}: the record's run_id or gate is missing or malformed; the file is damaged.")
    checked_id(record["run_id"], f"record.run_id of {path}")
    k, minimum, persona = gate.get("k"), gate.get("min"), gate.get("persona")
    if (
        type(k) is not int
        or k < 1
        or type(minimum) not in (int, float)
        or not 0 <= minimum <= 1
        or not isinstance(persona, str | None)
    ):
        raise UserError(f"{path}: the record's gate (k, min, persona) is not a gate passhat writes; the file is damaged.")


def record_gate(record: dict[str, Any]) -> Gate:
    """The gate a record was certified under (read_record checked its fields)."""
    from passhat.metrics.gate import Gate

    gate = record["gate"]
    return Gate(gate["k"], float(gate["min"]), gate["persona"])
