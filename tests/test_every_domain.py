"""Every domain gets the whole engine: a run under every fault class and every guard judges all its trials,
the MCP server serves its tools, and neither faults, guards nor servers hold a line of code for any one domain.

And every domain but retail (proved by tests/test_tasks.py and tests/test_reference_agents.py) is proved the same
way: every case of every task holds under check and the near misses are really tried; the perfect reference agent
passes every task under every persona, the hasty one fails a measurable share and the flaky one some; the backend
is generated the same from the same seed; the domain imports only the public contract and speaks none of retail's
words. What differs per domain (the signatures its near misses reach, its row counts, ...) is data in PROOFS;
each domain's own file keeps only what is specific to its world.

Parametrized over the built-in domains and the library test domain (a folder), so a domain added to the
registry is held to this without a test of its own."""

from __future__ import annotations

import ast
import asyncio
import collections
import contextlib
import dataclasses
import functools
import json
import re
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client

import passhat
from passhat.agents import resolve_agent
from passhat.agents.mcp_wire import listening_socket
from passhat.cli import main
from passhat.customers import resolve_user
from passhat.customers.personas import PERSONAS
from passhat.domains import BUILT_IN, load_domain
from passhat.domains.model import Domain
from passhat.env import tool_registry
from passhat.faults import FAULT_CLASSES
from passhat.grade.check import CaseResult, check_task
from passhat.run.seeding import trial_seed
from passhat.run.trial import TrialOutput, TrialSpec, run_trial
from passhat.serve import McpDomainServer
from passhat.serve.mcp_server import endpoint

LIBRARY = str(Path(__file__).parent / "domains" / "library")
DOMAINS = [*BUILT_IN, LIBRARY]
ENGINE_PARTS = ("faults", "guard", "serve")
EVERY_FAULT = ",".join(f"{name}=0.05" for name in FAULT_CLASSES)


def _short(domain: str) -> str:
    return Path(domain).name


NEAR_MISSES = (
    "wrong_entity_write",
    "wrong_arguments",
    "extra_write",
    "no_write",
    "partial_resolution",
    "unconfirmed_write",
    "policy_violation",
    "missing_output",
    "duplicate_write",
    "privacy_violation",
    "policy_disclosure",
)
# What the flaky profile's slips earn in strict mode: a near miss made after a yes to the right proposal
# (unconfirmed_write), a forbidden request carried out (policy_violation), a fact mis-stated or left out
# (missing_output), an allowed request declined or a needless referral, and an early goodbye.
FLAKY_SIGNATURES = frozenset(
    {"unconfirmed_write", "policy_violation", "missing_output", "no_write", "partial_resolution", "closed_unresolved"}
)
RETAIL_WORDS = re.compile(r"\b(?:retail|shop(?:per)?s?|products?|items?|zip codes?|orders?)\b(?! by)|#R\d{7}", re.I)
# What a domain may import of passhat: the contract, the task-file loader and the dialogue helpers.
PUBLIC_CONTRACT = (
    "passhat.domains.model",
    "passhat.domains.kit",
    "passhat.domains.toolkit",
    "passhat.domains.facts",
    "passhat.domains.injection",
    "passhat.dialogue",
)


@dataclasses.dataclass(frozen=True)
class Proof:
    """What one domain is held to where the generic proofs differ between domains."""

    near_misses: tuple[str, ...]  # the signatures its near misses and perturbations must reach
    one_pass_per_case: bool  # every task has exactly one ground truth (no second acceptable outcome)
    rows: dict[str, int]  # table -> fewest rows the seeded backend holds
    seed: int  # the run seed of its reference trials
    perfect_trials: int  # trials of each task under each persona the perfect agent passes
    hasty_signatures: tuple[str, ...]  # signatures among the hasty agent's failures
    flaky_trials: int
    flaky_most: float  # the flaky agent's failures stay under this share of its passes
    flaky_signatures: frozenset[str] | None  # what its failures may be (None: any)
    flaky_kinds: int  # how many different signatures its failures show at least
    files: frozenset[str]  # the modules the package must have
    contract: tuple[str, ...]  # the passhat modules it may import
    retail_words: re.Pattern[str] | None  # the words it must never say (None: its world shares some)
    lookup: str = ""  # the tool that finds the customer by the number they give


