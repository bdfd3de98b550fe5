"""The models of one run: a client per role, a concurrency limit per role (the agent and the customer never
wait for each other's connections, even on one server), retries, the cache and
the meter, put together so that agents and customers only ever call ``Endpoint.complete``.

A hub lives inside one event loop (the run's) and is closed at the run's end. It also carries the run's
rules for remote calls (``RemoteCalls``: timeout, connections, retries), so that other remote parties of
a run (an agent served over HTTP) are called by the same rules, and closes their clients with its own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from pathlib import Path
from typing import Protocol

from passhat.llm.accounting import current_meter
from passhat.llm.anthropic_client import AnthropicClient
from passhat.llm.cache import ResponseCache, cache_key
from passhat.llm.conversation import Conversation
from passhat.llm.litellm_client import LiteLLMClient
from passhat.llm.model import Completion, ModelClient, ModelRef, Sampling, ToolSchema
from passhat.llm.openai_client import OpenAIClient
from passhat.llm.pricing import Price, price_of
from passhat.llm.retry import RetryPolicy, retrying
from passhat.llm.secrets import api_key, check_base_url

ROLES = ("agent", "user")  # the config's agent / user spec, base URL and temperature, by these prefixes
CLIENTS: dict[str, type[OpenAIClient | AnthropicClient | LiteLLMClient]] = {
    "openai": OpenAIClient,
    "anthropic": AnthropicClient,
    "litellm": LiteLLMClient,
}


class Closeable(Protocol):
    async def aclose(self) -> None: ...


class HubConfig(Protocol):
    """The fields of a run's configuration that concern models (RunConfig has them)."""

    agent: str
    user: str
    agent_base_url: str | None
    user_base_url: str | None
    agent_temperature: float | None
    user_temperature: float | None
    max_connections: int
    request_timeout: float
    max_retries: int
    retry_backoff: float
    cache: str | None
    prices: dict[str, Price]


@dataclasses.dataclass(frozen=True)
class RoleModel:
    """What one role (agent or user) is run with, read from the config and checked."""

    role: str
    ref: ModelRef
    base_url: str | None
    temperature: float | None
    key: str

    @property
    def endpoint(self) -> tuple[str, str | None]:
        """What --max-connections bounds: requests in flight to one server."""
        return (self.ref.service, self.base_url)


def role_models(config: HubConfig) -> list[RoleModel]:
    """The roles played by models, with their keys; a UserError before any trial if one is unusable."""
    found = []
    for role in ROLES:
        spec = getattr(config, role)
        if not spec.startswith("llm:"):
            continue
        ref = ModelRef.parse(spec, f"--{role}")
        base_url = getattr(config, f"{role}_base_url")
        check_base_url(base_url, f"--{role}-base-url")
        CLIENTS[ref.provider].check(ref.model, f"--{role}")  # an optional extra, a model name: now, not in every trial
        key = api_key(ref.provider, base_url, f"--{role}")
        found.append(RoleModel(role, ref, base_url, getattr(config, f"{role}_temperature"), key))
    return found


class Endpoint:
    """One role's model: cache first, then the endpoint under its connection limit, with retries."""

    def __init__(
        self, model: RoleModel, client: ModelClient, limit: asyncio.Semaphore, policy: RetryPolicy,
        cache: ResponseCache | None, price: Price | None,
    ):  # fmt: skip
        self.model, self._client, self._limit, self._policy = model, client, limit, policy
        self._cache, self._price = cache, price

    async def complete(self, conversation: Conversation, tools: list[ToolSchema], seed: int | None = None) -> Completion:
        """The model's answer, known secrets redacted. Raises ContextOverflow, UnreadableAnswer, ModelRequestError,
        or ModelUnavailable after retries."""
        sampling = Sampling(temperature=self.model.temperature, seed=seed)
        key = cache_key(self.model.ref, sampling, conversation.messages, tools) if self._cache else None
        cached = self._cache.get(key) if self._cache and key else None
        if cached is not None:
            self._meter(cached, None)
            return cached
        where = self.model.base_url or f"the {self.model.ref.provider} API"
        completion, latency = await retrying(
            lambda: self._attempt(conversation, tools, sampling),
            self._policy,
            f"{self.model.role} model {self.model.ref} at {where}",
        )
        completion = completion.redacted()  # before anything keeps it: an endpoint may echo the key it was sent
        if self._cache and key:
            self._cache.put(key, completion)
        self._meter(completion, latency)
        return completion

    async def _attempt(self, conversation: Conversation, tools: list[ToolSchema], sampling: Sampling) -> tuple[Completion, float]:
        async with self._limit:
            started = time.perf_counter()
            completion = await self._client.complete(conversation, tools, sampling)
            return completion, time.perf_counter() - started

    def _meter(self, completion: Completion, latency: float | None) -> None:
        meter = current_meter()
        if meter is None:
            return
        # the run's price table wins over what the provider's SDK works out (litellm), so a model costs the same by any route
        cost = self._price.cost(completion.input_tokens, completion.output_tokens) if self._price else completion.cost_usd
        meter.record(self.model.role, str(self.model.ref), completion, cost, latency)


@dataclasses.dataclass(frozen=True)
class RemoteCalls:
    """How a run calls a remote party: seconds before a request is given up (and retried), requests in
    flight per endpoint, and the retries of transient failures."""

    timeout: float
    max_connections: int
    retry: RetryPolicy

    @classmethod
    def from_config(cls, config: HubConfig) -> RemoteCalls:
        policy = RetryPolicy(retries=config.max_retries, base_delay=config.retry_backoff)
        return cls(config.request_timeout, config.max_connections, policy)


class ModelHub:
    def __init__(
        self, endpoints: dict[str, Endpoint], clients: list[Closeable], cache: ResponseCache | None, remote: RemoteCalls
    ):
        self._endpoints, self._clients, self._cache = endpoints, clients, cache
        self.remote = remote

    @classmethod
    def from_config(cls, config: HubConfig) -> ModelHub:
        """Build the run's clients; call it inside the run's event loop."""
        models = role_models(config)
        remote = RemoteCalls.from_config(config)
        cache = ResponseCache(Path(config.cache)) if config.cache and models else None
        endpoints, clients = {}, []
        for m in models:
            client = CLIENTS[m.ref.provider](m.ref.model, m.key, m.base_url, remote.timeout, remote.max_connections)
            clients.append(client)
            limit = asyncio.Semaphore(remote.max_connections)
            endpoints[m.role] = Endpoint(m, client, limit, remote.retry, cache, price_of(str(m.ref), config.prices))
        return cls(endpoints, clients, cache, remote)

    def endpoint(self, role: str) -> Endpoint:
        return self._endpoints[role]

    def adopt(self, client: Closeable) -> None:
        """Close ``client`` with the run's own clients, at the run's end."""
        self._clients.append(client)

    async def aclose(self) -> None:
        for client in self._clients:
            await client.aclose()
        if self._cache:
            self._cache.close()
