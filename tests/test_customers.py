"""The scripted customer: what it understands, what it confirms, how personas change it, and determinism.

Tasks here are small, built in code on the retail backend (customer C-101971 and their orders), so
the customer is tested apart from the task files; tests/test_reference_agents.py reuses them.
"""

from __future__ import annotations

import asyncio
import random

import pytest

from passhat.agents.base import AgentTurn
from passhat.customers import ScriptedUser, resolve_user
from passhat.customers.personas import PERSONAS
from passhat.customers.wording import TEMPLATES
from passhat.dialogue import is_affirmative
from passhat.dialogue.reading import read_message
from passhat.domains import load_domain
from passhat.domains.model import Task
from passhat.errors import UserError
from passhat.run.trial import TrialSpec, run_trial

RETAIL = load_domain("retail")

SOREN = {
    "customer_id": "C-101971",
    "first_name": "Soren",
    "last_name": "Underhill",
    "zip": "44105",
    "email": "soren.underhill399@example.org",
}
CANCEL = {
    "kind": "cancel",
    "outcome": "done",
    "order_id": "#R9330383",
    "reason": "no longer needed",
    "request": [
        "I want to cancel my order #R9330383, I no longer need it.",
        "Please cancel order #R9330383; I don't need it anymore.",
    ],
    "actions": [{"tool": "cancel_order", "args": {"order_id": "#R9330383", "reason": "no longer needed"}}],
}
RETURN = {
    "kind": "return",
    "outcome": "done",
    "order_id": "#R3481002",
    "payment": "the card I paid with",
    "request": [
        "I'd like to return the rain jacket from my order #R3481002.",
        "Can I send back the black rain jacket from order #R3481002?",
    ],
    "items": [{"item_id": "V-47122", "description": "black rain jacket"}],
    "actions": [
        {"tool": "return_items", "args": {"order_id": "#R3481002", "item_ids": ["V-47122"], "payment_method_id": "card_82689"}}
    ],
    "tell": [{"fact": "return_refund", "of": {"order_id": "#R3481002", "item_ids": ["V-47122"]}, "is": "95.99"}],
}
REFUSED = {
    "kind": "cancel",
    "outcome": "refused",
    "order_id": "#R3481002",
    "reason": "no longer needed",
    "request": ["Please cancel my order #R3481002."],
    "forbidden": [{"tool": "cancel_order", "args": {"order_id": "#R3481002", "reason": "no longer needed"}}],
    "explanation": "order #R3481002 has already been delivered, and only pending orders can be cancelled.",
}
STATUS = {
    "kind": "info",
    "outcome": "answered",
    "order_id": "#R4769982",
    "knows_order_id": False,
    "order_hint": "the one with the white standing desk converter",
    "request": ["What's the status of my desk converter order?"],
    "lookups": [{"tool": "get_order", "args": {"order_id": "#R4769982"}}],
    "tell": [{"fact": "order_status", "of": {"order_id": "#R4769982"}, "is": "pending"}],
}
CANCEL_BOTH = {
    "kind": "cancel",
    "outcome": "done",
    "reason": "ordered by mistake",
    "request": ["I ordered twice by mistake: please cancel both #R9330383 and #R4769982."],
    "actions": [
        {"tool": "cancel_order", "args": {"order_id": o, "reason": "ordered by mistake"}} for o in ("#R9330383", "#R4769982")
    ],
}
TRANSFER = {
    "kind": "transfer",
    "outcome": "transferred",
    "request": ["I want to speak to a person about a billing dispute."],
    "actions": [{"tool": "transfer_to_human", "args": {"customer_id": "C-101971", "summary": "billing dispute"}}],
}


def make_task(id: str, *goals: dict, email: bool = True) -> Task:
    customer = SOREN if email else {k: v for k, v in SOREN.items() if k != "email"}
    return RETAIL.task_model.model_validate(
        {"id": id, "summary": id, "customer": customer, "instruction": id, "goals": list(goals)}
    )


TASKS = [
    make_task("cancel", CANCEL),
    make_task("return", RETURN),
    make_task("refused", REFUSED),
    make_task("status-by-name", STATUS, email=False),
    make_task("return-then-cancel", RETURN, CANCEL),
    make_task("status-then-transfer", STATUS, TRANSFER),
    make_task("cancel-two-orders", CANCEL_BOTH),
]
BY_ID = {t.id: t for t in TASKS}


def customer(task_id: str, persona: str = "baseline", seed: int = 0) -> ScriptedUser:
    return ScriptedUser(RETAIL, BY_ID[task_id], PERSONAS[persona], random.Random(seed))


def say(user: ScriptedUser, text: str | None):
    return asyncio.run(user.respond(text))


