"""Runs with an LLM agent through a real local server: retries, infra errors and resume, the response
cache, accounting, keys and secrets, and the config file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from llm_fake_server import ECHO_KEY, FakeOpenAI, call, fail, say
from test_llm_agent import KEY, cancel_conversation, llm_run, report, run_cli, stored_events

from passhat.store import ResultStore


def test_retries_on_429_and_500_then_succeed(tmp_path: Path) -> None:
    with FakeOpenAI([fail(429, "slow down"), fail(500, "oops"), *cancel_conversation()]) as server:
        result = llm_run(server, tmp_path)
    assert result.exit_code == 0, result.output
    assert report(tmp_path)["metrics"]["avg_reward"] == 1.0
    assert len(server.requests) == 2 + len(cancel_conversation())


def test_retries_that_give_up_end_as_infra_error_and_resume_reruns_them(tmp_path: Path) -> None:
    with FakeOpenAI(then=lambda _: fail(503, "endpoint down")) as down:
        result = llm_run(down, tmp_path, "--max-retries", "2")
    assert len(down.requests) == 3  # the first try and two retries
    assert result.exit_code == 1
    assert "all 1 trials ended as infra errors" in " ".join(result.output.split())
    m = report(tmp_path)["metrics"]
    assert (m["scenarios"], m["infra_errors"], m["avg_reward"]) == (0, 1, None)
    assert m["conservative"]["avg_reward"] == 0.0
    with ResultStore.open(tmp_path / "r1") as store:
        assert "HTTP 503" in store.trials()[0].infra_error

    # the stored config points at the dead port; the resumed run must reach a live server there
    config = json.loads((tmp_path / "r1.json").read_text())["config"]
    with FakeOpenAI(cancel_conversation()) as up:
        with ResultStore.open(tmp_path / "r1") as store:
            store._conn.execute("UPDATE run SET config = ?", (json.dumps({**config, "agent_base_url": up.url}),))
        resumed = run_cli("run", "--resume", "r1", "--out", str(tmp_path), "--json", str(tmp_path / "r1.json"))
    assert resumed.exit_code == 0, resumed.output
    m = report(tmp_path)["metrics"]
    assert (m["infra_errors"], m["avg_reward"]) == (0, 1.0)


def test_infra_errors_are_left_out_of_pass_hat_k_and_counted_in_the_conservative_figure(tmp_path: Path) -> None:
    # two trials: the first plays through, the second meets a dead endpoint
    with FakeOpenAI(cancel_conversation(), then=lambda _: fail(500, "down")) as server:
        result = llm_run(server, tmp_path, "--trials", "2", "--max-retries", "1", "--concurrency", "1")
    m = report(tmp_path)["metrics"]
    assert (m["infra_errors"], m["avg_reward"], m["pass_hat_k"]["1"]) == (1, 1.0, 1.0)
    assert m["conservative"] == {"avg_reward": 0.5, "pass_hat_k": {"1": 0.5, "2": 0.0}}
    assert "counted as failures: average reward 0.500" in " ".join(result.output.split())


def test_a_rerun_with_the_cache_makes_no_request_and_replays_the_trajectory(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache.sqlite")
    with FakeOpenAI(cancel_conversation()) as server:
        llm_run(server, tmp_path, "--cache", cache, run_id="first")
        sent = len(server.requests)
        again = llm_run(server, tmp_path, "--cache", cache, run_id="second")
    assert again.exit_code == 0, again.output
    assert len(server.requests) == sent  # zero new requests
    assert stored_events(tmp_path, "second") == stored_events(tmp_path, "first")
    calls = report(tmp_path, "second")["metrics"]["model_calls"]["agent"]
    assert (calls["calls"], calls["cached_calls"], calls["cost_usd"]) == (sent, sent, 0.0)


def test_trials_of_one_scenario_do_not_share_cached_answers(tmp_path: Path) -> None:
    cache = str(tmp_path / "cache.sqlite")
    with FakeOpenAI(cancel_conversation() * 2) as server:
        llm_run(server, tmp_path, "--cache", cache, "--trials", "2", "--concurrency", "1")
    assert len(server.requests) == 2 * len(cancel_conversation())
    assert len({r["seed"] for r in server.requests}) == 2  # each trial sends its own seed


def test_token_and_cost_totals(tmp_path: Path) -> None:
    with FakeOpenAI(cancel_conversation()) as server:  # every reply: 1,000 tokens in, 100 out
        llm_run(server, tmp_path)
    n = len(server.requests)
    m = report(tmp_path)["metrics"]
    assert m["tokens"] == {"input": 1000 * n, "output": 100 * n}
    assert abs(m["cost_usd"] - n * (1000 * 2.0 + 100 * 8.0) / 1e6) < 1e-9  # gpt-4.1: $2 / $8 per million
    assert m["unpriced_models"] == []
    with ResultStore.open(tmp_path / "r1") as store:
        usage = store.trials()[0].usage["agent"]
    assert (usage["calls"], usage["input_tokens"], len(usage["latency_s"])) == (n, 1000 * n, n)


def test_the_config_file_sets_prices_and_flags_and_flags_win(tmp_path: Path) -> None:
    config = tmp_path / "eval.toml"
    config.write_text(
        'trials = 3\nmax-retries = 0\nagent = "llm:openai/my-local-model"\n'
        '[prices."openai/my-local-model"]\ninput = 1.0\noutput = 0.0\n'
    )
    with FakeOpenAI(cancel_conversation()) as server:
        llm_run(server, tmp_path, "--config", str(config))  # llm_run passes --trials 1 on the command line
    doc = report(tmp_path)
    assert (doc["config"]["trials"], doc["config"]["max_retries"]) == (1, 0)
    assert doc["config"]["agent"] == "llm:openai/gpt-4.1"  # the flag wins over the file
    assert server.requests[0]["model"] == "gpt-4.1"
    only_file = tmp_path / "only.toml"
    only_file.write_text(config.read_text().replace("trials = 3\n", ""))
    with FakeOpenAI(cancel_conversation()) as server:
        run_cli(
            "run", "--config", str(only_file), "--agent-base-url", server.url, "--tasks", "retail-001",
            "--personas", "baseline", "--trials", "1", "--out", str(tmp_path), "--run-id", "r2",
            "--json", str(tmp_path / "r2.json"),
        )  # fmt: skip
    m = report(tmp_path, "r2")["metrics"]
    assert server.requests[0]["model"] == "my-local-model"
    assert abs(m["cost_usd"] - m["tokens"]["input"] / 1e6) < 1e-9


def test_an_unknown_config_key_names_the_key_and_the_file(tmp_path: Path) -> None:
    config = tmp_path / "eval.toml"
    config.write_text("trails = 3\n")
    result = run_cli("run", "--config", str(config), "--out", str(tmp_path))
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "'trails'" in text and "eval.toml" in text


def test_a_bad_config_value_names_the_key(tmp_path: Path) -> None:
    config = tmp_path / "eval.toml"
    config.write_text('max-turns = "many"\n')
    result = run_cli("run", "--config", str(config), "--out", str(tmp_path))
    assert result.exit_code == 2
    assert "max-turns" in result.output


@pytest.mark.parametrize(
    "text, words",
    [
        ("max_turns = 3\nmax-turns = 4\n", "'max_turns' and 'max-turns'"),
        ("trials = " + "[" * 2000 + "]" * 2000 + "\n", "too deeply"),
        ("trails = 3\n", "'trails'"),
        ('max-turns = "many"\n', "max-turns"),
    ],
)
def test_config_file_errors_are_one_paragraph(tmp_path: Path, text: str, words: str) -> None:
    config = tmp_path / "eval.toml"
    config.write_text(text)
    result = run_cli("run", "--config", str(config), "--out", str(tmp_path))
    assert result.exit_code == 2
    assert result.output.startswith("error:") and "Usage:" not in result.output and "Traceback" not in result.output
    flat = " ".join(result.output.split())
    assert words in flat and flat.count("(--config)") == 1 and "eval.toml" in flat
    assert not list(tmp_path.glob("*/results.sqlite"))


def test_a_missing_key_stops_before_any_trial(tmp_path: Path) -> None:
    result = run_cli("run", "--agent", "llm:openai/gpt-4.1", "--out", str(tmp_path), env={"OPENAI_API_KEY": ""})
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.output
    assert not list(tmp_path.iterdir())  # no run was created


def test_a_base_url_with_credentials_is_refused(tmp_path: Path) -> None:
    url = f"http://user:{KEY}@127.0.0.1:9/v1"
    result = run_cli("run", "--agent", "llm:openai/gpt-4.1", "--agent-base-url", url, "--out", str(tmp_path))
    assert result.exit_code == 2
    assert KEY not in result.output


def echoing_models(out: Path, cache: Path) -> Result:
    """A run whose agent and customer models echo the key they were sent: in the agent's words, in its
    tool arguments (also as a JSON escape, which only decoding reveals), and in the customer's words."""
    escaped = f"\\u{ord(KEY[0]):04x}{KEY[1:]}"
    agent_replies = [
        say(f"Your key is {ECHO_KEY}.", call("get_order", {"order_id": ECHO_KEY}, "k1")),
        say(None, call("find_customer_by_email", '{"email": "' + escaped + '"}', "k2")),
    ]
    with FakeOpenAI(agent_replies, then=lambda _: say(f"Goodbye, {ECHO_KEY}.")) as agent, \
            FakeOpenAI(then=lambda _: say(f"Hi, my key is {ECHO_KEY}.")) as customer:  # fmt: skip
        return llm_run(
            agent, out, "--cache", str(cache), "--guard", "audit", "--max-turns", "2",
            "--user", "llm:openai/gpt-4.1-mini", "--user-base-url", customer.url, run_id="r3",
        )  # fmt: skip


