"""Terminal lines about the plumbing: model calls, tokens and cost, infra errors and the conservative
figure, and the plain message of a run in which no trial could be judged."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape


def print_plumbing(report: dict[str, Any], console: Console) -> None:
    m = report["metrics"]
    for role, u in m.get("model_calls", {}).items():
        latency = u["latency_s"]["mean"]
        console.print(
            f"{role} model {u['model']}: {u['calls']} calls ({u['cached_calls']} from the cache), "
            f"{u['input_tokens']:,} tokens in / {u['output_tokens']:,} out, ${u['cost_usd']:.4f}"
            + (f", mean latency {latency:.2f} s" if latency is not None else ""),
            highlight=False,
        )
    if m.get("model_calls"):
        unpriced = m["unpriced_models"]
        console.print(
            f"total cost ${m['cost_usd']:.4f}"
            + (f" [yellow](no price for {', '.join(unpriced)}: add it under \\[prices] in the config file)[/]" if unpriced else ""),
            highlight=False,
        )
    if m["infra_errors"] and m["scenarios"]:
        c = m["conservative"]
        n = max(c["pass_hat_k"], key=int)
        console.print(
            f"[yellow]{m['infra_errors']} trials could not be judged (infra errors), left out above; "
            f"counted as failures: average reward {c['avg_reward']:.3f}, pass^{n} {c['pass_hat_k'][n]:.3f}[/]"
        )


def nothing_judged(report: dict[str, Any]) -> str:
    """Why a run has no figures, in words a user can act on."""
    m = report["metrics"]
    if m.get("user_simulator_errors") and not m["infra_errors"]:
        return (
            f"no trial could be judged: all {m['user_simulator_errors']} trials ended in user simulator errors "
            "(the simulated customer broke its instruction); see the trials' last customer messages."
        )
    if not m["infra_errors"]:
        return "no trial could be judged"
    return (
        f"no trial could be judged: all {m['infra_errors']} trials ended as infra errors, so the model endpoint "
        f"(or the harness) failed. First error: {escape(str(report.get('infra_error_example')))}. Once it works again, "
        f"`passhat run --resume {report['run_id']}` (with the same --out) runs them again."
    )
