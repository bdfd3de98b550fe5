"""`passhat export --format otel`: a trace per trial in the GenAI semantic conventions, as OTLP JSON that the
OpenTelemetry protocol's own message (opentelemetry-proto's ExportTraceServiceRequest) parses, and posted live to an
OTLP/HTTP receiver as protobuf."""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

from passhat.cli import main
from passhat.export import otel
from passhat.run.runner import execute
from passhat.run_config import RunConfig
from passhat.store import ResultStore, TrialRecord

TASKS, PERSONAS, TRIALS = ["retail-001", "retail-003"], ["baseline"], 2


@pytest.fixture(scope="module")
def flaky_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run whose trials call tools, pass some and fail others."""
    out = tmp_path_factory.mktemp("runs")
    config = RunConfig(agent="reference:flaky", personas=PERSONAS, tasks=TASKS, trials=TRIALS, seed=3)
    with ResultStore.create(out / "flaky", "flaky", config.model_dump()) as store:
        asyncio.run(execute(config, store, 4))
    return out


def export(out: Path, path: Path, run: str = "flaky", *flags: str) -> Any:
    return CliRunner().invoke(main, ["export", run, "--format", "otel", "-o", str(path), "--out", str(out), *flags])


def parsed(path: Path) -> list[ExportTraceServiceRequest]:
    """The file as the collector's OTLP JSON file receiver takes it: a request per line, in protobuf's JSON mapping,
    except that OTLP writes ids in hex where protobuf's mapping reads bytes as base64."""
    requests = []
    for line in path.read_text().splitlines():
        request = json.loads(line)
        for resource in request["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    for key in ("traceId", "spanId", "parentSpanId"):
                        if key in span:
                            span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
        requests.append(json_format.Parse(json.dumps(request), ExportTraceServiceRequest()))
    return requests


def spans(requests: list[ExportTraceServiceRequest]) -> list[Span]:
    return [
        span
        for request in requests
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]


def traces(requests: list[ExportTraceServiceRequest]) -> dict[bytes, list[Span]]:
    by_trace: dict[bytes, list[Span]] = {}
    for span in spans(requests):
        by_trace.setdefault(span.trace_id, []).append(span)
    return by_trace


def attributes(owner: Any) -> dict[str, Any]:
    """A span's or event's attributes as plain values (OTLP's AnyValue unwrapped)."""
    return {a.key: json_format.MessageToDict(a.value).popitem()[1] for a in owner.attributes}


def root_of(trace: list[Span]) -> Span:
    (root,) = [s for s in trace if not s.parent_span_id]
    return root


def stored(out: Path, run: str = "flaky") -> dict[str, TrialRecord]:
    with ResultStore.open(out / run) as store:
        return {f"{run}/{t.task_id}/{t.persona}/{t.trial}": t for t in store.trials()}


def test_each_trial_is_a_trace_whose_conversation_span_is_the_parent_of_every_other(flaky_run, tmp_path):
    result = export(flaky_run, tmp_path / "traces.json")
    assert result.exit_code == 0, result.output
    requests = parsed(tmp_path / "traces.json")
    trials = stored(flaky_run)
    by_trace = traces(requests)
    assert len(requests) == len(by_trace) == len(trials) == len(TASKS) * len(PERSONAS) * TRIALS  # a line per trial
    for trace in by_trace.values():
        root = root_of(trace)
        assert root.name == "invoke_agent reference:flaky" and attributes(root)["gen_ai.operation.name"] == "invoke_agent"
        assert {s.parent_span_id for s in trace if s is not root} == {root.span_id}
        assert len({s.span_id for s in trace}) == len(trace)
        trial = trials[attributes(root)["gen_ai.conversation.id"]]
        assert (root.start_time_unix_nano, root.end_time_unix_nano) == (round(trial.started * 1e9), round(trial.finished * 1e9))
        assert all(
            root.start_time_unix_nano <= s.start_time_unix_nano <= s.end_time_unix_nano <= root.end_time_unix_nano for s in trace
        )
    for request in requests:
        (resource,) = request.resource_spans
        assert attributes(resource.resource)["service.name"] == "passhat"
        assert attributes(resource.resource)["passhat.run_id"] == "flaky"
        assert resource.scope_spans[0].scope.name == "passhat"


def test_tool_calls_are_execute_tool_spans_with_the_arguments_and_the_result_the_agent_saw(flaky_run, tmp_path):
    export(flaky_run, tmp_path / "traces.json")
    trials = stored(flaky_run)
    for trace in traces(parsed(tmp_path / "traces.json")).values():
        trial = trials[attributes(root_of(trace))["gen_ai.conversation.id"]]
        calls = [e for e in trial.events if e["kind"] == "tool"]
        tools = sorted((s for s in trace if s.name.startswith("execute_tool")), key=lambda s: s.start_time_unix_nano)
        assert calls, "the trial should call tools"
        assert [s.name for s in tools] == [f"execute_tool {e['name']}" for e in calls]
        for span, call in zip(tools, calls, strict=True):
            seen = attributes(span)
            assert (seen["gen_ai.tool.name"], seen["gen_ai.tool.call.id"]) == (call["name"], call["call_id"])
            assert json.loads(seen["gen_ai.tool.call.arguments"]) == call["args"]
            assert json.loads(seen["gen_ai.tool.call.result"]) == call["result"]


def test_the_messages_and_the_grade_are_the_conversation_spans_events_and_status(flaky_run, tmp_path):
    export(flaky_run, tmp_path / "traces.json")
    trials = stored(flaky_run)
    rewards = set()
    for trace in traces(parsed(tmp_path / "traces.json")).values():
        root = root_of(trace)
        trial = trials[attributes(root)["gen_ai.conversation.id"]]
        said = [(e["kind"], e["text"]) for e in trial.events if e["kind"] in ("user", "agent")]
        kinds = {"gen_ai.user.message": "user", "gen_ai.assistant.message": "agent"}
        assert [(kinds[e.name], attributes(e)["content"]) for e in root.events if e.name in kinds] == said
        grade = {
            attributes(e)["gen_ai.evaluation.name"]: attributes(e) for e in root.events if e.name == "gen_ai.evaluation.result"
        }
        assert set(grade) == {"reward", "state", "output", "trajectory"}
        assert grade["reward"]["gen_ai.evaluation.score.value"] == trial.reward
        assert grade["reward"]["gen_ai.evaluation.explanation"] == (trial.signature or "passed")
        assert grade["state"]["gen_ai.evaluation.score.label"] == ("pass" if trial.grade["state_ok"] else "fail")
        assert int(attributes(root)["passhat.reward"]) == trial.reward
        if trial.reward:
            assert root.status.code == Status.STATUS_CODE_OK
        else:
            assert (root.status.code, root.status.message) == (Status.STATUS_CODE_ERROR, trial.signature)
        rewards.add(trial.reward)
    assert rewards == {0, 1}, "the run should hold passes and failures"


def record(task: str, trial: int, **fields: Any) -> TrialRecord:
    base = dict(persona="baseline", seed=trial, reward=1, signature=None, infra_error=None, started=10.0, finished=12.0)
    base.update(grade={"reward": 1, "signature": None, "state_ok": True, "output_ok": True, "trajectory_ok": True, "details": {}})
    return TrialRecord(
        task_id=task, trial=trial, events=fields.pop("events", [{"kind": "user", "text": "hi"}]), **{**base, **fields}
    )


def hand_made_run(tmp_path: Path, trials: list[TrialRecord]) -> Path:
    config = RunConfig(agent="llm:openai/gpt-test", personas=["baseline"], tasks=["t1"], trials=len(trials)).model_dump()
    with ResultStore.create(tmp_path / "hand", "hand", config) as store:
        for trial in trials:
            store.record(trial)
    return tmp_path


GUARDED = [
    {"kind": "user", "text": "close my account"},
    {"kind": "tool", "call_id": "c1", "name": "close", "args": {"id": "A-1"}, "violations": [{"rule": "verify-first", "reason": "not verified"}],
     "result": {"status": "error", "error": {"type": "policy", "message": "needs confirmation", "retryable": False}},
     "guard": {"guard": "confirmation", "decision": "refused", "rule": "confirm"}},
    {"kind": "tool", "call_id": "c2", "name": "close", "args": {"id": "A-1"}, "result": {"status": "ok", "data": {}},
     "fault": {"class": "lost_response", "actual": {"status": "ok", "data": 1}}},
    {"kind": "agent", "text": "Done."},
    {"kind": "end", "text": "satisfied"},
    {"kind": "guard", "call_id": None, "name": "refund", "args": {"id": "A-1"}, "result": {"status": "ok"}, "text": "ticket T-1 done by ops",
     "guard": {"guard": "human_gate", "decision": "operator_done"}},
]  # fmt: skip
USAGE = {
    "agent": {"model": "openai/gpt-test", "calls": 3, "cached_calls": 1, "input_tokens": 900, "output_tokens": 120,
              "cost_usd": 0.25, "unpriced_calls": 0, "latency_s": [0.5, 0.75]},
    "user": {"model": "anthropic/claude-test", "calls": 2, "cached_calls": 0, "input_tokens": 400, "output_tokens": 40,
             "cost_usd": 0.0, "unpriced_calls": 2, "latency_s": [0.25, 0.25]},
}  # fmt: skip


def test_guard_decisions_faults_policy_violations_and_operator_tickets_are_on_the_tool_spans(tmp_path):
    run = hand_made_run(tmp_path, [record("t1", 0, events=GUARDED)])
    assert export(run, tmp_path / "t.json", "hand").exit_code == 0
    trace = spans(parsed(tmp_path / "t.json"))
    refused, faulted, ticket = sorted(
        (s for s in trace if s.name.startswith("execute_tool")), key=lambda s: s.start_time_unix_nano
    )
    assert attributes(refused)["passhat.guard"] == "confirmation" and attributes(refused)["passhat.guard.decision"] == "refused"
    assert attributes(refused)["error.type"] == "policy"
    assert (refused.status.code, refused.status.message) == (Status.STATUS_CODE_ERROR, "needs confirmation")
    events = {e.name: attributes(e) for e in refused.events}
    assert events["passhat.policy_violation"] == {"passhat.rule": "verify-first", "passhat.reason": "not verified"}
    assert json.loads(events["passhat.guard.decision"]["passhat.guard.detail"])["rule"] == "confirm"
    assert attributes(faulted)["passhat.fault"] == "lost_response"
    assert json.loads(attributes(faulted)["passhat.fault.actual"]) == {"status": "ok", "data": 1}
    assert faulted.status.code == Status.STATUS_CODE_UNSET
    assert ticket.name == "execute_tool refund" and attributes(ticket)["passhat.operator"] == "ticket T-1 done by ops"
    assert attributes(ticket)["passhat.guard.decision"] == "operator_done"


def test_model_calls_are_a_chat_span_per_role_with_its_token_usage(tmp_path):
    run = hand_made_run(tmp_path, [record("t1", 0, usage=USAGE)])
    assert export(run, tmp_path / "t.json", "hand").exit_code == 0
    chats = {attributes(s)["passhat.role"]: s for s in spans(parsed(tmp_path / "t.json")) if s.name.startswith("chat ")}
    agent, user = attributes(chats["agent"]), attributes(chats["user"])
    assert chats["agent"].name == "chat gpt-test" and chats["agent"].kind == Span.SPAN_KIND_CLIENT
    assert (agent["gen_ai.provider.name"], agent["gen_ai.request.model"]) == ("openai", "gpt-test")
    assert (int(agent["gen_ai.usage.input_tokens"]), int(agent["gen_ai.usage.output_tokens"])) == (900, 120)
    assert (int(agent["passhat.model.calls"]), int(agent["passhat.model.cached_calls"])) == (3, 1)
    assert agent["passhat.model.cost_usd"] == 0.25
    assert [v["doubleValue"] for v in agent["passhat.model.latency_s"]["values"]] == [0.5, 0.75]
    assert "passhat.model.cost_usd" not in user, "an unpriced call's cost is unknown, not zero"


def test_a_trial_that_could_not_be_judged_has_an_error_status_and_no_evaluation(tmp_path):
    run = hand_made_run(
        tmp_path,
        [
            record("t1", 0, reward=None, signature="infra_error", infra_error="Traceback ...\nTimeoutError: model API down"),
            record("t1", 1, reward=0, signature="user_simulator_error"),
        ],
    )
    assert export(run, tmp_path / "t.json", "hand").exit_code == 0
    roots = {int(attributes(s)["passhat.trial"]): s for s in spans(parsed(tmp_path / "t.json")) if not s.parent_span_id}
    assert roots[0].status.message == "infra_error: TimeoutError: model API down"
    assert roots[1].status.message == "user_simulator_error"
    for root in roots.values():
        assert root.status.code == Status.STATUS_CODE_ERROR and attributes(root)["passhat.judged"] is False
        assert not [e for e in root.events if e.name == "gen_ai.evaluation.result"]


def test_the_same_run_exports_the_same_traces(flaky_run, tmp_path):
    """Ids come from the run and the trial: posting a run twice to a collector updates its traces, not doubles them."""
    export(flaky_run, tmp_path / "a.json")
    export(flaky_run, tmp_path / "b.json")
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


class Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP traces receiver: it keeps each request's body and answers as the server's ``status`` says."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.received.append((self.path, self.headers, body))  # type: ignore[attr-defined]
        status = self.server.status  # type: ignore[attr-defined]
        self.send_response(status)
        self.send_header("Content-Type", "application/x-protobuf")
        answer = b"" if status == 200 else b"the collector is full"
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    server.received, server.status = [], 200  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_the_live_export_posts_the_files_traces_to_the_receiver_as_otlp_protobuf(flaky_run, tmp_path, receiver, monkeypatch):
    monkeypatch.setattr(otel, "TRIALS_PER_REQUEST", 3)
    endpoint = f"http://127.0.0.1:{receiver.server_port}"
    result = export(flaky_run, tmp_path / "traces.json", "flaky", "--otlp-endpoint", endpoint)
    assert result.exit_code == 0, result.output
    assert f"posted to {endpoint}/v1/traces (2 OTLP requests)" in result.output
    assert [(path, headers["Content-Type"]) for path, headers, _ in receiver.received] == [
        ("/v1/traces", "application/x-protobuf")
    ] * 2
    posted = [ExportTraceServiceRequest.FromString(body) for _, _, body in receiver.received]
    assert [len(traces([request])) for request in posted] == [3, 1]
    assert spans(posted) == spans(parsed(tmp_path / "traces.json"))


def test_the_live_export_sends_the_headers_opentelemetry_exporters_read_from_the_environment(
    flaky_run, tmp_path, receiver, monkeypatch
):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=ops")  # the traces' own variable wins
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-api-key=s%3Dcr%2Cet , x-team=support")
    result = export(flaky_run, tmp_path / "t.json", "flaky", "--otlp-endpoint", f"http://127.0.0.1:{receiver.server_port}")
    assert result.exit_code == 0, result.output
    ((_, headers, _),) = receiver.received
    assert (headers["x-api-key"], headers["x-team"]) == ("s=cr,et", "support")


def test_malformed_headers_are_refused_before_anything_is_written_without_showing_them(
    flaky_run, tmp_path, receiver, monkeypatch
):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "Authorization: Bearer sk-secret-123")
    result = export(flaky_run, tmp_path / "t.json", "flaky", "--otlp-endpoint", f"http://127.0.0.1:{receiver.server_port}")
    assert result.exit_code == 2 and "OTEL_EXPORTER_OTLP_HEADERS: give headers as key=value pairs" in result.output
    assert "sk-secret-123" not in result.output
    assert list(tmp_path.iterdir()) == [] and receiver.received == []  # type: ignore[attr-defined]


