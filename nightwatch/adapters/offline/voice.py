"""How a persona speaks in a deliberation when the offline model answers for it.

A persona's words come from its soul and style, matched against the topic (reading.py), and follow what its
role does in a discussion:
- round 1: its strongest opinion on the topic, then the check it asks for before going ahead (phrased by its tone,
  aimed by its role and the opinion's domain), then a remembered lesson or a closing word of its own. A persona the
  topic does not touch gives its role's angle in a line or two (security: whether anything is at stake; QA: what it
  would test; implementer: the smallest change and where it lands; tech lead: whether it is a one-way door; any
  other role: where its own side stands, in its role's words);
- later rounds: the owner of an action item says how it will close it; others pick up an earlier point and add a
  new opinion, or SKIP;
- the lead: its opinion, then where the thread stands, read the way the consensus reads it (consensus.py), so
  the lead's words and its decision agree.
Sentences are capped by the persona's cadence (terse good examples, three; longer ones, four). The same persona,
topic and thread always give the same text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nightwatch.adapters.offline.consensus import ASKS, DEFAULT_ASK, names, raises, read_concerns
from nightwatch.adapters.offline.reading import Reading, check_for, lower_first, read
from nightwatch.adapters.offline.text import (
    CONCERN,
    MARK,
    ThreadLine,
    clip,
    keywords,
    overlap,
    sentence,
    sentences,
)
from nightwatch.adapters.offline.topic import TopicPhrase
from nightwatch.domain.memory import Flavour
from nightwatch.domain.models import Persona

MAX_WORDS = 100
RECALL_WORDS = 20
MIN_CLAUSE_WORDS = 5
TERSE_SENTENCE_WORDS = 12  # good examples averaging at most this many words a sentence make a terse persona
SKIP = "SKIP"

# How each role picks up someone else's point in a later round.
_AGREES = {
    Flavour.SECURITY: "agreed, as long as it fails closed",
    Flavour.QA: "agreed, and I'll turn it into a test that fails today",
    Flavour.IMPLEMENTER: "agreed, and I'll keep that check next to the code as a test",
    Flavour.TECH_LEAD: "agreed; it goes in the decision record with an owner",
}


@dataclass(frozen=True)
class TurnCue:
    """What the instruction says about this turn."""

    round_no: int = 1
    as_lead: bool = False
    final: bool = False
    items: tuple[tuple[str, str], ...] = ()  # (owner, action) from the lead's call for another round


def turn(persona: Persona, topic: str, earlier: list[ThreadLine], cue: TurnCue, remembered: list[str]) -> str:
    """A short answer in the persona's voice, or SKIP (see the module docstring)."""
    reading = read(persona, topic)
    if cue.as_lead:
        said = _as_lead(reading, earlier, cue)
    elif cue.round_no <= 1:
        said = _first_round(reading, remembered, earlier)
    else:
        said = _later_round(reading, earlier, cue)
    if not said:
        return SKIP
    return _cap(f"{MARK} " + " ".join(said[: _max_sentences(persona)]))


# --- contributors --------------------------------------------------------------------------------------------------


def _first_round(reading: Reading, remembered: list[str], earlier: list[ThreadLine]) -> list[str]:
    if not reading.relevant:
        return _angle(reading, earlier)
    said = [sentence(reading.opinions[0].text)] if reading.opinions else []
    said.append(_ask(reading.persona, check_for(reading, reading.topic.short, reading.topic.subject)))
    memory = _recalled(reading, remembered, " ".join(said))
    closing = _closing(reading)
    said += [s for s in (memory, closing) if s]
    if reading.peeve and not memory:
        said.append(f"What I don't want to see: {lower_first(reading.peeve.text)}.")
    return said


def _ask(persona: Persona, check: str) -> str:
    """The check, asked the way the persona's first tone word with a phrasing asks."""
    style = persona.style
    for word in f"{style.tone} {style.sentence_structure}".lower().replace(",", " ").split():
        if word in ASKS:
            return ASKS[word].format(vp=check)
    return DEFAULT_ASK.format(vp=check)


