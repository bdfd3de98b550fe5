"""A policy reason a task asks the agent to tell is told in the words a model really used for it, and not by a
message that says the opposite. The wordings come from a language model playing the agent (terse, markdown and
chatty styles), each of which the graders once failed as missing_output."""

from __future__ import annotations

import pytest

from passhat.dialogue.facts import tell
from passhat.domains import load_domain
from passhat.grade.expected import required_facts


def reason(task_id: str):
    domain = load_domain("helpdesk" if task_id.startswith("hd-") else "benefits")
    # a reason is a phrase, or a value of the record it is said of (hd-013: the priority allowed, "high")
    [fact] = [f.fact for f in required_facts(domain, domain.tasks[task_id]) if f.fact.kind == "phrase" or f.fact.about]
    return fact


@pytest.mark.parametrize(
    ("task_id", "said"),
    [
        ("benefits-004", "From 2025-05-01 you're on Basic (free, no paid benefit). Benefit applies only to a paid plan."),
        ("benefits-012", "Your Plus plan had ended 2025-05-09; new one starts 2025-06-16. No paid plan on the tow day."),
        ("hd-013", "With 8 people, INC-1131 doesn't qualify for critical. Priority is now **high**."),
        ("benefits-011", "It can only be renewed from 30 days before it ends: the earliest renewal is 15 December 2025."),
        ("hd-041", "I'm only able to help with incidents and change requests that the caller raised themselves."),
    ],
)
def test_a_reason_told_in_a_models_own_words_is_told(task_id, said):
    assert tell(reason(task_id), [(1, said)]).told


@pytest.mark.parametrize(
    ("task_id", "said"),
    [
        ("benefits-012", "You had an active membership on the tow day, so the benefit applies."),
        ("hd-013", "The priority is not high."),
        ("hd-041", "INC-1141 is yours, so I can help with it."),
        ("benefits-004", "You are on the Plus plan, which covers this."),
    ],
)
def test_a_message_saying_otherwise_does_not_tell_the_reason(task_id, said):
    assert not tell(reason(task_id), [(1, said)]).told
