"""How the scripted customer words things, per tone. Facts and goals never depend on the wording.

Every template of kind ``yes`` must pass ``passhat.dialogue.is_affirmative`` and every other template
must fail it (a test checks all of them), so that only an intended yes can ever count as confirming a
write. Every ``no`` template starts with "No", so an agent can always tell a refusal from a question.
"""

from __future__ import annotations

import random

from passhat.users.personas import Persona

Tone = str  # "plain" | "terse" | "upset" | "scattered"

TEMPLATES: dict[str, dict[Tone, tuple[str, ...]]] = {
    "greeting": {
        "plain": ("Hi there.", "Hello!", "Good afternoon.", "Hi, I hope you can help me."),
        "terse": ("Hi.", "Quick one.", "Hello."),
        "upset": ("Hi, I really need help right now!", "Hello, I'm so stressed about this!", "Please help me, this is urgent!"),
        "scattered": ("hiya, um", "oh hi,", "hello hello, ok"),
    },
    "urgency": {
        "plain": ("",),
        "upset": ("Please, this is really urgent!", "I've been worrying about this all day!", "I need this sorted today!"),
    },
    "yes": {
        "plain": (
            "Yes, please go ahead.",
            "Yes, that's right. Please proceed.",
            "Sure, go ahead.",
            "Yes please.",
            "Correct, please do.",
        ),
        "terse": ("Yes.", "Yep, do it.", "Go ahead."),
        "upset": ("Yes! Please just do it, quickly!", "Yes, please, as fast as possible!", "Yes, go ahead, finally!"),
        "scattered": ("yes yes, go ahead", "yeah that's the one, go ahead", "yep, please do"),
    },
    "no": {
        "plain": ("No, that's not what I asked for.", "No, that isn't right.", "No, that's not quite it."),
        "terse": ("No.", "No, wrong.", "No, that's not it."),
        "upset": ("No! That's not what I want at all!", "No, no, that's wrong!", "No! Please listen to me!"),
        "scattered": ("no no, that's not it", "no wait, that's not what I meant"),
    },
    "why": {
        "plain": (
            "Before I agree: why does it have to be done this way?",
            "Hmm, are you sure those details are right?",
            "Can you tell me why this is the right way to do it?",
        ),
        "upset": ("Hold on, are you absolutely sure that's right? I can't afford another mistake!",),
    },
    "ack": {
        "plain": ("Thanks.", "Alright, thank you.", "Got it, thanks.", "I see."),
        "terse": ("Right.", "Got it."),
        "upset": ("Finally, thank you!", "Thank goodness."),
        "scattered": ("oh, got it", "right right, thanks"),
    },
    "next": {
        "plain": ("There's one more thing.", "Actually, there is something else.", "One more thing, please."),
        "terse": ("Also:", "One more:"),
        "upset": ("There's something else too, and it's just as urgent!",),
        "scattered": ("oh and another thing,", "oh right, also"),
    },
    "close": {
        "plain": ("That's all, thank you for your help. Bye!", "That's everything, thanks a lot. Goodbye!"),
        "terse": ("That's all. Bye.", "Done, thanks."),
        "upset": ("That's everything. Thank you, what a relief!", "That's all. Thank you so much, I was so worried!"),
        "scattered": ("that's it I think, thanks a lot!", "um, that's all, bye!"),
    },
    "leave": {
        "plain": (
            "This isn't getting anywhere. I'll take my business elsewhere. Goodbye.",
            "I'm not happy with how this went. Goodbye.",
        ),
        "upset": ("This is ridiculous! I'm done here. Goodbye!",),
    },
    "abandon": {
        "plain": ("I don't have time for this. Bye.", "Forget it, I'll sort it out another way. Bye."),
    },
    "pushback": {
        "plain": ("Are you sure? I really need this.", "But this matters a lot to me. Can you check again?"),
        "terse": ("Seriously? Check again.",),
        "upset": ("What?! You have to help me with this!", "That can't be right! I really need this!"),
    },
    "restate": {
        "plain": ("To be clear:", "What I need is this:", "Let me say it again:"),
        "terse": ("Again:",),
        "upset": ("Please listen:", "I already said it:"),
        "scattered": ("um, so basically", "what I mean is,"),
    },
    "wait": {
        "plain": ("Alright, I'll wait for them.", "Thank you, I'll hold."),
        "upset": ("Fine, but please make it quick!",),
    },
    "unknown": {
        "plain": ("I'm not sure what you need from me there.", "I don't have anything more to add on that."),
        "scattered": ("uh, I'm not sure about that",),
    },
    "email": {
        "plain": ("My email is {email}.", "It's {email}.", "You can find me under {email}."),
        "terse": ("{email}",),
        "scattered": ("email's {email} I think", "it's {email}"),
    },
    "name_zip": {
        "plain": ("My name is {first} {last} and my zip code is {zip}.", "I'm {first} {last}, zip code {zip}."),
        "terse": ("{first} {last}, {zip}.",),
        "scattered": ("oh right, {first} {last}, and the zip is {zip}",),
    },
    "no_email": {
        "plain": ("I can't remember which email I used, sorry.", "I'm not sure which email is on the account."),
    },
    "first_name": {
        "plain": ("It's {first}.",),
        "scattered": ("it's {first}!", "{first} here"),
    },
    "typo_fix": {
        "plain": ("Sorry, I made a typo. It's {email}.",),
        "scattered": ("oops, typo! it's {email}", "ugh sorry, I mistyped it, it's {email}"),
    },
    "order_id": {
        "plain": ("It's order {order_id}.", "The order number is {order_id}."),
        "terse": ("{order_id}.",),
        "scattered": ("it's {order_id} I think", "order {order_id}"),
    },
    "order_hint": {
        "plain": ("I don't have the order number to hand. It's {hint}.", "I'm not sure of the number, but it's {hint}."),
        "scattered": ("no idea about the number honestly, it's {hint}",),
    },
    "items": {
        "plain": ("It's {items}.", "I mean {items}."),
        "scattered": ("it's {items}",),
    },
    "new_items": {
        "plain": ("I'd like {items} instead.", "I want {items} in its place."),
        "scattered": ("and I want {items} instead",),
    },
    "payment": {
        "plain": ("Please use {payment}.", "I'd like to use {payment}."),
        "terse": ("{payment}.",),
    },
    "address": {
        "plain": ("The address is {address}.", "Please use this address: {address}."),
        "terse": ("{address}.",),
    },
    "reason": {
        "plain": ("The reason is: {reason}.", "My reason: {reason}."),
        "terse": ("{reason}.",),
    },
    "vague": {
        "plain": ("I have a problem with something I ordered.", "It's about an order."),
        "scattered": ("so it's about my order, kind of", "I have this thing with an order, um", "so, um, my order"),
    },
    "rest": {
        "plain": ("And what I need:", "About my request:"),
        "scattered": ("oh and what I actually need:", "right, and the thing is:"),
    },
}


def tone_of(persona: Persona) -> Tone:
    """One tone per persona: the upset persona sounds urgent, the impatient one curt."""
    if persona.upset:
        return "upset"
    if persona.incoherent:
        return "scattered"
    if persona.patience is not None:
        return "terse"
    return "plain"


def phrase(kind: str, tone: Tone, rng: random.Random, **fields: str) -> str:
    """A template of ``kind`` in ``tone`` (plain when the tone has none), chosen by ``rng``, filled in."""
    options = TEMPLATES[kind].get(tone) or TEMPLATES[kind]["plain"]
    return rng.choice(options).format(**fields)


def join(*parts: str) -> str:
    return " ".join(p for p in parts if p)
