"""`passhat certify` and `passhat verify`: a signed acceptance record pins what a run evaluated and states its figures
as `passhat report --json` does; verify re-derives all of it and names each task file, stored trial or figure that
changed. `passhat compare` refuses runs or records of different suites or simulators unless --force."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from passhat.certify.signing import sign
from passhat.cli import main

AUDIT_KEY = "certify-test-audit-key-0123456789abcdef"
RUN = "r"


def invoke(*args: object, key: str = AUDIT_KEY) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], env={"PASSHAT_AUDIT_KEY": key})


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small domain folder (passhat new-domain) and a run of it by the perfect reference agent: every trial passes."""
    root = tmp_path_factory.mktemp("certify")
    assert invoke("new-domain", "shop2", "--path", root).exit_code == 0
    ran = invoke("run", "--domain", root / "shop2", "--agent", "reference:perfect", "--personas", "baseline,impatient",
                 "--trials", "2", "--workers", "1", "--out", root / "runs", "--run-id", RUN)  # fmt: skip
    assert ran.exit_code == 0, ran.output
    return root


@pytest.fixture
def place(made: Path, tmp_path: Path) -> Path:
    """A copy of the domain and run that a test may change (the run names its domain by its absolute path: the copy
    keeps that path by living where the original's domain is named from)."""
    shutil.copytree(made / "runs", tmp_path / "runs")
    return tmp_path


def certify(place: Path, *args: object) -> Result:
    return invoke("certify", RUN, "-o", place / "cert.json", "--out", place / "runs", *args)


def verify(place: Path, *args: object, key: str = AUDIT_KEY) -> Result:
    return invoke("verify", place / "cert.json", "--out", place / "runs", *args, key=key)


def test_the_record_states_what_was_evaluated_and_the_json_reports_figures(place):
    assert certify(place).exit_code == 0
    assert invoke("report", RUN, "--out", place / "runs", "--gate", "k=2,min=0.9", "--json", place / "report.json").exit_code == 0
    record = json.loads((place / "cert.json").read_text())["record"]
    report = json.loads((place / "report.json").read_text())
    assert record["figures"] == report["metrics"]
    assert record["gate"] == report["gate"] and record["gate"]["meets"] is True
    assert record["agent"]["reference"] == "reference:perfect"
    assert record["agent"]["digest"]["kind"] == "passhat reference agent"
    assert set(record["tasks"]["each"]) == set(report["config"]["tasks"])
    assert record["tasks"]["fingerprint"] == report["config"]["tasks_fingerprint"]
    assert set(record["simulator"]["personas"]) == {"baseline", "impatient"} and record["simulator"]["user"] == "scripted"
    assert (record["seed"], record["mode"], record["faults"]) == (0, "strict", {})
    assert record["trials"]["count"] == len(report["config"]["tasks"]) * 2 * 2


def test_an_untouched_record_verifies(place):
    certify(place)
    result = verify(place)
    assert result.exit_code == 0, result.output
    assert "VERIFIED" in result.output and "NOT VERIFIED" not in result.output


def test_an_edited_figure_breaks_the_seal_and_is_named(place):
    certify(place)
    document = json.loads((place / "cert.json").read_text())
    document["record"]["figures"]["avg_reward"] = 0.5
    (place / "cert.json").write_text(json.dumps(document))
    result = verify(place)
    assert result.exit_code == 1
    assert "NOT VERIFIED" in result.output and "seal does not match" in result.output
    assert "figure avg_reward: certified 0.5, re-derived 1.0" in result.output


def test_a_figure_signed_wrong_is_named_though_the_signature_holds(place, monkeypatch):
    monkeypatch.setenv("PASSHAT_AUDIT_KEY", AUDIT_KEY)
    certify(place)
    document = json.loads((place / "cert.json").read_text())
    record = {**document["record"], "figures": {**document["record"]["figures"], "avg_reward": 0.75}}
    (place / "cert.json").write_text(json.dumps({"record": record, "signature": sign(record, None)}))
    result = verify(place)
    assert result.exit_code == 1 and "seal" not in result.output
    assert "figure avg_reward: certified 0.75, re-derived 1.0" in result.output


def test_a_changed_stored_trial_is_named_with_the_figures_it_moved(place):
    certify(place)
    with sqlite3.connect(place / "runs" / RUN / "results.sqlite") as db:
        task, persona, trial = db.execute("SELECT task_id, persona, trial FROM trials ORDER BY 1, 2, 3").fetchone()
        db.execute("UPDATE trials SET reward = 0, signature = 'no_write' WHERE task_id = ? AND persona = ? AND trial = ?",
                   (task, persona, trial))  # fmt: skip
    result = verify(place)
    assert result.exit_code == 1, result.output
    assert f"stored trial {task}/{persona}/{trial} changed" in result.output
    assert "figure avg_reward: certified 1.0" in result.output


