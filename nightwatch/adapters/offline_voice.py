"""How a persona speaks when the offline model answers for it: turns, reflections and proactive notes.

A persona's words come from its own soul and style: the opinions, expertise and pet peeves whose words overlap the
topic; an ask phrased by the first of its tone words that has a phrasing; one of its own words (`words_used`) to
close; and as many sentences as its good examples' cadence suggests (terse examples, three; longer ones, four).
Ties go to the order the persona lists things in, so the same persona and topic always give the same text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nightwatch.adapters.offline_text import (
    CONCERN,
    MARK,
    ThreadLine,
    clip,
    keywords,
    overlap,
    pick,
    sentence,
    sentences,
    unmark,
)
from nightwatch.domain.models import Persona

MAX_WORDS = 100
TERSE_SENTENCE_WORDS = 12  # good examples averaging at most this many words a sentence make a terse persona

# A tone word -> how the persona asks for what it checks first ({skill} is filled in). The persona's first tone
# word found here wins.
_ASKS = {
    "firm": "I need {skill} covered before this merges.",
    "blunt": "I need {skill} covered before this merges.",
    "direct": "I need {skill} covered before this merges.",
    "decisive": "Decision first: {skill} gets settled before we build.",
    "calm": "Before this goes further, I'd check {skill}.",
    "measured": "Before this goes further, I'd check {skill}.",
    "warm": "Could we make sure we cover {skill}? Happy to help.",
    "friendly": "Could we make sure we cover {skill}? Happy to help.",
    "curious": "Have we thought through {skill}?",
    "inquisitive": "Have we thought through {skill}?",
    "pragmatic": "Let's cover {skill} and move on.",
    "practical": "I'll start with {skill}.",
    "upbeat": "I'll start with {skill}.",
}
_DEFAULT_ASK = "I'd look at {skill} first."
_OUTCOME_FOLLOW_UP = {
    "APPROVE": "keep checking {skill} the same way",
    "CHANGES": "raise {skill} findings in the first round",
    "HUMAN": "settle {skill} questions before asking for a decision",
}
_ASIDE = re.compile(r"\s*\([^)]*\)")


@dataclass(frozen=True)
class Point:
    """Something the persona could say, with the topic words it matches."""

    text: str
    hits: tuple[str, ...]


def plain(text: str) -> str:
    """A soul item as speech: no parenthetical lists, wrapping quotes or final full stop."""
    return _ASIDE.sub("", unmark(text)).strip().strip("\"'“”").rstrip(".").strip()


def _points(items: tuple[str, ...], topic: dict[str, str], extra: str = "") -> list[Point]:
    return [Point(plain(item), tuple(overlap(topic, keywords(f"{extra} {item}")))) for item in items if plain(item)]


def _ranked(points: list[Point]) -> list[Point]:
    """The points that hit the topic, most hits first; the persona's own order breaks ties."""
    return sorted((p for p in points if p.hits), key=lambda p: -len(p.hits))


@dataclass(frozen=True)
class Reading:
    """What a persona finds relevant in a topic."""

    persona: Persona
    topic_text: str
    topic: dict[str, str]
    opinions: tuple[Point, ...]
    skill: Point | None
    peeve: Point | None
    relevant: bool

    @property
    def focus(self) -> str:
        """The topic words this persona reacts to, as written in the topic."""
        hits = {h for point in (*self.opinions[:1], self.skill, self.peeve) if point for h in point.hits}
        words = [w.lower() if w.istitle() else w for s, w in self.topic.items() if s in hits][:3]
        if not words:
            return f"“{clip(self.topic_text, 6)}”"
        return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"

    @property
    def skill_text(self) -> str:
        if self.skill:
            return self.skill.text
        expertise = [plain(e) for e in self.persona.soul.expertise if plain(e)]
        return expertise[0] if expertise else f"the {self.persona.role or 'team'} view"


