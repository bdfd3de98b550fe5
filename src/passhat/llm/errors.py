"""What can go wrong with a model call, and which side of the line each failure falls on.

Transient failures are retried; after the last retry they become ModelUnavailable, an infra error
(the trial cannot be judged). A prompt that no longer fits the context window, and an answer that
holds what Python cannot read, are the model's own failures. Any other refusal (bad key, unknown
model) cannot be cured by retrying.
"""

from __future__ import annotations

import json
import re


class TransientError(Exception):
    """A failure worth retrying: rate limit, server error, lost connection, timeout."""


class ContextOverflow(Exception):
    """The conversation no longer fits the model's context window: the model's failure, not the plumbing's."""


class ModelRequestError(Exception):
    """The endpoint refused the request for good (bad key, unknown model): retrying will not help."""


class UnreadableAnswer(Exception):
    """The endpoint answered, but the model's answer holds a number too long or nesting too deep for
    Python's JSON reader: what the model wrote is its own responsibility, so this is its failure."""


class ModelUnavailable(Exception):
    """The endpoint could not answer, even after retries: the trial cannot be judged (infra error)."""


# How servers word "the prompt does not fit": OpenAI, vLLM, llama.cpp, Anthropic, and others.
CONTEXT_OVERFLOW = re.compile(
    r"context[_ ](length|window|size|limit)|maximum context|prompt is too long|too many tokens|exceeds? the (model|available)",
    re.I,
)
RETRYABLE_STATUS = frozenset({408, 409, 429})


def classify_status(status: int, message: str, code: str | None = None) -> Exception:
    """Map an endpoint's HTTP error answer to one of the exceptions above (shared by every provider)."""
    if status >= 500 or status in RETRYABLE_STATUS:
        return TransientError(f"HTTP {status}: {message}")
    if code == "context_length_exceeded" or (status in (400, 413) and CONTEXT_OVERFLOW.search(message)):
        return ContextOverflow(message)
    return ModelRequestError(f"HTTP {status}: {message}")


def undecodable_answer(exc: ValueError | RecursionError) -> Exception | None:
    """What an SDK's failure to decode an HTTP 200 answer means, or None when ``exc`` is not that.

    A body that is not JSON is the endpoint's failure (retried); valid JSON that Python refuses for
    its size (an integer over ``sys.get_int_max_str_digits()`` digits, or nesting beyond the
    recursion limit) can only come from what the model wrote.
    """
    if isinstance(exc, RecursionError):
        return UnreadableAnswer("its answer nests deeper than Python's JSON reader goes")
    if isinstance(exc, json.JSONDecodeError):
        return TransientError(f"the endpoint's answer is not JSON: {exc}")
    if "integer string conversion" in str(exc):  # CPython's int(str) digit limit, hit by json.loads
        return UnreadableAnswer("its answer holds an integer with more digits than Python reads")
    return None