BUILT_IN_PROOF = Proof(
    near_misses=NEAR_MISSES,
    one_pass_per_case=True,
    rows={},
    seed=13,
    perfect_trials=1,
    hasty_signatures=("unconfirmed_write",),
    flaky_trials=2,
    flaky_most=1 / 4,
    flaky_signatures=FLAKY_SIGNATURES,
    flaky_kinds=1,
    files=frozenset(),
    contract=PUBLIC_CONTRACT,
    retail_words=RETAIL_WORDS,
)
PROOFS = {
    "payables": dataclasses.replace(
        BUILT_IN_PROOF,
        lookup="find_clerk",
        rows={"invoices": 80, "clerks": 20, "ledger": 100},
        hasty_signatures=(),
        flaky_most=1 / 2,
        flaky_signatures=None,
        files=frozenset({"__init__.py", "tools.py", "rules.py", "kit.py", "facts.py", "conversation.py"}),
        retail_words=None,
    ),
    "helpdesk": dataclasses.replace(
        BUILT_IN_PROOF,
        lookup="find_employee",
        near_misses=(*NEAR_MISSES, "out_of_order"),
        one_pass_per_case=False,
        rows={"employees": 60, "incidents": 60, "changes": 10},
        hasty_signatures=("unconfirmed_write", "no_write"),
        retail_words=None,
    ),
    "benefits": dataclasses.replace(
        BUILT_IN_PROOF,
        lookup="find_member",
        rows={"members": 50, "charges": 50, "memberships": 50},
        contract=(*PUBLIC_CONTRACT, "passhat.domains.payments"),
        # its mis-stated refund ("refund $51.88" of a $46.25 refund) is false of the charge it names, and the truth
        # grader reads it there now that the adjustment keyed by the charge's id no longer hides the charge
        flaky_signatures=FLAKY_SIGNATURES | {"misinformed"},
        retail_words=re.compile(
            r"\b(?:retail|shop(?:per)?s?|products?|zip codes?|orders?)\b(?! by)|(?<!\.)\bitems?\b(?!\()|#R\d{7}", re.I
        ),
    ),
    "intake": dataclasses.replace(
        BUILT_IN_PROOF,
        lookup="find_caller",
        rows={"people": 40, "appointments": 30, "links": 15},
        seed=5,
        hasty_signatures=("unconfirmed_write", "closed_unresolved"),
        flaky_signatures=None,
    ),
    "library": dataclasses.replace(
        BUILT_IN_PROOF,
        lookup="find_member",
        rows={"members": 30, "loans": 30, "holds": 10},
        seed=5,
        perfect_trials=3,
        hasty_signatures=(),
        flaky_trials=3,
        flaky_kinds=3,
        files=frozenset({"domain.py", "tools.py", "rules.py", "kit.py", "facts.py"}),
    ),
}
PROVED = [d for d in DOMAINS if _short(d) in PROOFS]


