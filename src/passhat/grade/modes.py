"""How strictly a trial is judged: a leaf module, so the CLI can offer the choice without loading the graders."""

from typing import Literal, get_args

Mode = Literal["strict", "tau"]  # tau: the final state and the facts told only; strict: also how it got there
MODES: tuple[str, ...] = get_args(Mode)
