"""Retail's task file model: a shopper who identifies by email or name and zip code, and goals about orders."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from passhat.domains.model import Customer, Goal, Task


class Shopper(Customer):
    """Who the customer is and which identifying facts they can give the agent."""

    first_name: str
    last_name: str
    zip: str
    email: str | None = None  # None: the customer does not remember it and must use name + zip


class ItemRef(BaseModel):
    """An item as the customer knows it: its id (which they may read out) and how they describe it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str
    description: str


class OrderGoal(Goal):
    """A goal about one order: which one, its items, the payment method and address wanted, and why."""

    order_id: str | None = None
    knows_order_id: bool = True
    order_hint: str | None = None  # how the customer describes the order when they lack its id
    items: list[ItemRef] = Field(default_factory=list)
    new_items: list[ItemRef] = Field(default_factory=list)
    payment: str | None = None  # how the customer names the payment method they want used
    address: dict[str, str] | None = None
    reason: str | None = None

    @model_validator(mode="after")
    def _order_is_findable(self) -> OrderGoal:
        if not self.knows_order_id and self.order_id and not self.order_hint:
            raise ValueError("a customer without the order id needs an 'order_hint'")
        return self


class RetailTask(Task):
    customer: Shopper
    preferences: dict[str, str] = Field(default_factory=dict)  # what the customer would choose, said if asked
    goals: list[OrderGoal] = Field(min_length=1)
