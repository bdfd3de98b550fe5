"""Which wording a trial's customer opens with: the rule the runner applies and the report reads back.

A run with ``paraphrases`` P (``passhat run --paraphrase P``) has the customer say its request in the task's own
words (variant 0) or in one of P paraphrases of them (variants 1..P, see ``passhat.customers.paraphrase``); trial i of
every scenario takes variant i mod (P + 1), so each variant gets its share of every scenario's trials and variant 0's
trials are the very trials a run without paraphrases makes. A leaf module: the report must not load the customers.
"""

from __future__ import annotations

MAX_PARAPHRASES = 8  # the engine's paraphrase frames (customers.paraphrase.FRAMES)


def opening_variant(trial: int, paraphrases: int) -> int:
    """The wording trial ``trial`` opens with in a run with ``paraphrases`` paraphrases: 0 for the task's own."""
    return trial % (paraphrases + 1)