def test_the_key_reaches_no_file_the_run_wrote(tmp_path: Path) -> None:
    out = tmp_path / "runs"
    cache = tmp_path / "cache.sqlite"
    echo = fail(401, f"Incorrect API key provided: {KEY}.")  # an endpoint that echoes the key back
    with FakeOpenAI(cancel_conversation()) as server:
        ok = llm_run(server, out, "--cache", str(cache))
    with FakeOpenAI(then=lambda _: echo) as server:
        refused = llm_run(server, out, "--cache", str(cache), "--trials", "2", run_id="r2")
    assert "infra errors" in refused.output  # the echoed key did reach the harness
    echoed = echoing_models(out, cache)
    assert echoed.exit_code == 0, echoed.output
    events = stored_events(out, "r3")
    assert "Your key is [redacted]." in [e.get("text") for e in events]  # the echo did reach the harness, and was judged
    assert {e["args"]["email"] for e in events if e.get("call_id") == "k2"} == {"[redacted]"}
    shown = run_cli("report", "r3", "--out", str(out), "--html", str(out / "r3.html"))
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {
        "results.sqlite",
        "r1.json",
        "r2.json",
        "r3.json",
        "r3.html",
        "cache.sqlite",
        "audit.jsonl",
    }
    for path in written:
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in ok.output + refused.output + echoed.output + shown.output