def _angle(reading: Reading, earlier: list[ThreadLine]) -> list[str]:
    """A role's angle on a topic that does not touch its expertise; empty (SKIP) when the role has none."""
    topic, words = reading.topic, reading.words_used
    if reading.flavour is Flavour.SECURITY:
        calm = "Non-blocking from me." if "non-blocking" in words else "Nothing to hold up from my side."
        return [f"Security isn't really at stake in {topic.short}: no trust boundary moves that I can see.", calm]
    if reading.flavour is Flavour.QA:
        return [
            f"What I'd test {_for(topic)}: the happy path end to end and one failure path.",
            "Nothing here needs a bigger test plan.",
        ]
    if reading.flavour is Flavour.IMPLEMENTER:
        eta = "ETA" if "eta" in words else "Estimate"
        said = [
            f"Smallest change {_for(topic)}: one focused PR, with the test next to the code it touches.",
            f"{eta}: a day or two; the unknown is how much of it already exists.",
        ]
        defer = _deferral(reading, earlier)
        return [*said, defer] if defer else said
    if reading.flavour is Flavour.TECH_LEAD:
        return [_door(reading), "Keep it to one small PR with an owner."]
    return _own_side(reading)


def _own_side(reading: Reading) -> list[str]:
    """Any other role's angle, in the words of its role: a persona on the panel was named or matched by its role,
    so it says where its side stands rather than nothing."""
    side = " ".join(reading.persona.role.lower().split()) or "team"
    return [
        f"From the {side} side, nothing in {reading.topic.short} needs holding up that I can see.",
        f"I'll keep the {side} side of it in step as it lands.",
    ]


def _for(topic: TopicPhrase) -> str:
    """ "for rate limiting on the login endpoint", or "here" when the topic has no short phrase."""
    return f"for {topic.phrase}" if topic.short == topic.phrase else "here"


def _door(reading: Reading) -> str:
    topic = reading.topic
    if not topic.is_change:
        return f"Architecture isn't really at stake in {topic.short}: no module boundary moves."
    if topic.one_way:
        return f"Is this a one-way door? Yes: {topic.short} is hard to undo, so it deserves the debate."
    return f"Is this a one-way door? No: {topic.short} is reversible, so I'd decide it fast."


def _deferral(reading: Reading, earlier: list[ThreadLine]) -> str | None:
    """ "I'll defer to Maya on security.": the persona's own deferral to someone who already spoke."""
    spoke = {line.author for line in earlier}
    for name, area in reading.defers_to:
        if name in spoke:
            return f"I'll defer to {name} on {area}."
    return None


def _closing(reading: Reading) -> str | None:
    """A closing line in the persona's own words, rating what it asked for."""
    words = reading.words_used
    if "blocking" in words:
        strong = bool(reading.opinions) and len(reading.opinions[0].hits) >= 2
        return "Blocking until that is answered." if strong else "Non-blocking, but I want it answered."
    if reading.flavour is Flavour.IMPLEMENTER and "eta" in words:
        return "ETA for that: half a day."
    return None


def _recalled(reading: Reading, remembered: list[str], said: str) -> str | None:
    """The remembered lesson sharing most words with the topic and not already said; None when there is none."""
    said_words = keywords(said)
    scored = []
    for index, lesson in enumerate(remembered):
        words = keywords(lesson)
        if len(overlap(words, said_words)) * 2 >= len(words):
            continue  # it would repeat what this turn already says
        scored.append((len(overlap(words, reading.words)), -index, lesson))
    best = max(scored, default=None)
    if best is None or best[0] == 0:
        return None
    return sentence(f"From memory: {lower_first(_first_clause(best[2]))}")


def _first_clause(lesson: str) -> str:
    """A remembered lesson short enough to quote: up to its first ";" or dash when it is long."""
    if len(lesson.split()) <= RECALL_WORDS:
        return lesson
    head = re.split(r";| — | - ", lesson, maxsplit=1)[0]
    return head if len(head.split()) >= MIN_CLAUSE_WORDS else clip(lesson, RECALL_WORDS)


def _later_round(reading: Reading, earlier: list[ThreadLine], cue: TurnCue) -> list[str]:
    name = reading.persona.name
    mine = [action for owner, action in cue.items if owner.lower() == name.lower()]
    if mine:
        return [f"On my item: I'll {mine[0]}, then post what I find here.", *_follow_through(reading)]
    if not reading.relevant:
        return []
    said = []
    reply = _reply_to(reading, earlier)
    if reply:
        said.append(reply)
    if len(reading.opinions) >= cue.round_no:
        said.append(sentence(reading.opinions[cue.round_no - 1].text))
    return said