def test_a_changed_task_file_is_named(made, place):
    certify(place)
    task_file = made / "shop2" / "tasks" / "booking-status.yaml"
    original = task_file.read_text()
    try:
        task_file.write_text(original.replace("summary: ", "summary: Edited. ", 1))
        assert task_file.read_text() != original
        # a process of its own: this one holds the domain as first loaded, as every passhat process does
        command = [sys.executable, "-m", "passhat.cli", "verify", place / "cert.json", "--out", place / "runs"]
        env = {**os.environ, "PASSHAT_AUDIT_KEY": AUDIT_KEY, "PYTHONPATH": os.pathsep.join(sys.path)}
        result = subprocess.run(command, capture_output=True, text=True, env=env)
    finally:
        task_file.write_text(original)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"task file {task_file} changed since it was certified" in result.stdout


def test_a_run_that_misses_its_gate_gets_no_record(place):
    result = certify(place, "--gate", "k=2,min=1.5")
    assert result.exit_code == 2  # min above 1 is no gate
    result = invoke("certify", RUN, "-o", place / "cert.json", "--out", place / "runs", "--gate", "k=2,min=0.9,persona=nobody")
    assert result.exit_code == 2 and "nobody" in result.output
    with sqlite3.connect(place / "runs" / RUN / "results.sqlite") as db:
        db.execute("UPDATE trials SET reward = 0, signature = 'no_write'")
    refused = certify(place)
    assert refused.exit_code == 1 and "DOES NOT MEET THE BAR" in refused.output
    assert not (place / "cert.json").exists()


def test_another_audit_key_does_not_verify(place):
    certify(place)
    result = verify(place, key="another-audit-key-of-at-least-32-characters")
    assert result.exit_code == 1 and "sealed with audit key" in result.output


def ed25519_pair(folder: Path) -> tuple[Path, Path]:
    private = Ed25519PrivateKey.generate()
    secret, public = folder / "signing.pem", folder / "public.pem"
    secret.write_bytes(private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                             serialization.NoEncryption()))  # fmt: skip
    public.write_bytes(
        private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    return secret, public


def test_an_ed25519_record_verifies_with_the_public_key_alone(place):
    secret, public = ed25519_pair(place)
    assert certify(place, "--key", secret).exit_code == 0
    assert json.loads((place / "cert.json").read_text())["signature"]["algorithm"] == "ed25519"
    assert verify(place, "--key", public, key="").exit_code == 0
    _, other = ed25519_pair(place / "runs")
    wrong = verify(place, "--key", other)
    assert wrong.exit_code == 1 and "Ed25519 signature does not match" in wrong.output
    needs_key = verify(place)
    assert needs_key.exit_code == 2 and "--key" in needs_key.output


@pytest.mark.parametrize(
    "content,said",
    [("{not json", "is not JSON"), ("[]", "is not an acceptance record"), ('{"record": {"kind": "passhat acceptance record"}, '
     '"signature": {}}', "run_id or gate")],
)  # fmt: skip
def test_a_file_that_is_no_record_is_a_user_error(place, content, said):
    (place / "cert.json").write_text(content)
    result = verify(place)
    assert result.exit_code == 2 and said in result.output and "Traceback" not in result.output


def test_a_pem_that_is_no_ed25519_key_is_a_user_error(place):
    (place / "bad.pem").write_text("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
    result = certify(place, "--key", place / "bad.pem")
    assert result.exit_code == 2 and "bad.pem" in result.output


# --- compare refuses different suites and simulators ----------------------------------------------------------------


def _config_edit(run: Path, **changes: object) -> None:
    with sqlite3.connect(run / "results.sqlite") as db:
        config = json.loads(db.execute("SELECT config FROM run").fetchone()[0])
        db.execute("UPDATE run SET config = ?", (json.dumps({**config, **changes}),))


def test_compare_refuses_another_simulator_unless_forced(place):
    shutil.copytree(place / "runs" / RUN, place / "runs" / "other")
    _config_edit(place / "runs" / "other", user="llm:openai/gpt-test")
    refused = invoke("compare", RUN, "other", "--out", place / "runs")
    assert refused.exit_code == 2 and "customer simulator" in refused.output and "--force" in refused.output
    forced = invoke("compare", RUN, "other", "--out", place / "runs", "--force")
    assert forced.exit_code == 0, forced.output


def test_compare_refuses_another_task_set_and_names_the_task(place):
    shutil.copytree(place / "runs" / RUN, place / "runs" / "other")
    _config_edit(place / "runs" / "other", tasks_fingerprint="0" * 16)
    refused = invoke("compare", RUN, "other", "--out", place / "runs")
    assert refused.exit_code == 2 and "task set" in refused.output


def test_compare_of_records_names_the_task_that_differs(place):
    certify(place)
    document = json.loads((place / "cert.json").read_text())
    task = sorted(document["record"]["tasks"]["each"])[0]
    document["record"]["tasks"]["each"][task] = "0" * 64
    (place / "other.json").write_text(json.dumps(document))
    refused = invoke("compare", place / "cert.json", place / "other.json", "--out", place / "runs")
    assert refused.exit_code == 2 and task in refused.output
    same = invoke("compare", place / "cert.json", place / "cert.json", "--out", place / "runs")
    assert same.exit_code == 0, same.output