def opened(task_id: str, persona: str = "baseline", seed: int = 0) -> ScriptedUser:
    user = customer(task_id, persona, seed)
    say(user, None)
    return user


CANCEL_PROPOSAL = (
    "Thanks, Soren! Before I proceed: you'd like to cancel order #R9330383 because it is no longer needed, and the "
    "full amount goes back to your card. Would you like me to go ahead with the cancellation? (yes/no)"
)
RETURN_PROPOSAL = "I can return the Rain Jacket (V-47122) from order #R3481002 and refund $95.99 to card_82689. Shall I proceed?"


# -- understanding --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'm transferring you to a human agent now. Please hold.", {"handoff"}),
        ("Let me connect you with one of our specialists who can look into this.", {"handoff"}),
        (CANCEL_PROPOSAL, {"proposal"}),
        (RETURN_PROPOSAL, {"proposal"}),
        (
            "Just to confirm, I'll change the shipping address of #R9330383 to 12 Heron Lane, Salem OR 97310. "
            "Please reply 'yes' to confirm.",
            {"proposal"},
        ),
        ("Your order #R9330383 has been cancelled and $169.33 will be refunded within 5-7 business days.", {"report"}),
        ("All done! I've processed the return for the rain jacket.", {"report"}),
        ("I'm sorry, but I'm unable to cancel that order because it has already been delivered.", {"refusal"}),
        ("Unfortunately our policy doesn't allow exchanges on cancelled orders.", {"refusal"}),
        ("To get started, could you please provide the email address associated with your account?", {"asks:identity"}),
        ("Can I have your first and last name and your zip code so I can locate your account?", {"asks:identity"}),
        ("Which order would you like to cancel?", {"asks:order"}),
        ("Could you share the order number?", {"asks:order"}),
        ("Which items would you like to return?", {"asks:items"}),
        ("Which size would you like instead?", {"asks:items"}),
        ("Which payment method should the refund go to?", {"asks:payment"}),
        ("What is the new shipping address?", {"asks:address"}),
        ("May I ask the reason for the cancellation?", {"asks:reason"}),
        ("Is there anything else I can help you with today?", {"anything_else"}),
        ("Let me know if there's anything else you need!", {"anything_else"}),
        ("I wasn't able to find an account with that email. Could you double-check it?", {"not_found"}),
        ("Thanks for reaching out. Have a great day!", {"closing"}),
        ("Let me check that for you, one moment.", {"working"}),
        ("Your order #R4769982 is currently pending and should ship within two days.", {"informative"}),
        # LLM-style: lists, summaries, curly quotes, questions that are really proposals or asks
        (
            "Here\u2019s a summary:\n- Order: #R9330383\n- Action: Cancel\n- Reason: no longer needed\n\n"
            "Please confirm (yes/no) if you would like me to proceed.",
            {"proposal"},
        ),
        (
            "Just to make sure I understood: you want to return the rain jacket (V-47122) from order #R3481002 and get "
            "the refund of $95.99 on card_82689, correct?",
            {"proposal"},
        ),
        (
            "I apologize, but I cannot process a return for #R9330383 since it has not been delivered yet. Would you "
            "like to cancel it instead?",
            {"proposal", "refusal"},  # a refusal with an alternative: both (the customer settles a refused goal on it)
        ),
        (
            "Thank you, Soren. I've located your account and order #R9330383. To cancel, I need to know the reason: is it "
            "'no longer needed' or 'ordered by mistake'?",
            {"asks:reason"},
        ),
        (
            "Would you like the refund to go to your original payment method (card_82689) or to your gift card (gift_966263)?",
            {"asks:payment"},
        ),
        ("Great, thank you for confirming! Let me process that for you now.", {"working"}),
        ("Unfortunately, delivered orders can only be returned, not cancelled.", {"refusal"}),
        ("I'm afraid I need your email address first. Could you share it?", {"asks:identity"}),
        ("Thank you for reaching out! I'll look into your order right away.", {"working"}),
    ],
)
def test_understanding_reads_varied_agent_wording(text: str, expected: set[str]) -> None:
    reading = read_message(text, RETAIL.lexicon)
    seen = {f"asks:{s}" for s in reading.asks} | {
        name
        for name in (
            "handoff",
            "proposal",
            "report",
            "refusal",
            "not_found",
            "anything_else",
            "closing",
            "working",
            "informative",
        )
        if getattr(reading, name)
    }
    assert expected <= seen
    assert not ({"proposal", "refusal", "handoff", "closing"} - expected) & seen, seen


def test_a_detail_question_with_confirm_is_an_ask_not_a_proposal() -> None:
    reading = read_message("Could you confirm the email on the account so I can cancel it?", RETAIL.lexicon)
    assert reading.asks == {"identity"} and not reading.proposal


