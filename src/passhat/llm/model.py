"""The one interface every model client speaks: chat messages and tool schemas in, a Completion out.

Messages use the OpenAI chat shape (roles system / user / assistant / tool, assistant ``tool_calls``
with JSON-string arguments) because most servers speak it natively; other providers translate at
their edge. Tool schemas are the domain's own: ``{"name", "description", "parameters"}``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from passhat.errors import UserError
from passhat.llm.errors import UnreadableAnswer
from passhat.untrusted import escape_text, redact

if TYPE_CHECKING:
    from passhat.llm.conversation import Conversation

Message = dict[str, Any]
ToolSchema = dict[str, Any]
PROVIDERS = ("openai", "anthropic", "litellm")


@dataclasses.dataclass(frozen=True)
class ModelRef:
    """``provider/model`` as written after ``llm:`` in ``--agent`` or ``--customer``. For litellm the model is
    litellm's own name, which starts with the provider litellm routes to (``litellm/gemini/gemini-2.0-flash``)."""

    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"

    @property
    def service(self) -> str:
        """Who answers when no base URL says otherwise: the provider, or for litellm the provider it routes to."""
        return f"{self.provider}/{self.model.partition('/')[0]}" if self.provider == "litellm" else self.provider

    @classmethod
    def parse(cls, spec: str, flag: str) -> ModelRef:
        provider, _, model = spec.removeprefix("llm:").strip().partition("/")
        if provider not in PROVIDERS or not model:
            raise UserError(
                f"{spec!r} in {flag} is not a model: write llm:<provider>/<model> with provider one of "
                f"{', '.join(PROVIDERS)}, e.g. llm:openai/gpt-4.1, llm:anthropic/claude-sonnet-4-5 or "
                f"llm:litellm/gemini/gemini-2.0-flash."
            )
        return cls(provider, model)


@dataclasses.dataclass(frozen=True)
class ModelToolCall:
    """A tool call as the model wrote it: ``arguments`` is the raw JSON text, valid or not."""

    id: str
    name: str
    arguments: str


@dataclasses.dataclass(frozen=True)
class Completion:
    """A model's answer with the tokens it took, and its cost in US dollars when the provider's SDK works it
    out (litellm does; the run's price table, when it prices the model, wins). Cached answers come back as
    stored."""

    text: str | None
    tool_calls: tuple[ModelToolCall, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Completion:
        calls = tuple(ModelToolCall(**c) for c in raw.get("tool_calls", ()))
        return cls(raw.get("text"), calls, raw.get("input_tokens", 0), raw.get("output_tokens", 0), raw.get("cost_usd"))

    def redacted(self) -> Completion:
        """The answer with every known secret redacted (an endpoint may echo the key it was sent)."""
        return self._mapped(redact)

    def escaped(self) -> Completion:
        """The answer with characters that are not text visibly escaped, so it can be sent on and stored."""
        return self._mapped(escape_text)

    def _mapped(self, f: Callable[[str], str]) -> Completion:
        calls = tuple(ModelToolCall(f(c.id), f(c.name), f(c.arguments)) for c in self.tool_calls)
        text = None if self.text is None else f(self.text)
        return dataclasses.replace(self, text=text, tool_calls=calls)

    def as_message(self) -> Message:
        """The assistant message that puts this answer back into a conversation (an answer with neither
        text nor calls as empty text: APIs refuse an assistant message with neither)."""
        message: Message = {"role": "assistant", "content": self.text if self.text is not None or self.tool_calls else ""}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}} for c in self.tool_calls
            ]
        return message


def as_text(value: Any) -> str | None:
    """A field the model wrote, as text: a string as is, any other JSON value as its JSON text."""
    return value if value is None or isinstance(value, str) else json_text(value)


def json_text(value: Any) -> str:
    """A JSON value the endpoint decoded, written back as JSON text."""
    try:
        return json.dumps(value, default=str)
    except RecursionError:
        raise UnreadableAnswer("its answer nests deeper than Python's JSON writer goes") from None


def token_count(value: Any) -> int:
    """A token count the endpoint reported; anything but a non-negative integer counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclasses.dataclass(frozen=True)
class Sampling:
    """Request parameters that change the answer, so they are part of the cache key."""

    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None

    def params(self) -> dict[str, Any]:
        """The parameters that are set, by their chat-completions names (as the OpenAI SDK and litellm take them)."""
        return {name: value for name, value in vars(self).items() if value is not None}


class ModelClient(Protocol):
    """One provider's transport. Raises the exceptions of ``llm.errors``: TransientError, ContextOverflow or
    ModelRequestError."""

    async def complete(self, conversation: Conversation, tools: list[ToolSchema], sampling: Sampling) -> Completion: ...

    async def aclose(self) -> None: ...