def read(persona: Persona, topic_text: str) -> Reading:
    """Match a persona's soul against a topic."""
    soul = persona.soul
    topic = keywords(topic_text)
    opinions = _ranked([p for domain, items in soul.opinions.items() for p in _points(items, topic, domain)])
    skills = _ranked(_points(soul.expertise, topic))
    peeves = _ranked(_points(soul.pet_peeves, topic))
    others = _ranked(_points((*soul.interests, *soul.worldview, persona.role), topic))
    return Reading(
        persona=persona,
        topic_text=topic_text,
        topic=topic,
        opinions=tuple(opinions),
        skill=skills[0] if skills else None,
        peeve=peeves[0] if peeves else None,
        relevant=bool(opinions or skills or peeves or others),
    )


# --- turns -------------------------------------------------------------------------------------------------------


def turn(persona: Persona, topic: str, earlier: list[ThreadLine], round_no: int, remembered: list[str]) -> str:
    """A short answer in the persona's voice, or SKIP when it has nothing to add after the first round.

    The first round gives the persona's strongest opinion on the topic, what it checks first and a remembered
    lesson on the topic; later rounds pick up an earlier point by someone else and add the next opinion, so a
    persona does not repeat itself.
    """
    reading = read(persona, topic)
    if not reading.relevant and round_no > 1:
        return "SKIP"
    said = _first_round(reading, remembered) if round_no <= 1 else _later_round(reading, earlier, round_no)
    word = _word(persona, topic, " ".join(said))
    if word and len(said) < _max_sentences(persona):
        said.append(f"In a word: {word}.")
    return _cap(f"{MARK} " + " ".join(said))


def _first_round(reading: Reading, remembered: list[str]) -> list[str]:
    said = [_stance(reading, 0), _ask(reading)]
    memory = _recalled(reading, remembered, " ".join(said))
    if memory:
        said.append(memory)
    elif reading.peeve and len(said) < _max_sentences(reading.persona) - 1:
        said.append(f"What I don't want to see: {_lower_first(reading.peeve.text)}.")
    return said


def _later_round(reading: Reading, earlier: list[ThreadLine], round_no: int) -> list[str]:
    reply = _reply_to(reading, earlier)
    said = [reply] if reply else []
    if len(reading.opinions) >= round_no:
        said.append(_stance(reading, round_no - 1))
    elif reading.peeve:
        said.append(f"What I don't want to see: {_lower_first(reading.peeve.text)}.")
    if len(said) < 2:
        said.append(_ask(reading))
    return said


def _recalled(reading: Reading, remembered: list[str], said: str) -> str | None:
    """The remembered lesson sharing most words with the topic and not already said; None when there is none."""
    said_words = keywords(said)
    scored = []
    for index, lesson in enumerate(remembered):
        words = keywords(lesson)
        if len(overlap(words, said_words)) * 2 >= len(words):
            continue  # it would repeat what this turn already says
        scored.append((len(overlap(words, reading.topic)), -index, lesson))
    best = max(scored, default=None)
    if best is None or best[0] == 0:
        return None
    return f"From memory: {_lower_first(clip(plain(best[2]), 16))}."


def _stance(reading: Reading, index: int) -> str:
    if len(reading.opinions) > index:
        return sentence(reading.opinions[index].text)
    if reading.skill:
        return f"This touches {reading.skill.text}, which is my area."
    return f"Nothing in {reading.focus} touches my area as {reading.persona.role or 'a teammate'} directly."


def _ask(reading: Reading) -> str:
    style = reading.persona.style
    for word in re.findall(r"[a-z]+", f"{style.tone} {style.sentence_structure}".lower()):
        if word in _ASKS:
            return _ASKS[word].format(skill=reading.skill_text)
    return f"For {reading.focus}, " + _DEFAULT_ASK.format(skill=reading.skill_text)