def test_a_report_and_the_next_proposal_in_one_message_are_both_read() -> None:
    reading = read_message(
        "The return of V-47122 has been completed. I can also cancel order #R9330383. Shall I go ahead? Please answer yes or no.",
        RETAIL.lexicon,
    )
    assert reading.report and reading.proposal and reading.ids == ("V-47122", "#R9330383")


# -- confirming ---------------------------------------------------------------------------------


def test_confirms_a_proposal_that_matches_its_goal() -> None:
    assert is_affirmative(say(opened("cancel"), CANCEL_PROPOSAL).text)
    assert is_affirmative(say(opened("return"), RETURN_PROPOSAL).text)


def test_an_item_counts_as_named_by_its_product_as_well_as_by_its_id() -> None:
    by_name = "I can return your black Rain Jacket from order #R3481002, refunding $95.99 to card_82689. Shall I proceed?"
    assert is_affirmative(say(opened("return"), by_name).text)
    unnamed = "I can return the item from order #R3481002, refunding $95.99 to card_82689. Shall I proceed?"
    assert not is_affirmative(say(opened("return"), unnamed).text)


@pytest.mark.parametrize(
    ("task_id", "proposal"),
    [
        ("cancel", CANCEL_PROPOSAL.replace("#R9330383", "#R4769982")),  # wrong order
        ("return", RETURN_PROPOSAL.replace("V-47122", "V-61841")),  # wrong item
        ("return", RETURN_PROPOSAL.replace("card_82689", "card_82689 and also gift_966263")),  # an id it did not ask for
        ("cancel", CANCEL_PROPOSAL + " I'll also cancel #R4769982 while I'm at it."),  # an unrelated extra order
        ("cancel", RETURN_PROPOSAL),  # another goal's action
    ],
)
def test_declines_a_proposal_that_does_not_match(task_id: str, proposal: str) -> None:
    reply = say(opened(task_id), proposal)
    assert not is_affirmative(reply.text) and reply.text.startswith("No") and reply.stop is None


def test_gives_up_after_repeated_wrong_proposals() -> None:
    user = opened("cancel")
    wrong = CANCEL_PROPOSAL.replace("#R9330383", "#R4769982")
    replies = [say(user, wrong) for _ in range(3)]
    assert [r.stop for r in replies] == [None, None, "unsatisfied"]


def test_a_refused_goal_confirms_the_forbidden_call_it_wants() -> None:
    proposal = 'I can cancel order #R3481002 with the reason "no longer needed". Shall I go ahead? Please answer yes or no.'
    assert is_affirmative(say(opened("refused"), proposal).text)


def test_skeptical_customer_asks_before_its_first_yes() -> None:
    user = opened("cancel", "skeptical")
    question = say(user, CANCEL_PROPOSAL)
    assert "?" in question.text and not is_affirmative(question.text) and not question.text.startswith("No")
    assert is_affirmative(say(user, "It's what you asked for and the order is still pending. " + CANCEL_PROPOSAL).text)


# -- goals, endings and patience ------------------------------------------------------------------


def test_states_the_next_goal_at_anything_else_then_closes_satisfied() -> None:
    user = opened("return-then-cancel")
    assert is_affirmative(say(user, RETURN_PROPOSAL).text)
    nxt = say(user, "The return has been processed. Is there anything else I can help you with?")
    assert "#R9330383" in nxt.text and nxt.stop is None
    assert is_affirmative(say(user, CANCEL_PROPOSAL).text)
    assert say(user, "Order #R9330383 has been cancelled. Anything else?").stop == "satisfied"


def test_accepts_the_refusal_of_a_refused_goal() -> None:
    user = opened("refused")
    reply = say(user, "I'm sorry, but delivered orders can't be cancelled. Is there anything else I can help you with?")
    assert reply.stop == "satisfied"


def test_pushes_back_once_then_leaves_when_an_allowed_request_is_declined() -> None:
    user = opened("cancel")
    first = say(user, "I'm afraid I can't do that.")
    assert first.stop is None and "#R9330383" in first.text
    assert say(user, "I'm sorry, it is not possible.").stop == "unsatisfied"


def test_a_goodbye_with_goals_left_is_unsatisfied() -> None:
    user = opened("return-then-cancel")
    say(user, RETURN_PROPOSAL)
    assert say(user, "Done, the return has been processed. Thank you for contacting us, goodbye!").stop == "unsatisfied"


