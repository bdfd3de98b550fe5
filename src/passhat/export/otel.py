"""A stored run as OpenTelemetry traces: a trace per trial, in the GenAI semantic conventions, written as OTLP JSON
(the protobuf-JSON mapping of an ``ExportTraceServiceRequest`` that an OpenTelemetry collector ingests), and posted
to an OTLP/HTTP endpoint as protobuf when asked.

A trial's trace: a root ``invoke_agent`` span (the conversation: the customer's and the agent's messages are its
events, the grade its attributes and ``gen_ai.evaluation.result`` events), an ``execute_tool`` span per tool call
(arguments, the result the agent saw, the guard's decision, an injected fault, the policy rules it broke), a
``chat`` span per role whose model was called (its token usage), and a span per ticket an operator resolved after
the conversation. passhat stores no time per event, only the trial's start and end: the events and tool calls are
laid out in order over the trial's time, in equal slots, and the model usage is stored per role, not per call.

Ids are derived from the run and the trial, so the same run exports the same traces, byte for byte. The file (JSON
Lines, a request per trial) is written without any OpenTelemetry package; the live export needs ``opentelemetry-proto``
(``pip install 'passhat[otel]'``) to encode protobuf.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import passhat
from passhat.errors import UserError
from passhat.file_writes import write_atomically
from passhat.metrics.summary import is_judged
from passhat.run_config import RunConfig
from passhat.store import TrialRecord

Attribute = str | bool | int | float | list[float]
GRADERS = {"state": "state_ok", "output": "output_ok", "trajectory": "trajectory_ok"}  # evaluation name -> grade key
MESSAGE_EVENTS = {"user": "gen_ai.user.message", "agent": "gen_ai.assistant.message"}
INTERNAL, CLIENT = 1, 3  # OTLP SpanKind
STATUS_OK, STATUS_ERROR = 1, 2  # OTLP StatusCode
TRIALS_PER_REQUEST = 50  # a live export's batch: a request stays well under collectors' default size limits
TRACES_PATH = "/v1/traces"  # OTLP/HTTP's path for traces, added to an endpoint given without a path
HEADER_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS")  # the first one set is used
HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP field name (RFC 9110 token)


@dataclasses.dataclass(frozen=True)
class SpanEvent:
    name: str
    time: float
    attributes: dict[str, Attribute]


@dataclasses.dataclass(frozen=True)
class Span:
    """One span of a trial's trace; ``error`` (the status message) is None for an unset status, "" for OK."""

    trace_id: str  # 32 hex digits
    span_id: str  # 16 hex digits
    parent_id: str | None
    name: str
    kind: int
    start: float
    end: float
    attributes: dict[str, Attribute]
    events: tuple[SpanEvent, ...] = ()
    error: str | None = None


def write_otel_traces(path: Path, run_id: str, config: RunConfig, trials: Iterable[TrialRecord]) -> int:
    """Write the run's traces to ``path`` (replaced whole or not at all), reading ``trials`` once as a stream;
    returns the number of traces (trials) written. The file is JSON Lines, as OpenTelemetry's OTLP file exporter
    writes and the collector's file receiver reads: a line per trial, each an ExportTraceServiceRequest of its trace."""
    count = 0

    def lines() -> Iterator[str]:
        nonlocal count
        for trial in trials:
            yield json.dumps(_envelope(run_id, config, [_otlp_span(s) for s in trial_spans(run_id, config, trial)])) + "\n"
            count += 1

    write_atomically(path, lines(), durable=False)
    return count