def _word(persona: Persona, topic: str, said: str) -> str:
    """One of the persona's own words: one that fits what is being said, else a stable pick."""
    usable = [w for w in persona.style.words_used if w.strip() and "'" not in w and "’" not in w]
    context = keywords(f"{topic} {said}")
    fitting = [w for w in usable if overlap(keywords(w), context)]
    return (fitting or [pick(usable, topic)])[0] if usable else ""


def _max_sentences(persona: Persona) -> int:
    """Terse good examples make a three-sentence persona; longer ones allow four."""
    spoken = [s for example in persona.style.good_examples for s in sentences(example)]
    if not spoken:
        return 4
    average = sum(len(s.split()) for s in spoken) / len(spoken)
    return 3 if average <= TERSE_SENTENCE_WORDS else 4


def _reply_to(reading: Reading, earlier: list[ThreadLine]) -> str | None:
    """Pick up the earlier point (by someone else) that shares most words with what this persona cares about."""
    mine = dict(reading.topic)
    for point in (*reading.opinions, reading.skill, reading.peeve):
        if point:
            mine.update(keywords(point.text))
    best: tuple[int, int, ThreadLine, str] | None = None
    for index, line in enumerate(earlier):
        if not line.author or line.author == reading.persona.name:
            continue
        words = keywords(line.text)
        shared = overlap(words, mine)
        # Name the shared word that is in the topic if there is one, else the longest.
        shared.sort(key=lambda stem: (not overlap([stem], reading.topic), -len(stem)))
        if shared and (best is None or (len(shared), index) > best[:2]):
            best = (len(shared), index, line, words[shared[0]])
    if best is None:
        return None
    line, word = best[2], best[3]
    word = word.lower() if word.istitle() else word
    if CONCERN.search(line.text):
        return f"On {line.author}'s point about {word}: agreed, and {reading.skill_text} is where I'd start fixing it."
    return f"On {line.author}'s point about {word}: fine by me, as long as {reading.skill_text} holds up."


def _lower_first(text: str) -> str:
    return text[0].lower() + text[1:] if text[:1].isupper() and not text[1:2].isupper() else text


def _cap(text: str) -> str:
    words = text.split()
    return text if len(words) <= MAX_WORDS else " ".join(words[:MAX_WORDS]).rstrip(",;:") + "…"


# --- reflections and proactive notes -----------------------------------------------------------------------------


def reflection(persona: Persona, topic: str, outcome: str) -> list[str]:
    """1-3 lessons from the persona's own angle: what to check, which opinion held, what the outcome teaches."""
    reading = read(persona, topic)
    skill = reading.skill_text
    if not reading.relevant:
        return [
            f"{MARK} {reading.focus} did not touch {skill}; no {reading.persona.role or 'role'} follow-up was needed."
        ]
    lessons = [f"{MARK} When a change touches {reading.focus}, check {skill} early."]
    if reading.opinions:
        lessons.append(f"{MARK} {reading.opinions[0].text} — it held for {reading.focus}.")
    if outcome in _OUTCOME_FOLLOW_UP:
        follow_up = _OUTCOME_FOLLOW_UP[outcome].format(skill=skill)
        lessons.append(f"{MARK} {outcome} last time on {reading.focus}; {follow_up}.")
    elif reading.peeve:
        lessons.append(f"{MARK} Watch for {_lower_first(reading.peeve.text)} around {reading.focus}.")
    return lessons[:3]


def proactive(lessons: list[str], topic: str, already_said: list[str]) -> str:
    """One remembered lesson worth raising now (closest to the topic, not flagged recently), or SKIP."""
    said = " ".join(already_said).lower()
    fresh = [lesson for lesson in lessons if lesson.lower().rstrip(".") not in said]
    if not fresh:
        return "SKIP"
    wanted = keywords(topic)
    best = max(fresh, key=lambda lesson: len(overlap(keywords(lesson), wanted)))
    return f"{MARK} From memory: {sentence(best)} Worth a check before the next change lands."