def test_an_answer_settles_an_informational_goal_but_an_empty_reply_does_not() -> None:
    user = opened("status-by-name")
    restated = say(user, "Is there anything else I can help you with?")
    assert restated.stop is None and "status" in restated.text
    assert say(user, "Your order #R4769982 is pending. Is there anything else I can help you with?").stop == "satisfied"


def test_answers_from_the_task_fields() -> None:
    user = opened("status-by-name")
    identity = say(user, "Could you give me your email address, or your name and zip code?").text
    assert "Soren Underhill" in identity and "44105" in identity and "@" not in identity
    assert "white standing desk converter" in say(user, "Which order is this about?").text
    user = opened("return")
    answer = say(user, "Which items would you like to return, and which payment method should the refund go to?").text
    assert "V-47122" in answer and "the card I paid with" in answer
    assert "card_82689" not in answer  # the backend's id for the card: no shopper knows it


def _stall(persona: str) -> list:
    class Staller:
        async def act(self, events):
            return AgentTurn(text="Let me check on that for you, one moment.")

    spec = TrialSpec(BY_ID["cancel"], PERSONAS[persona], 0, 7)
    return asyncio.run(run_trial(RETAIL, spec, lambda setup: Staller(), resolve_user("scripted"))).events


def test_impatient_customer_abandons_an_agent_that_stalls() -> None:
    events = _stall("impatient")
    assert events[-1].text == "abandoned"
    assert sum(e.kind == "agent" for e in events) == PERSONAS["impatient"].patience + 1


def test_calm_customer_waits_longer_but_still_bounds_its_loop() -> None:
    events = _stall("baseline")
    assert events[-1].text == "unsatisfied"
    assert sum(e.kind == "agent" for e in events) > PERSONAS["impatient"].patience + 1


# -- incoherent customer --------------------------------------------------------------------------


def test_incoherent_customer_corrects_a_mistyped_email_when_not_found() -> None:
    typos = 0
    for seed in range(40):
        user = opened("cancel", "incoherent", seed)
        given = say(user, "Could you tell me your email address?").text
        if "Soren" in given and "@" not in given:  # first name only: the full identity comes when asked again
            given = say(user, "I need your email address to find your account.").text
        if SOREN["email"] not in given:
            typos += 1
            fixed = say(user, "I couldn't find an account with that email. Could you double-check it?").text
            assert SOREN["email"] in fixed
    assert typos > 0


# -- wording and determinism ----------------------------------------------------------------------


def test_only_yes_templates_are_affirmative_and_every_no_reads_as_a_no() -> None:
    """The engine's templates and the domain's phrasings alike: only a yes template can confirm a write."""
    for kind, tones in [*TEMPLATES.items(), *RETAIL.kit.phrasings.items()]:
        for tone, options in tones.items():
            for template in options:
                text = template.format(
                    email="a@b.co",
                    first="Ann",
                    last="Lee",
                    zip="12345",
                    order_id="#R1234567",
                    hint="the red one",
                    items="the lamp (V-12345)",
                    payment="card_1234",
                    address="1 Main St",
                    reason="no longer needed",
                )
                assert is_affirmative(text) == (kind == "yes"), (kind, tone, text)
                if kind == "no":
                    assert text.lower().startswith("no"), text


def _dialogue(seed: int, persona: str = "baseline") -> list[str]:
    user = customer("return-then-cancel", persona, seed)
    script = [
        None,
        "Could you give me your email address?",
        "Which items do you mean?",
        RETURN_PROPOSAL,
        "The return has been completed. Anything else?",
        CANCEL_PROPOSAL,
        "Order #R9330383 is cancelled. Anything else?",
    ]
    return [say(user, text).text for text in script]


def test_same_seed_same_words_and_other_seeds_other_words() -> None:
    assert _dialogue(3) == _dialogue(3)
    assert len({tuple(_dialogue(seed)) for seed in range(8)}) > 1


def test_upset_wording_keeps_the_same_facts() -> None:
    calm, upset = _dialogue(5), _dialogue(5, "emotional")
    assert calm != upset
    for fact in (SOREN["email"], "V-47122", "#R9330383"):
        assert any(fact in t for t in calm) == any(fact in t for t in upset)


def test_resolve_user() -> None:
    assert resolve_user("scripted") is ScriptedUser
    with pytest.raises(UserError, match=r"--customer.*scripted"):
        resolve_user("llm")


def test_an_information_goal_is_settled_only_by_an_answer():
    """ "Your identity is verified" answers nothing; a status (even a wrong one: the customer cannot know) does."""
    user = opened("status-by-name")
    waiting = say(user, "Thank you, your identity is verified.")
    assert waiting.stop is None and "desk converter" in waiting.text
    answered = say(user, "Your order #R4769982 is currently pending. Is there anything else I can help you with?")
    assert answered.stop == "satisfied"