def post_otel_traces(url: str, headers: dict[str, str], path: Path, timeout: float = 30.0) -> int:
    """POST the traces of a file ``write_otel_traces`` wrote to ``url`` (see traces_url) as OTLP/HTTP protobuf, with
    ``headers`` (see otlp_headers), TRIALS_PER_REQUEST trials a request; returns the requests sent. A failed or refused
    request is a UserError naming the URL and what it answered."""
    import httpx2

    encode, sent = _protobuf_encoder(), 0
    headers = headers | {"Content-Type": "application/x-protobuf"}
    with httpx2.Client(timeout=timeout, headers=headers) as client, path.open() as lines:
        while batch := list(itertools.islice(lines, TRIALS_PER_REQUEST)):
            body = b"".join(encode(json.loads(line)) for line in batch)  # concatenated messages are one, merged
            try:
                response = client.post(url, content=body)
            except httpx2.HTTPError as exc:
                why = str(exc) or type(exc).__name__
                raise UserError(
                    f"--otlp-endpoint {url}: cannot send the traces ({why}); is the collector running there?"
                ) from None
            if not 200 <= response.status_code < 300:
                answer = " ".join(response.text[:300].split())  # one paragraph, whatever the receiver wrote
                raise UserError(f"--otlp-endpoint {url} refused the traces: HTTP {response.status_code} {answer}")
            sent += 1
    return sent


def otlp_headers(environ: Mapping[str, str]) -> dict[str, str]:
    """The headers OpenTelemetry's exporters send (a hosted backend's API key): ``OTEL_EXPORTER_OTLP_TRACES_HEADERS``,
    else ``OTEL_EXPORTER_OTLP_HEADERS``, as ``key=value,key=value`` with URL-encoded values. Their values are never
    shown: they are secrets."""
    name = next((n for n in HEADER_VARIABLES if environ.get(n, "").strip()), None)
    if name is None:
        return {}
    headers = {}
    for pair in environ[name].split(","):
        key, equals, value = pair.partition("=")
        key, value = key.strip(), unquote(value.strip())
        if not equals or not HEADER_NAME.fullmatch(key) or not value.isprintable():
            raise UserError(f"{name}: give headers as key=value pairs separated by commas (such as x-api-key=...).")
        headers[key] = value
    return headers


def traces_url(endpoint: str) -> str | None:
    """The URL traces are posted to: the endpoint as given, or with OTLP/HTTP's /v1/traces when it has no path; None
    when it is no http(s) URL passhat can post to, down to what would only fail when sending (a port out of range, a
    host name no DNS can encode, a control character)."""
    import httpx2

    try:
        parts = urlsplit(endpoint)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
        (parts.hostname or "").encode("idna")
        httpx2.URL(endpoint)
    except (ValueError, UnicodeError, httpx2.InvalidURL):
        return None
    if not valid:
        return None
    return endpoint.rstrip("/") + TRACES_PATH if parts.path in ("", "/") else endpoint


def trial_spans(run_id: str, config: RunConfig, trial: TrialRecord) -> list[Span]:
    """A trial's trace: the conversation span first, then its tool calls, model usage and operator tickets."""
    trace = _digest(run_id, trial.task_id, trial.persona, str(trial.trial), size=16)
    root = _digest(trace, "root", size=8)
    timed = [e for e in trial.events if e["kind"] != "end"]
    slot = (trial.finished - trial.started) / max(len(timed), 1)
    messages: list[SpanEvent] = []
    children: list[Span] = []
    for n, event in enumerate(timed):
        start = trial.started + n * slot
        if event["kind"] in MESSAGE_EVENTS:
            messages.append(SpanEvent(MESSAGE_EVENTS[event["kind"]], start, {"content": event["text"]}))
        else:
            children.append(_tool_span(trace, _digest(trace, str(n), size=8), root, event, start, start + slot))
    for role, usage in trial.usage.items():
        children.append(_model_span(trace, _digest(trace, f"chat/{role}", size=8), root, role, usage, trial))
    events = (*messages, *_evaluations(trial))
    conversation = Span(
        trace, root, None, f"invoke_agent {config.agent}", INTERNAL, trial.started, trial.finished,
        _conversation_attributes(run_id, config, trial), events, _verdict(trial),
    )  # fmt: skip
    return [conversation, *children]


