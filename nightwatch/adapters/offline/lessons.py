"""What a persona remembers when the offline model reflects for it, and the notes it raises unprompted.

Reflection gives 1-3 lessons a teammate could act on next time, each in the persona's role terms and about what the
topic changes: the check its role makes before such a change merges, the opinion of its own that applied, and how
to raise a concern so it closes faster (or, when a person had to decide, what evidence to bring). A persona the
topic did not touch keeps one line on how little its role needed. No lesson restates the verdict.
"""

from __future__ import annotations

import re

from nightwatch.adapters.offline.consensus import raises
from nightwatch.adapters.offline.reading import Reading, check_for, lower_first, read
from nightwatch.adapters.offline.text import MARK, keywords, overlap, sentence, sentences, unmark
from nightwatch.adapters.offline.topic import capitalised
from nightwatch.domain.memory import Flavour
from nightwatch.domain.models import Persona

# How each role raises a concern so that it becomes an owned follow-up rather than another round.
_RAISING = {
    Flavour.SECURITY: "rate each finding on {s} and say whether it blocks, with the one-line fix next to it",
    Flavour.QA: "pair each concern on {s} with the exact test that would settle it",
    Flavour.IMPLEMENTER: "give the estimate for {s} as a range with its main unknown",
    Flavour.TECH_LEAD: "name an owner for each open item on {s} in the first round",
}
_QUIET = {
    Flavour.SECURITY: "{S} moved no trust boundary, so a one-line non-blocking note from security was enough.",
    Flavour.QA: "For {s}, a happy-path test plus one failure path was enough; it needed no bigger test plan.",
    Flavour.IMPLEMENTER: "A change to {s} fits one focused PR with its test next to the code; start there next time.",
}
_QUIET_LEAD = {
    "fix": "{S} moved no module boundary; keep such calls to one small PR with an owner.",
    "reversible": "A reversible change to {s} is decided fast, in one small PR with an owner.",
    "one_way": "A change to {s} is hard to undo; write the decision down before the PR.",
}
_OWN_LINE = re.compile(r"^- (?P<name>[^:\n]{1,40}?)(?: \([^)]*\))?: (?P<text>.+)$", re.MULTILINE)


def reflection(persona: Persona, topic: str, outcome: str, discussion: str) -> list[str]:
    """1-3 lessons from the persona's own angle (see the module docstring), each starting with MARK."""
    reading = read(persona, topic)
    subject = reading.topic.subject
    if not reading.relevant:
        quiet = _quiet(reading)
        return [f"{MARK} {quiet.format(s=subject, S=capitalised(subject))}"]
    lessons = [f"Before a change to {subject} merges, {check_for(reading, 'it', 'it')}."]
    if reading.opinions:
        lessons.append(f"{reading.opinions[0].text} — it held for {subject}.")
    follow_up = _follow_up(reading, outcome, _raised(persona, topic, discussion))
    if follow_up:
        lessons.append(follow_up)
    elif reading.peeve:
        lessons.append(f"Watch for {lower_first(reading.peeve.text)} around {subject}.")
    return [f"{MARK} {sentence(lesson)}" for lesson in lessons[:3]]


def _quiet(reading: Reading) -> str:
    topic = reading.topic
    if reading.flavour is Flavour.TECH_LEAD:
        return _QUIET_LEAD["fix" if not topic.is_change else "one_way" if topic.one_way else "reversible"]
    return _QUIET.get(reading.flavour, "{S} did not need the " + (reading.persona.role or "team") + " view.")


def _follow_up(reading: Reading, outcome: str, raised: bool) -> str | None:
    subject = reading.topic.subject
    if outcome == "HUMAN":
        return f"When {subject} needs a person's call, bring the evidence that settles it (a repro, a number) early."
    if raised and reading.flavour in _RAISING:
        how = _RAISING[reading.flavour].format(s=subject)
        return f"{capitalised(how)}; that turns it into an owned follow-up instead of another round."
    return None


def _raised(persona: Persona, topic: str, discussion: str) -> bool:
    """True when the persona raised a concern in the discussion (its `- Name: text` lines)."""
    own = [unmark(m.group("text")) for m in _OWN_LINE.finditer(discussion) if m.group("name").strip() == persona.name]
    return any(raises(said, topic) for text in own for said in sentences(text))


def proactive(lessons: list[str], topic: str, already_said: list[str]) -> str:
    """One remembered lesson worth raising now (closest to the topic, not flagged recently), or SKIP."""
    said = " ".join(already_said).lower()
    fresh = [lesson for lesson in lessons if lesson.lower().rstrip(".") not in said]
    if not fresh:
        return "SKIP"
    wanted = keywords(topic)
    best = max(fresh, key=lambda lesson: len(overlap(keywords(lesson), wanted)))
    return f"{MARK} From memory: {sentence(best)} Worth a check before the next change lands."
