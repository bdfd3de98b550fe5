"""Every provider litellm reaches (Bedrock, Vertex AI, Gemini, Azure, Mistral, Cohere…) through the optional
extra ``passhat[litellm]``: ``llm:litellm/<litellm model>``, e.g. ``llm:litellm/gemini/gemini-2.0-flash``.

litellm speaks the OpenAI chat shape on both sides, so messages and tool schemas go in as they are and the
answer, litellm's objects of the openai SDK's shape, is read field by field as the OpenAI client reads its JSON. Retries, the connection limit and the cache stay passhat's
(litellm's own retries are off), so every provider retries, waits and counts alike. litellm reads each
provider's credentials from that provider's usual variables; ``--agent-base-url`` becomes its ``api_base``.

Its exceptions derive from the openai SDK's and keep the HTTP response, so they are classified, and their
Retry-After read, as the OpenAI client's are. Two are litellm's own: a context-window error it recognised
for the provider, and an answer the JSON reader refused, which litellm reports as an HTTP 500 with the
reader's error as its cause.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import TYPE_CHECKING, Any

from passhat.errors import UserError
from passhat.llm.conversation import Conversation
from passhat.llm.errors import ContextOverflow, TransientError, UnreadableAnswer, asked_wait, classify_status, undecodable_answer
from passhat.llm.extras import import_extra
from passhat.llm.model import Completion, ModelToolCall, Sampling, ToolSchema, as_text, token_count
from passhat.llm.request_body import function_tools

if TYPE_CHECKING:
    import openai

OFFLINE = "LITELLM_OFFLINE_MODE"  # litellm then uses its bundled price list and tokenizers, never downloads them


def load_sdk() -> ModuleType:
    """litellm, set up for a harness: nothing fetched at import (its price list would be downloaded from the
    internet otherwise, slowly or not at all, and would change costs between runs) unless the user sets
    LITELLM_OFFLINE_MODE itself, and no banner printed to stdout for every failed call."""
    os.environ.setdefault(OFFLINE, "true")
    litellm = import_extra("litellm")
    litellm.suppress_debug_info = True
    return litellm


def sdk_errors() -> ModuleType:
    """The openai SDK, whose exceptions litellm's derive from: imported with litellm, which needs it anyway, and
    not with every run (it is the slowest import of all)."""
    return importlib.import_module("openai")


class LiteLLMClient:
    def __init__(self, model: str, api_key: str, base_url: str | None, timeout: float, connections: int):
        """``connections`` is bounded by the hub already; litellm pools the connections of its providers itself."""
        self.model = model
        self._litellm = load_sdk()
        self._fixed: dict[str, Any] = {
            "model": model,
            "api_base": base_url,
            "api_key": api_key or None,  # None: litellm reads the provider's own variable
            "timeout": timeout,
            "max_retries": 0,  # the provider SDK's retries …
            "num_retries": 0,  # … and litellm's: retrying is retry.py's job
            "drop_params": True,  # a provider without ``seed`` (Anthropic, Bedrock) is sent none, not refused
        }

    @classmethod
    def check(cls, model: str, flag: str) -> None:
        """Before a run: the extra is installed and litellm knows which provider ``model`` goes to."""
        litellm = load_sdk()
        try:
            litellm.get_llm_provider(model=model)
        except sdk_errors().APIError:
            raise UserError(
                f"llm:litellm/{model} in {flag} names no provider litellm knows: write llm:litellm/<provider>/<model> "
                f"with litellm's provider name, e.g. llm:litellm/gemini/gemini-2.0-flash or llm:litellm/bedrock/<model id>."
            ) from None

    async def complete(self, conversation: Conversation, tools: list[ToolSchema], sampling: Sampling) -> Completion:
        request = {**self._fixed, "messages": conversation.messages, **sampling.params()}
        if tools:
            request["tools"] = function_tools(tools)
        try:
            response = await self._litellm.acompletion(**request)
        except self._litellm.ContextWindowExceededError as exc:
            raise ContextOverflow(exc.message) from None
        except sdk_errors().APIError as exc:
            raise (_unreadable(exc) or sdk_failure(exc)) from None
        return chat_completion(response, _cost(response))

    async def aclose(self) -> None:
        """litellm keeps its HTTP clients for the process, not per caller: nothing of this client's to close."""


def _unreadable(exc: BaseException) -> Exception | None:
    """The model's failure when the JSON reader refused what it wrote (litellm reports that as an HTTP 500
    caused by the reader's error); None for any other failure."""
    cause, seen = exc.__cause__ or exc.__context__, set[int]()
    while cause is not None and id(cause) not in seen:  # a chain can loop back on itself
        if isinstance(cause, ValueError | RecursionError) and isinstance(meaning := undecodable_answer(cause), UnreadableAnswer):
            return meaning
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _cost(response: Any) -> float | None:
    """What litellm worked out the call cost from its own price list, in US dollars; None when it has no
    price for the model."""
    hidden = getattr(response, "_hidden_params", None)
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    return float(cost) if isinstance(cost, float | int) and not isinstance(cost, bool) and cost >= 0 else None


def sdk_failure(exc: openai.APIError) -> Exception:
    """What an exception of the openai SDK (litellm's derive from them) means: a lost connection or a timeout is
    transient, an HTTP error is classified by its status, with the wait its headers ask for."""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, sdk_errors().APIConnectionError) or not isinstance(status, int):
        return TransientError(f"{type(exc).__name__}: {exc}")
    code = exc.code if isinstance(getattr(exc, "code", None), str) else None
    return classify_status(status, exc.message, code, asked_wait(exc))


def chat_completion(response: Any, cost_usd: float | None = None) -> Completion:
    """litellm's chat completion (objects of the openai SDK's shape) read field by field."""
    choices = getattr(response, "choices", None)
    if not choices or not isinstance(choices, list):
        raise TransientError("the endpoint answered with no choices")
    message = getattr(choices[0], "message", None)
    calls = getattr(message, "tool_calls", None) or []
    if message is None or not isinstance(calls, list):
        raise TransientError("the endpoint's answer is not a chat completion (no message, or tool_calls not a list)")
    usage = getattr(response, "usage", None)
    return Completion(
        text=as_text(getattr(message, "content", None)),
        tool_calls=tuple(_tool_call(call, i) for i, call in enumerate(calls)),
        input_tokens=token_count(getattr(usage, "prompt_tokens", None)),
        output_tokens=token_count(getattr(usage, "completion_tokens", None)),
        cost_usd=cost_usd,
    )


def _tool_call(call: Any, i: int) -> ModelToolCall:
    """A call as the model wrote it; a missing id gets one, missing name or arguments are empty."""
    function = getattr(call, "function", None)
    return ModelToolCall(
        as_text(getattr(call, "id", None)) or f"call_{i}",
        as_text(getattr(function, "name", None)) or "",
        as_text(getattr(function, "arguments", None)) or "",
    )
