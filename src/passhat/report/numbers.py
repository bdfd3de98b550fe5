"""How every report writes a probability: three decimals, and "<0.001" for what rounds to nothing.

Extrapolated pass^1000 can be 1e-21; printing it as 4.6e-21 in one report and 0.000 in another made
the same figure look different. Both the terminal and the HTML report use these.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

TINY = 0.0005  # below this, three decimals would show 0.000 for a figure that is not 0


def num(x: float | None) -> str:
    """0.726, "<0.001" for a positive figure that rounds to 0.000, "—" for no figure."""
    if x is None:
        return "—"
    return "<0.001" if 0 < x < TINY else f"{x:.3f}"


def with_ci(value: float | None, ci: Sequence[float] | None) -> str:
    """0.726 [0.670, 0.783]: a figure with its 95% interval."""
    if value is None:
        return "—"
    return num(value) if ci is None else f"{num(value)} [{num(ci[0])}, {num(ci[1])}]"


def html_figure(value: float | None, ci: Sequence[float] | None = None) -> str:
    """with_ci for HTML: the figure escaped, its interval in a note."""
    if value is None:
        return "—"
    return escape(num(value)) + (f" <span class=note>[{escape(num(ci[0]))}, {escape(num(ci[1]))}]</span>" if ci else "")


def per_100(count: int, trials: int) -> str:
    """A count per 100 trials, e.g. "2.1 /100 trials"."""
    return f"{100 * count / trials:.1f} /100 trials" if trials else "—"


def counted(n: int, noun: str) -> str:
    """n with its noun, plural unless n is 1: "1 scenario", "3 scenarios", "1,880 trials"."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