def _follow_through(reading: Reading) -> list[str]:
    words = reading.words_used
    if reading.flavour is Flavour.SECURITY:
        return ["Non-blocking now that it has an owner." if "non-blocking" in words else "It no longer holds us up."]
    if reading.flavour is Flavour.QA:
        return [f"I'll mark it {'verified' if 'verified' in words else 'done'} once it passes on CI."]
    if reading.flavour is Flavour.IMPLEMENTER:
        return [f"{'ETA' if 'eta' in words else 'Estimate'}: half a day, most of it in the tests."]
    if reading.flavour is Flavour.TECH_LEAD:
        return ["I'll write it down with its owner."]
    return []


def _reply_to(reading: Reading, earlier: list[ThreadLine]) -> str | None:
    """Pick up the earlier point (by someone else) that shares most words with what this persona cares about."""
    mine = dict(reading.words)
    for point in (*reading.opinions, reading.skill, reading.peeve):
        if point:
            mine.update(keywords(point.text))
    best: tuple[int, int, ThreadLine, str] | None = None
    for index, line in enumerate(earlier):
        if not line.author or line.author == reading.persona.name:
            continue
        words = keywords(line.text)
        shared = overlap(words, mine)
        shared.sort(key=lambda stem: (not overlap([stem], reading.words), -len(stem)))
        if shared and (best is None or (len(shared), index) > best[:2]):
            best = (len(shared), index, line, words[shared[0]])
    if best is None:
        return None
    line, word = best[2], best[3]
    word = word.lower() if word.istitle() else word
    agree = _AGREES.get(reading.flavour, f"agreed, and I'll cover the {reading.persona.role or 'team'} side of it")
    return f"On {line.author}'s point about {word}: {agree}."


# --- the lead --------------------------------------------------------------------------------------------------------


def _as_lead(reading: Reading, earlier: list[ThreadLine], cue: TurnCue) -> list[str]:
    """The lead's recap before it decides: its own view, then where the thread stands (as the consensus reads it)."""
    topic = reading.topic
    concerns = [c for c in read_concerns(earlier, topic.text) if c.author != reading.persona.name]
    calm = [p for p in reading.opinions if not raises(p.text, topic.text) and not CONCERN.search(p.text)]
    said = [sentence(calm[cue.round_no - 1].text)] if len(calm) >= cue.round_no else []
    if cue.final and any(c.blocking for c in concerns):
        held = names([c.owner for c in concerns if c.blocking])
        blocks = "blocks" if len(held.split()) == 1 else "block"
        said.append(f"Where we are: {held} still {blocks} {topic.proposal}, so this needs a person's call.")
        return [*said, "I'll write down both sides for whoever decides."]
    if not cue.final and any(c.open for c in concerns):
        items = names([c.in_brief(topic) for c in concerns if c.open])
        return [*said, f"Open before I decide: {items}.", _one_more_round(reading, len(concerns))]
    if not concerns:
        said.append(f"Nothing here needs another round, so I'd go ahead with {topic.proposal}.")
        owner = next((line.author for line in earlier if line.author and line.author != reading.persona.name), "")
        return [*said, f"My call: go ahead; {owner} owns the next step." if owner else "My call: go ahead."]
    said.append(f"Where we are: every open item has an owner, and nothing stands in the way of {topic.proposal}.")
    owners = names([c.owner for c in concerns])
    follow_ups = "the follow-up" if len(concerns) == 1 else "the follow-ups"
    return [*said, f"My call: go ahead; {owners} {'owns' if len(concerns) == 1 else 'own'} {follow_ups}."]


def _one_more_round(reading: Reading, open_items: int) -> str:
    settle = "it" if open_items == 1 else "them"
    topic = reading.topic
    if reading.flavour is Flavour.TECH_LEAD and topic.is_change:
        if topic.one_way:
            return f"This is a one-way door, so one more round to settle {settle} is worth it."
        return f"This is a reversible change, so one more round to settle {settle} is all it needs."
    return f"One more round should settle {settle}."


# --- shared ----------------------------------------------------------------------------------------------------------


def _max_sentences(persona: Persona) -> int:
    """Terse good examples make a three-sentence persona; longer ones allow four."""
    spoken = [s for example in persona.style.good_examples for s in sentences(example)]
    if not spoken:
        return 4
    average = sum(len(s.split()) for s in spoken) / len(spoken)
    return 3 if average <= TERSE_SENTENCE_WORDS else 4


def _cap(text: str) -> str:
    words = text.split()
    return text if len(words) <= MAX_WORDS else " ".join(words[:MAX_WORDS]).rstrip(",;:") + "…"