def _conversation_attributes(run_id: str, config: RunConfig, trial: TrialRecord) -> dict[str, Attribute]:
    attributes: dict[str, Attribute] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": config.agent,
        "gen_ai.conversation.id": f"{run_id}/{trial.task_id}/{trial.persona}/{trial.trial}",
        "passhat.task": trial.task_id,
        "passhat.persona": trial.persona,
        "passhat.trial": trial.trial,
        "passhat.seed": trial.seed,
        "passhat.judged": is_judged(trial.to_result()),
    }
    end = next((e["text"] for e in reversed(trial.events) if e["kind"] == "end"), None)
    optional = {"passhat.end": end, "passhat.reward": trial.reward, "passhat.signature": trial.signature}
    return attributes | {key: value for key, value in optional.items() if value is not None}


def _verdict(trial: TrialRecord) -> str | None:
    """The conversation's status: OK when it passed; an error saying why when it failed or could not be judged."""
    if trial.infra_error is not None:
        return "infra_error: " + (trial.infra_error.strip().splitlines() or ["infra error"])[-1]
    return "" if trial.reward == 1 else trial.signature or "failed"


def _evaluations(trial: TrialRecord) -> list[SpanEvent]:
    """The grade as GenAI evaluation results: the reward (explained by the failure signature), then each grader;
    none for a trial that could not be judged."""
    if not is_judged(trial.to_result()):
        return []
    scores = {"reward": trial.reward == 1} | {name: bool(trial.grade[key]) for name, key in GRADERS.items() if key in trial.grade}
    return [
        SpanEvent(
            "gen_ai.evaluation.result",
            trial.finished,
            {
                "gen_ai.evaluation.name": name,
                "gen_ai.evaluation.score.value": float(passed),
                "gen_ai.evaluation.score.label": "pass" if passed else "fail",
            }
            | ({"gen_ai.evaluation.explanation": trial.signature or "passed"} if name == "reward" else {}),
        )
        for name, passed in scores.items()
    ]


def _tool_span(trace: str, span_id: str, parent: str, event: dict[str, Any], start: float, end: float) -> Span:
    """A tool call as the agent saw it (``guard`` events: a ticket an operator resolved after the conversation)."""
    result = event.get("result") or {}
    attributes: dict[str, Attribute] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": str(event.get("name")),
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.arguments": json.dumps(event.get("args")),
        "gen_ai.tool.call.result": json.dumps(result),
    }
    if event.get("call_id"):
        attributes["gen_ai.tool.call.id"] = event["call_id"]
    error = None
    if result.get("status") == "error":
        error = str(result.get("error", {}).get("message", ""))
        attributes["error.type"] = str(result.get("error", {}).get("type", "tool_error"))
    events = [SpanEvent("passhat.policy_violation", start, {"passhat.rule": v.get("rule", ""), "passhat.reason": v.get("reason", "")}) for v in event.get("violations", ())]  # fmt: skip
    if event.get("guard"):
        attributes |= {
            "passhat.guard": str(event["guard"].get("guard")),
            "passhat.guard.decision": str(event["guard"].get("decision")),
        }
        events.append(SpanEvent("passhat.guard.decision", start, {"passhat.guard.detail": json.dumps(event["guard"])}))
    if event.get("fault"):
        attributes |= {
            "passhat.fault": str(event["fault"].get("class")),
            "passhat.fault.actual": json.dumps(event["fault"].get("actual")),
        }
    if event.get("commitment"):
        attributes["passhat.commitment"] = json.dumps(event["commitment"])
    if event["kind"] == "guard":
        attributes["passhat.operator"] = event.get("text", "")
    return Span(
        trace, span_id, parent, f"execute_tool {event.get('name')}", INTERNAL, start, end, attributes, tuple(events), error
    )


