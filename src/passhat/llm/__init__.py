"""Model clients for LLM agents and customers: one small interface, OpenAI-compatible and Anthropic
transports, retries, a response cache, and token / cost accounting."""

from passhat.llm.accounting import Meter, metering
from passhat.llm.errors import ContextOverflow, ModelRequestError, ModelUnavailable, TransientError, UnreadableAnswer
from passhat.llm.hub import Endpoint, ModelHub, role_models
from passhat.llm.model import Completion, Message, ModelRef, ModelToolCall
from passhat.llm.pricing import DEFAULT_PRICES, Price
from passhat.llm.secrets import scrub

__all__ = [
    "DEFAULT_PRICES",
    "Completion",
    "ContextOverflow",
    "Endpoint",
    "Message",
    "Meter",
    "ModelHub",
    "ModelRef",
    "ModelRequestError",
    "ModelToolCall",
    "ModelUnavailable",
    "Price",
    "TransientError",
    "UnreadableAnswer",
    "metering",
    "role_models",
    "scrub",
]
