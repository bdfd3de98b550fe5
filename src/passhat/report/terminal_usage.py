"""Terminal lines about the plumbing: model calls, tokens and cost, infra errors and the conservative
figure, and the plain message of a run in which no trial could be judged."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from passhat.report.caveats import imported_source
from passhat.report.model import Report, RoleUsage


def print_plumbing(report: Report, console: Console) -> None:
    """Model names are printed as text, never as markup; a cost without a price is unknown, never $0."""
    m = report.metrics
    for role, u in m.model_calls.items():
        latency = u.latency_s.mean
        console.print(
            f"{role} model {u.model}: {u.calls} call{'s' if u.calls != 1 else ''} ({u.cached_calls} from "
            f"the cache), {u.input_tokens:,} tokens in / {u.output_tokens:,} out, {_cost(u)}"
            + (f", mean latency {latency:.2f} s" if latency is not None else ""),
            highlight=False,
            markup=False,
        )
    if m.model_calls:
        unpriced = m.unpriced_models
        if not unpriced:
            console.print(f"total cost ${m.cost_usd:.4f}", highlight=False)
        else:
            priced = f" (${m.cost_usd:.4f} for the priced calls)" if m.cost_usd else ""
            console.print(
                Text(
                    f"total cost unknown{priced}: no price for {', '.join(unpriced)}; add it under [prices] in the config file",
                    style="yellow",
                )
            )
    if m.infra_errors and m.scenarios:
        c = m.conservative
        n = max(c.pass_hat_k)
        console.print(
            f"[yellow]{m.infra_errors} trials could not be judged (infra errors), left out above; "
            f"counted as failures: average reward {c.avg_reward:.3f}, pass^{n} {c.pass_hat_k[n]:.3f}[/]"
        )


def _cost(usage: RoleUsage) -> str:
    """A role's cost: unknown when some of its calls had no price (their cost is not zero, only not known)."""
    if not usage.unpriced_calls:
        return f"${usage.cost_usd:.4f}"
    if usage.unpriced_calls == usage.calls:
        return "cost unknown (no price)"
    return f"${usage.cost_usd:.4f} + unknown ({usage.unpriced_calls} calls without a price)"


def nothing_judged(report: Report) -> str:
    """Why a run has no figures, in words a user can act on (plain text: print it without markup)."""
    m = report.metrics
    if m.user_simulator_errors and not m.infra_errors:
        return (
            f"no trial could be judged: all {m.user_simulator_errors} trials ended in user simulator errors "
            "(the simulated customer broke its instruction); see the trials' last customer messages."
        )
    if not m.infra_errors:
        return "no trial could be judged"
    if source := imported_source(report.run_config):
        return f"no trial could be judged: all {m.infra_errors} trials are infra errors in {source}. First error: {report.infra_error_example}."
    return (
        f"no trial could be judged: all {m.infra_errors} trials ended as infra errors, so the model endpoint "
        f"(or the harness) failed. First error: {report.infra_error_example}. Once it works again, "
        f"`passhat run --resume {report.run_id}` (with the same --out) runs them again."
    )
