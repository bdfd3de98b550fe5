"""Paraphrased openings: the same request in other words, to measure whether the wording changes the outcome.

Variant v ≥ 1 of a task has each phrasing of its first goal's request reworded (contractions spelt out, "please"
left out) and set in the v-th frame, cycling through the frames: "{request} Is that something you can do?". Every
detail the request names (a record's number, an amount, a reason) stays word for word, so a paraphrase asks for
exactly what the original does. A domain may give its own frames in its conversation kit, as ``phrasings
["paraphrase"]["plain"]`` (templates with ``{request}``); the engine's are FRAMES. The customer draws its phrasing
among as many as before, so a paraphrased trial makes the same random draws as the original trial of its seed and
differs only by those words and what the agent makes of them. Variant 0 is the task itself, untouched.
"""

from __future__ import annotations

import re
import threading

from passhat.customers.base import UserFactory
from passhat.domains.model import Domain, Task
from passhat.openings import MAX_PARAPHRASES, opening_variant

FRAMES = (
    "I was hoping you could help me with something. {request}",
    "{request} Is that something you can do?",
    "Quick question for you. {request}",
    "So, here is my situation. {request}",
    "{request} Thanks in advance.",
    "I am getting in touch about something. {request}",
    "Could you help me out? {request}",
    "{request} I would appreciate it.",
)
assert len(FRAMES) == MAX_PARAPHRASES

CONTRACTIONS = {
    "i'd": "I would",
    "i'm": "I am",
    "i've": "I have",
    "i'll": "I will",
    "it's": "it is",
    "that's": "that is",
    "there's": "there is",
    "what's": "what is",
    "let's": "let us",
    "we're": "we are",
    "you're": "you are",
    "don't": "do not",
    "doesn't": "does not",
    "didn't": "did not",
    "isn't": "is not",
    "wasn't": "was not",
    "aren't": "are not",
    "haven't": "have not",
    "can't": "cannot",
    "won't": "will not",
}
_CONTRACTION = re.compile(r"\b(" + "|".join(re.escape(c) for c in CONTRACTIONS) + r")\b", re.IGNORECASE)
_PLEASE = re.compile(r",? please\b,?|\bplease,? ", re.IGNORECASE)

_cache: dict[tuple[int, int, int], tuple[Domain, Task, Task]] = {}
_lock = threading.Lock()


def reworded(request: str) -> str:
    """The request with its contractions spelt out and its "please" left out (its first letter kept in its case)."""
    text = _CONTRACTION.sub(lambda m: _keep_case(m.group(), CONTRACTIONS[m.group().lower()]), request)
    text = _PLEASE.sub(" ", text).strip()
    text = re.sub(r" +([.,!?])", r"\1", re.sub(r" {2,}", " ", text))
    text = text if text.endswith((".", "!", "?")) else text + "."  # a frame may go on after it
    return text[:1].upper() + text[1:] if request[:1].isupper() else text


def _keep_case(original: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


def frames(domain: Domain) -> tuple[str, ...]:
    """The domain's own paraphrase frames, else the engine's."""
    own = domain.kit.phrasings.get("paraphrase", {}).get("plain")
    return tuple(own) if own else FRAMES


def paraphrase(domain: Domain, request: str, variant: int) -> str:
    """One phrasing of a request in paraphrase ``variant`` (≥ 1)."""
    options = frames(domain)
    return options[(variant - 1) % len(options)].format(request=reworded(request))


def paraphrased(domain: Domain, task: Task, variant: int) -> Task:
    """The task with its first goal's request in paraphrase ``variant`` (0: the task itself); one object per task,
    variant and domain, so what the customer works out once per task is worked out once per variant."""
    if variant == 0:
        return task
    key = (id(domain), id(task), variant)
    with _lock:
        cached = _cache.get(key)
        if cached is not None and cached[0] is domain and cached[1] is task:
            return cached[2]
    first, *rest = task.goals
    request = [paraphrase(domain, r, variant) for r in first.request]
    copy = task.model_copy(update={"goals": [first.model_copy(update={"request": request}), *rest]})
    with _lock:
        _cache[key] = (domain, task, copy)
    return copy


def with_opening(make_user: UserFactory, trial: int, paraphrases: int) -> UserFactory:
    """The customer factory for trial ``trial`` of a run with ``paraphrases`` paraphrases: ``make_user`` itself for
    variant 0, else one whose customers say the request in the trial's paraphrase."""
    variant = opening_variant(trial, paraphrases)
    if variant == 0:
        return make_user
    return lambda domain, task, persona, rng: make_user(domain, paraphrased(domain, task, variant), persona, rng)
