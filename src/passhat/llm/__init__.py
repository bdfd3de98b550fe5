"""Model clients for LLM agents and customers: one small interface, OpenAI-compatible and Anthropic
transports, retries, a response cache, and token / cost accounting."""

from passhat.llm.accounting import Meter, metering
from passhat.llm.conversation import Conversation
from passhat.llm.errors import (
    ContextOverflow,
    ModelRequestError,
    ModelUnavailable,
    TransientError,
    UnreadableAnswer,
    classify_status,
    retry_after_seconds,
)
from passhat.llm.hub import Endpoint, ModelHub, RemoteCalls, role_models
from passhat.llm.model import Completion, Message, ModelRef, ModelToolCall
from passhat.llm.pricing import DEFAULT_PRICES, Price
from passhat.llm.retry import RetryPolicy, retrying
from passhat.llm.secrets import scrub

__all__ = [
    "DEFAULT_PRICES",
    "Completion",
    "ContextOverflow",
    "Conversation",
    "Endpoint",
    "Message",
    "Meter",
    "ModelHub",
    "ModelRef",
    "ModelRequestError",
    "ModelToolCall",
    "ModelUnavailable",
    "Price",
    "RemoteCalls",
    "RetryPolicy",
    "TransientError",
    "UnreadableAnswer",
    "classify_status",
    "metering",
    "retry_after_seconds",
    "retrying",
    "role_models",
    "scrub",
]