def test_an_endpoint_that_refuses_the_traces_is_a_clear_error(flaky_run, tmp_path, receiver):
    receiver.status = 503  # type: ignore[attr-defined]
    result = export(
        flaky_run, tmp_path / "t.json", "flaky", "--otlp-endpoint", f"http://127.0.0.1:{receiver.server_port}/v1/traces"
    )
    assert result.exit_code == 2
    assert "refused the traces: HTTP 503 the collector is full" in result.output and "Traceback" not in result.output
    with socket.socket() as sock:  # a port nobody listens on once this closes
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = export(flaky_run, tmp_path / "t.json", "flaky", "--otlp-endpoint", f"http://127.0.0.1:{port}")
    assert result.exit_code == 2
    assert f"--otlp-endpoint http://127.0.0.1:{port}/v1/traces: cannot send the traces" in result.output


def test_the_live_export_without_the_otel_extra_says_how_to_install_it(flaky_run, tmp_path, receiver, monkeypatch):
    monkeypatch.setitem(sys.modules, "opentelemetry.proto.collector.trace.v1.trace_service_pb2", None)  # import fails
    result = export(flaky_run, tmp_path / "t.json", "flaky", "--otlp-endpoint", f"http://127.0.0.1:{receiver.server_port}")
    assert result.exit_code == 2
    assert "pip install 'passhat[otel]'" in result.output and receiver.received == []  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "flags", "says"),
    [
        ("traces.txt", [], "OTLP JSON traces are a .json or .jsonl file"),
        ("t.json", ["--otlp-endpoint", "127.0.0.1:4318"], "give an http:// or https:// URL"),
        *[
            ("t.json", ["--otlp-endpoint", url], "give an http:// or https:// URL")  # what would fail only when sending
            for url in ("http://[::1", "http://127.0.0.1:99999", "http://127.0.0.1:0", "http://a\x01b", "http://" + "x" * 300)
        ],
        ("t.json", ["--format", "inspect", "--otlp-endpoint", "http://127.0.0.1:4318"], "use it with --format otel"),
    ],
)
def test_bad_flags_are_refused_before_anything_is_written(flaky_run, tmp_path, name, flags, says):
    result = export(flaky_run, tmp_path / name, "flaky", *flags)
    assert result.exit_code == 2 and says in result.output, result.output
    assert list(tmp_path.iterdir()) == []
