"""What model calls cost: a small table of list prices that a run's config file can extend or override."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class Price(BaseModel):
    """US dollars per million tokens, as providers quote them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    output: float = Field(ge=0)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input + output_tokens * self.output) / 1e6


# List prices as published by the providers in 2025, keyed "provider/model". Prices change: a run's
# config file overrides any of them, and adds local or other models, under [prices."provider/model"].
DEFAULT_PRICES: dict[str, Price] = {
    name: Price(input=i, output=o)
    for name, (i, o) in {
        "openai/gpt-4.1": (2.0, 8.0),
        "openai/gpt-4.1-mini": (0.4, 1.6),
        "openai/gpt-4.1-nano": (0.1, 0.4),
        "openai/gpt-4o": (2.5, 10.0),
        "openai/gpt-4o-mini": (0.15, 0.6),
        "anthropic/claude-sonnet-4-5": (3.0, 15.0),
        "anthropic/claude-haiku-4-5": (1.0, 5.0),
        "anthropic/claude-opus-4-1": (15.0, 75.0),
    }.items()
}


def price_of(model: str, overrides: dict[str, Price]) -> Price | None:
    """The price of ``provider/model``, the config's own first; None when nobody priced it. A model called
    through litellm (``litellm/openai/gpt-4.1``) also has the price of its own name (``openai/gpt-4.1``)."""
    for name in (model, model.removeprefix("litellm/")):
        if price := overrides.get(name) or DEFAULT_PRICES.get(name):
            return price
    return None
