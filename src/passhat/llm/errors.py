"""What can go wrong with a model call, and which side of the line each failure falls on.

Transient failures are retried; after the last retry they become ModelUnavailable, an infra error
(the trial cannot be judged). A prompt that no longer fits the context window, and an answer that
holds what Python cannot read, are the model's own failures. Any other refusal (bad key, unknown
model) cannot be cured by retrying.
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import time
from collections.abc import Mapping


class TransientError(Exception):
    """A failure worth retrying: rate limit, server error, lost connection, timeout. ``retry_after``: the
    seconds the server asked to wait first (its Retry-After header), if it said."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


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


def classify_status(status: int, message: str, code: str | None = None, retry_after: float | None = None) -> Exception:
    """Map an endpoint's HTTP error answer to one of the exceptions above (shared by every provider and by
    agent services); ``retry_after`` goes with a retryable one."""
    if status >= 500 or status in RETRYABLE_STATUS:
        return TransientError(f"HTTP {status}: {message}", retry_after)
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


def asked_wait(exc: Exception) -> float | None:
    """The wait an SDK's HTTP error asks for: its response's ``retry-after-ms`` (OpenAI's, in milliseconds) or
    ``Retry-After`` header. The openai and anthropic SDKs keep the response on the exception; litellm keeps the
    headers of the providers it calls itself (Anthropic, Bedrock, Gemini…) in ``litellm_response_headers``."""
    headers = getattr(exc, "litellm_response_headers", None) or getattr(getattr(exc, "response", None), "headers", None)
    return header_wait(headers) if headers else None


def header_wait(headers: Mapping[str, str]) -> float | None:
    """The wait an HTTP error answer's headers ask for: ``retry-after-ms`` (OpenAI's, in milliseconds), else
    ``Retry-After``; ``headers`` looked up without regard to case (as httpx's are)."""
    if (millis := retry_after_seconds(headers.get("retry-after-ms"))) is not None:
        return millis / 1000
    return retry_after_seconds(headers.get("retry-after"))


def retry_after_seconds(header: str | None) -> float | None:
    """The wait a Retry-After header asks for, in seconds (it is a number of seconds or an HTTP date);
    None when there is no header or it says nothing usable."""
    if not header:
        return None
    try:
        seconds = float(header)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(header).timestamp() - time.time()
        except (TypeError, ValueError, OverflowError):
            return None
    return max(0.0, seconds) if math.isfinite(seconds) else None