@pytest.mark.parametrize("domain", DOMAINS, ids=_short)
def test_a_run_under_every_fault_class_and_every_guard_judges_every_trial(domain: str, tmp_path: Path) -> None:
    tasks = load_domain(domain).tasks
    report_path = tmp_path / "report.json"
    args = ["run", "--domain", domain, "--agent", "reference:flaky", "--personas", "baseline,incoherent", "--trials", "1"]
    args += ["--faults", EVERY_FAULT, "--guard", "all", "--workers", "1", "--out", str(tmp_path), "--json", str(report_path)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output  # a verdict, not an error
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["stored_trials"] == 2 * len(tasks)
    assert report["metrics"]["infra_errors"] == 0, report.get("infra_error_example")
    assert report["metrics"]["user_simulator_errors"] == 0


@pytest.mark.parametrize("domain", DOMAINS, ids=_short)
def test_the_mcp_server_serves_every_tool_of_the_domain(domain: str) -> None:
    loaded = load_domain(domain)
    expected = set(tool_registry(loaded))

    async def session(url: str) -> set[str]:
        async with Client(url) as client:
            return {t.name for t in (await client.list_tools()).tools}

    with _serving(loaded) as url:
        assert anyio.run(session, url) == expected


def test_faults_guards_and_servers_import_no_domain() -> None:
    """What they know of a domain comes through the contract (passhat.domains.model and friends), never a
    domain's own package."""
    package = Path(passhat.__file__).parent
    offences = [
        f"{path.relative_to(package)} imports {name}"
        for part in ENGINE_PARTS
        for path in sorted((package / part).rglob("*.py"))
        for name in _imports(path)
        if any(name == f"passhat.domains.{d}" or name.startswith(f"passhat.domains.{d}.") for d in BUILT_IN)
    ]
    assert not offences


def _imports(path: Path, absolute_only: bool = False) -> list[str]:
    """The modules a file imports, and each name imported from one (``absolute_only``: just the absolute modules,
    as relative imports stay inside a domain's own package)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and absolute_only:
            found += [node.module] if node.level == 0 else []
        elif isinstance(node, ast.ImportFrom) and node.module:
            found += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return found


@contextlib.contextmanager
def _serving(domain: passhat.domains.model.Domain) -> Iterator[str]:
    server = McpDomainServer(domain)
    sock = listening_socket("127.0.0.1", 0)
    thread = threading.Thread(target=anyio.run, args=(server.serve_http, sock))
    thread.start()
    try:
        yield endpoint(sock)
    finally:
        server.stop()
        thread.join()


# -- every domain but retail, proved the same way ----------------------------------------------------------


@functools.cache
def _domain(domain: str) -> Domain:
    return load_domain(domain)


@functools.cache
def _checked(domain: str) -> dict[str, list[CaseResult]]:
    """Every task's check results, computed once for both proofs that read them."""
    loaded = _domain(domain)
    return {task.id: check_task(loaded, task) for task in loaded.tasks.values()}


@functools.cache
def _trials(domain: str, agent: str, persona: str, trials: int) -> tuple[tuple[str, int, TrialOutput], ...]:
    """(task id, trial, output) of each trial of every task under one persona, against the scripted customer: played
    once in one event loop, and shared by the proofs that read the same trials."""
    loaded, seed = _domain(domain), PROOFS[_short(domain)].seed

    async def play() -> list[tuple[str, int, TrialOutput]]:
        played = []
        for task in loaded.tasks.values():
            for n in range(trials):
                spec = TrialSpec(task, PERSONAS[persona], n, trial_seed(seed, task.id, persona, n))
                played.append((task.id, n, await run_trial(loaded, spec, resolve_agent(agent), resolve_user("scripted"))))
        return played

    return tuple(asyncio.run(play()))


def _signatures(domain: str, agent: str, trials: int) -> collections.Counter[str | None]:
    """The failure signature of each trial of every task under every persona (None: passed)."""
    return collections.Counter(out.grade.signature for p in PERSONAS for _, _, out in _trials(domain, agent, p, trials))


@pytest.mark.parametrize("domain", PROVED, ids=_short)
def test_every_case_of_every_task_holds(domain: str) -> None:
    broken = [
        (task_id, r.case.label, r.case.expect, r.grade.reward, r.grade.signature)
        for task_id, rs in _checked(domain).items()
        for r in rs
        if not r.holds
    ]
    assert broken == []


@pytest.mark.parametrize("domain", PROVED, ids=_short)
def test_the_near_misses_and_perturbations_are_really_tried(domain: str) -> None:
    """Guards against a check that holds only because the domain offered no near miss the backend accepts."""
    proof = PROOFS[_short(domain)]
    applied = collections.Counter(r.case.expect for rs in _checked(domain).values() for r in rs if r.applied)
    assert [s for s in proof.near_misses if not applied[s]] == []
    if proof.one_pass_per_case:
        assert applied[None] == 2 * len(_domain(domain).tasks)  # ground truth, strict and tau


@pytest.mark.parametrize("persona", list(PERSONAS))
@pytest.mark.parametrize("domain", PROVED, ids=_short)
def test_the_perfect_agent_passes_every_task_under_every_persona(domain: str, persona: str) -> None:
    played = _trials(domain, "reference:perfect", persona, PROOFS[_short(domain)].perfect_trials)
    failed = {(task_id, n): (out.grade.signature, out.grade.details) for task_id, n, out in played if out.grade.reward != 1}
    assert failed == {}


@pytest.mark.parametrize("domain", PROVED, ids=_short)
def test_the_incoherent_customers_slips_are_made_and_recovered_from(domain: str) -> None:
    """Over the perfect agent's trials, the incoherent customer both misreads a digit of their number (the lookup
    finds nobody, then the corrected number is found) and gives the number alone (the agent asks again)."""
    proof = PROOFS[_short(domain)]
    typo = number_only = 0
    for _, _, out in _trials(domain, "reference:perfect", "incoherent", proof.perfect_trials):
        lookups = [e.result["status"] for e in out.events if e.kind == "tool" and e.name == proof.lookup]
        typo += lookups == ["not_found", "ok"]
        number_only += any(e.kind == "agent" and e.text == _domain(domain).kit.ask_identity_again for e in out.events)
    assert typo and number_only, (typo, number_only)


@pytest.mark.parametrize("domain", PROVED, ids=_short)
def test_the_hasty_agent_fails_a_measurable_share(domain: str) -> None:
    """It writes without asking and stops after the first goal: every task with a confirmed write or a second goal."""
    signatures = _signatures(domain, "reference:hasty", 1)
    assert signatures.total() - signatures[None] >= 0.2 * signatures.total(), signatures
    assert all(signatures[s] for s in PROOFS[_short(domain)].hasty_signatures), signatures


@pytest.mark.parametrize("domain", PROVED, ids=_short)
def test_the_flaky_agent_fails_some_trials_in_the_ways_its_profile_makes(domain: str) -> None:
    proof = PROOFS[_short(domain)]
    signatures = _signatures(domain, "reference:flaky", proof.flaky_trials)
    failures = {s: n for s, n in signatures.items() if s is not None}
    assert 0 < sum(failures.values()) < signatures[None] * proof.flaky_most, signatures
    assert proof.flaky_signatures is None or set(failures) <= proof.flaky_signatures, signatures
    assert len(failures) >= proof.flaky_kinds, signatures
    if proof.flaky_kinds > 1:
        assert failures.get("unconfirmed_write"), signatures


@pytest.mark.parametrize("domain", PROVED, ids=_short)
def test_the_backend_is_generated_the_same_from_the_same_seed(domain: str) -> None:
    loaded = _domain(domain)

    def dump() -> list[str]:
        db = sqlite3.connect(":memory:")
        db.executescript(loaded.schema_sql)
        loaded.generate(db, loaded.data_seed)
        return list(db.iterdump())

    first = dump()
    assert first == dump()
    counts = collections.Counter(line.split('"')[1] for line in first if line.startswith("INSERT"))
    assert {t: counts[t] for t, least in PROOFS[_short(domain)].rows.items() if counts[t] < least} == {}, counts


def _folder(domain: str) -> Path:
    return Path(domain) if Path(domain).is_dir() else Path(passhat.__file__).parent / "domains" / domain


@pytest.mark.parametrize("domain", PROVED, ids=_short)
def test_the_domain_imports_only_the_public_contract_and_nothing_of_retail(domain: str) -> None:
    proof = PROOFS[_short(domain)]
    sources = sorted(_folder(domain).glob("*.py"))
    assert {p.name for p in sources} >= proof.files
    absolute = {(p.name, m) for p in sources for m in _imports(p, absolute_only=True) if m.split(".")[0] == "passhat"}
    assert not [m for _, m in absolute if m.startswith("passhat.domains.retail")]
    assert [(f, m) for f, m in absolute if m != "passhat.domains" and not m.startswith(proof.contract)] == []


@pytest.mark.parametrize("domain", [d for d in PROVED if PROOFS[_short(d)].retail_words], ids=_short)
def test_the_domain_speaks_none_of_retails_vocabulary(domain: str) -> None:
    words = PROOFS[_short(domain)].retail_words
    assert words is not None
    folder = _folder(domain)
    files = [p for p in folder.rglob("*") if p.is_file() and p.suffix in (".py", ".sql", ".md", ".yaml")]
    said = {p.relative_to(folder).as_posix(): words.findall(p.read_text(encoding="utf-8")) for p in files}
    assert {f: found for f, found in said.items() if found} == {}
