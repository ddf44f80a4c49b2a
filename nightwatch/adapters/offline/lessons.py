"""What a persona remembers when the offline model reflects for it, and the notes it raises unprompted.

Reflection gives 1-3 lessons a teammate could act on next time, each in the persona's role terms and about what the
topic changes: the check its role makes before such a change merges, the opinion of its own that applied, and how
to raise a concern so it closes faster (or, when a person had to decide, what evidence to bring). A persona the
topic did not touch keeps one line on how little its role needed. No lesson restates the verdict.

Extraction, from a long thread's messages as they are summarised away, keeps the sentences that decide, fix or
prefer something or name a specific (see `extraction`), as what the thread found.
"""

from __future__ import annotations

import re

from nightwatch.adapters.offline.consensus import raises
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
    unmark,
)
from nightwatch.adapters.offline.topic import capitalised, topic_phrase
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
# What makes a sentence of a summarised message worth keeping, and how much.
_EXTRACT_CUES: tuple[tuple[int, re.Pattern[str]], ...] = (
    (3, re.compile(r"\b(decided|agreed|we will|we'll|go with|going with|chose|settled on)\b", re.IGNORECASE)),
    (3, re.compile(r"\b(fixed|caused by|root cause|because|workaround|the fix)\b", re.IGNORECASE)),
    (2, re.compile(r"\b(prefer\w*|always|never|convention)\b", re.IGNORECASE)),
    (1, CONCERN),
)
_EXTRACT_FLOOR = 2
_EXTRACT_WORDS = 5  # a shorter sentence says too little alone
_QUOTED_WORDS = 60  # of the message an overview quotes
_OWN_LINE = re.compile(r"^- (?P<name>[^:\n]{1,40}?)(?: \([^)]*\))?: (?P<text>.+)$", re.MULTILINE)


def reflection(persona: Persona, topic: str, outcome: str, discussion: str) -> list[tuple[str, str]]:
    """1-3 lessons from the persona's own angle (see the module docstring), each starting with MARK, with why it was
    learned (a clause for its overview)."""
    reading = read(persona, topic)
    subject = reading.topic.subject
    role = persona.role or "team member"
    if not reading.relevant:
        quiet = _quiet(reading)
        return [(f"{MARK} {quiet.format(s=subject, S=capitalised(subject))}", f"it touched little a {role} guards")]
    lessons = [(f"Before a change to {subject} merges, {check_for(reading, 'it', 'it')}.", f"the check a {role} makes")]
    if reading.opinions:
        lessons.append(
            (f"{reading.opinions[0].text} — it held for {subject}.", f"a view of {persona.name}'s own that held")
        )
    follow_up = _follow_up(reading, outcome, _raised(persona, topic, discussion))
    if follow_up:
        lessons.append(follow_up)
    elif reading.peeve:
        lessons.append((f"Watch for {lower_first(reading.peeve.text)} around {subject}.", "a trap worth watching"))
    return [(f"{MARK} {sentence(lesson)}", why) for lesson, why in lessons[:3]]


def extraction(persona: Persona, topic: str, lines: list[ThreadLine]) -> list[tuple[str, str]]:
    """Up to 3 lessons from messages being summarised away: the sentences that carry a decision, a fix, a preference
    or a specific (the persona's own first), each said as what the thread found, with who said it and the message for
    its overview. None when no sentence carries one."""
    subject = topic_phrase(topic).subject
    found: list[tuple[int, int, str, ThreadLine]] = []
    for order, line in enumerate(lines):
        for said in sentences(unmark(line.text)):
            weight = _weight(said) + (line.author == persona.name)
            if weight >= _EXTRACT_FLOOR:
                found.append((-weight, order, said, line))
    chosen = sorted(found)[:3]
    return [_extracted(subject, said, line) for _, _, said, line in sorted(chosen, key=lambda item: item[1])]


def _extracted(subject: str, said: str, line: ThreadLine) -> tuple[str, str]:
    lesson = f"{MARK} {sentence(f'From the thread on {subject}: {said}')}"
    who = line.author or "Someone"
    message = unmark(line.text)
    quoted = message if len(message.split()) <= _QUOTED_WORDS else clip(message, _QUOTED_WORDS)
    return lesson, f"{MARK} {who} said so before the thread was summarised: “{quoted}”"


def _weight(said: str) -> int:
    """How much a sentence is worth keeping: what it decides, fixes or prefers, and whether it names specifics."""
    if said.endswith("?") or len(said.split()) < _EXTRACT_WORDS:
        return 0
    return sum(weight for weight, cue in _EXTRACT_CUES if cue.search(said)) + bool(re.search(r"\d", said))


def _quiet(reading: Reading) -> str:
    topic = reading.topic
    if reading.flavour is Flavour.TECH_LEAD:
        return _QUIET_LEAD["fix" if not topic.is_change else "one_way" if topic.one_way else "reversible"]
    return _QUIET.get(reading.flavour, "{S} did not need the " + (reading.persona.role or "team") + " view.")


def _follow_up(reading: Reading, outcome: str, raised: bool) -> tuple[str, str] | None:
    subject = reading.topic.subject
    if outcome == "HUMAN":
        return (
            f"When {subject} needs a person's call, bring the evidence that settles it (a repro, a number) early.",
            "a person had to decide",
        )
    if raised and reading.flavour in _RAISING:
        how = _RAISING[reading.flavour].format(s=subject)
        return (
            f"{capitalised(how)}; that turns it into an owned follow-up instead of another round.",
            f"{reading.persona.name} raised a concern",
        )
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
