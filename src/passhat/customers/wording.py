"""How the scripted customer words things, per tone. Facts and goals never depend on the wording.

Every template of kind ``yes`` must pass ``passhat.dialogue.is_affirmative`` and every other template
must fail it (a test checks all of them), so that only an intended yes can ever count as confirming a
write. Every ``no`` template starts with "No", so an agent can always tell a refusal from a question.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Literal

from passhat.customers.personas import Persona
from passhat.domains.kit import Phrasings

Tone = Literal["plain", "terse", "upset", "scattered"]

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
    "no_thanks": {  # an offer of something the customer did not ask for
        "plain": ("No, thanks.", "No thank you, I don't need that."),
        "terse": ("No, thanks.", "No need."),
        "upset": ("No, thank you, I don't need that.",),
        "scattered": ("no thanks, that's ok",),
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
    "unhelped": {  # the agent said something that does not help yet: no thanks for it (as many wordings as "ack")
        "plain": ("I see.", "Hmm.", "Noted.", "I hear you."),
        "terse": ("Hm.", "Noted."),
        "upset": ("That doesn't help me!", "Please, I need help with this!"),
        "scattered": ("oh, ok", "right, um"),
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
    "just_that": {  # "anything else?" asked while the request is still open
        "plain": ("Nothing else, just this.", "Only this one thing, thanks."),
        "terse": ("Nothing else.", "Just this."),
        "upset": ("No, just this, and it's urgent!",),
        "scattered": ("um no, just this thing",),
    },
    "rest_open": {  # "anything else?" once part of the request is done: the rest of it is still wanted
        "plain": (
            "Thanks, that part is done. There's still the rest of what I asked:",
            "Good, but that's only part of it. The rest:",
        ),
        "terse": ("Only part done. Rest:",),
        "upset": ("That's only half of it! The rest, please:",),
        "scattered": ("oh good, but there's the other bit too:",),
    },
    "wait": {
        "plain": ("Alright, I'll wait for them.", "Thank you, I'll hold."),
        "upset": ("Fine, but please make it quick!",),
    },
    "unknown": {
        "plain": ("I'm not sure what you need from me there.", "I don't have anything more to add on that."),
        "scattered": ("uh, I'm not sure about that",),
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


@dataclasses.dataclass(frozen=True)
class Voice:
    """How the customer says a thing of ``kind``: a template in its tone (plain when the tone has none),
    from its domain's phrasings or else the engine's own, chosen by ``rng``, filled in."""

    tone: Tone
    rng: random.Random
    phrasings: Phrasings = dataclasses.field(default_factory=dict)

    def say(self, kind: str, **fields: str) -> str:
        templates = self.phrasings.get(kind) or TEMPLATES[kind]
        return self.rng.choice(templates.get(self.tone) or templates["plain"]).format(**fields)