def _model_span(trace: str, span_id: str, parent: str, role: str, usage: dict[str, Any], trial: TrialRecord) -> Span:
    """One role's model calls in the trial (the agent's, the simulated customer's), with their summed token usage
    and each call's latency: passhat stores usage per trial and role, not per call."""
    model = str(usage.get("model", role))
    attributes: dict[str, Attribute] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": model.split("/", 1)[-1],
        "gen_ai.usage.input_tokens": int(usage.get("input_tokens", 0)),
        "gen_ai.usage.output_tokens": int(usage.get("output_tokens", 0)),
        "passhat.role": role,
        "passhat.model.calls": int(usage.get("calls", 0)),
        "passhat.model.cached_calls": int(usage.get("cached_calls", 0)),
        "passhat.model.latency_s": [float(x) for x in usage.get("latency_s", [])],
    }
    if "/" in model:
        attributes["gen_ai.provider.name"] = model.split("/", 1)[0]
    if not usage.get("unpriced_calls") and "cost_usd" in usage:
        attributes["passhat.model.cost_usd"] = float(usage["cost_usd"])
    return Span(
        trace, span_id, parent, f"chat {attributes['gen_ai.request.model']}", CLIENT, trial.started, trial.finished, attributes
    )


def _digest(*parts: str, size: int) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[: 2 * size]


def _envelope(run_id: str, config: RunConfig, spans: list[dict[str, Any]]) -> dict[str, Any]:
    """An ExportTraceServiceRequest in OTLP JSON: the run is the resource, passhat the instrumentation scope."""
    resource = {
        "service.name": "passhat",
        "passhat.run_id": run_id,
        "passhat.domain": Path(config.domain).name,
        "passhat.user": config.user,  # the customer simulator, under the name traces already carry
        "passhat.mode": config.mode,
    }
    scope = {"name": "passhat", "version": passhat.__version__}
    return {
        "resourceSpans": [{"resource": {"attributes": _attributes(resource)}, "scopeSpans": [{"scope": scope, "spans": spans}]}]
    }


def _otlp_span(span: Span) -> dict[str, Any]:
    """A span in OTLP JSON: ids in hex, times as decimal strings of nanoseconds, enums as numbers."""
    out: dict[str, Any] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "name": span.name,
        "kind": span.kind,
        "startTimeUnixNano": _nanos(span.start),
        "endTimeUnixNano": _nanos(span.end),
        "attributes": _attributes(span.attributes),
        "events": [
            {"timeUnixNano": _nanos(e.time), "name": e.name, "attributes": _attributes(e.attributes)} for e in span.events
        ],
    }
    if span.parent_id:
        out["parentSpanId"] = span.parent_id
    if span.error is not None:
        out["status"] = {"code": STATUS_ERROR, "message": span.error} if span.error else {"code": STATUS_OK}
    return out


def _attributes(attributes: dict[str, Attribute]) -> list[dict[str, Any]]:
    return [{"key": key, "value": _any_value(value)} for key, value in attributes.items()]


def _any_value(value: Attribute) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    return {"stringValue": value}


def _nanos(timestamp: float) -> str:
    return str(round(timestamp * 1e9))


def _protobuf_encoder() -> Any:
    """OTLP JSON to protobuf bytes, with opentelemetry-proto (the otel extra). Protobuf's JSON mapping reads bytes
    as base64, where OTLP JSON writes ids in hex: the ids are converted first."""
    try:
        from google.protobuf import json_format
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
    except ImportError:
        raise UserError("--otlp-endpoint needs the opentelemetry-proto package: pip install 'passhat[otel]'.") from None

    def encode(request: dict[str, Any]) -> bytes:
        return json_format.ParseDict(_ids_in_base64(request), ExportTraceServiceRequest()).SerializeToString()

    return encode


def _ids_in_base64(request: dict[str, Any]) -> dict[str, Any]:
    """The request with its spans' ids in base64 (its span lists replaced: a request is encoded once)."""
    ids = ("traceId", "spanId", "parentSpanId")
    for resource in request["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            scope["spans"] = [
                span | {key: base64.b64encode(bytes.fromhex(span[key])).decode() for key in ids if key in span}
                for span in scope["spans"]
            ]
    return request
