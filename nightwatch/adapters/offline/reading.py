"""What a persona finds in a topic, for the offline model: its matching opinions, expertise and pet peeves.

An item of the soul matches the topic when it shares two of the topic's words, or one that is not a common word of
the trade ("endpoint", "test", "service" alone do not make an opinion about rate limits relevant). Matches are
ranked by how many words they share; the persona's own order breaks ties. The check a persona asks for comes from
its role and the domain of its strongest opinion ("dependencies" for a security reviewer: is the vulnerable code
reachable; "flaky tests" for QA: why it flakes), so it is about the topic and in the role's terms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nightwatch.adapters.offline.text import keywords, overlap, stem, unmark
from nightwatch.adapters.offline.topic import TopicPhrase, topic_phrase
from nightwatch.domain.memory import Flavour, flavour_for
from nightwatch.domain.models import Persona

MIN_SINGLE_HIT = 5  # a stem shorter than this matches the topic only alongside another word
_ASIDE = re.compile(r"\s*\([^)]*\)")
_GENERIC = frozenset(
    stem(word)
    for word in """endpoint endpoints request requests service services test tests change changes code data file
    files table tables user users system systems team project app apps api apis flow flows job jobs page pages
    run runs build builds update updates feature features issue issues problem problems work time version
    versions new module modules thing things""".split()
)
# "Defer to Carlos on architecture, Maya on security and Priya on test strategy, and say so."
_DEFER = re.compile(r"\bdefer to (.+?)(?:,? and say so|;|\.|$)", re.IGNORECASE)
_DEFER_ONE = re.compile(r"^\s*(?:and\s+)?([A-Z][\w-]*) on (.+?)\s*$")
# The check each role asks for, by the domain of its strongest opinion ("" matches any): {t} is the topic's
# phrase, {s} what it changes.
_CHECKS: tuple[tuple[Flavour, str, str], ...] = (
    (Flavour.SECURITY, "dependenc", "check whether the vulnerable code in {s} is reachable from our calls"),
    (Flavour.SECURITY, "secret", "check where the secrets behind {t} live and who can read them"),
    (Flavour.SECURITY, "data", "check what personal data {t} touches and whether any of it reaches the logs"),
    (Flavour.SECURITY, "input", "check how {t} validates input at the trust boundary"),
    (Flavour.SECURITY, "", "walk the attack path for {t} and confirm it fails closed"),
    (Flavour.QA, "flaky", "find which of time, order, shared state or network makes {s} flake"),
    (Flavour.QA, "edge", "cover the edge cases of {t}: empty, maximum and a duplicate"),
    (Flavour.QA, "regression", "add a regression test for {t}"),
    (Flavour.QA, "performance", "agree a p95 target for {t} before the load test"),
    (Flavour.QA, "", "write the failing test for {t} first"),
    (Flavour.IMPLEMENTER, "dependenc", "read the changelog for {s} and run the full suite against it"),
    (Flavour.IMPLEMENTER, "deploy", "plan the rollout of {t} with a one-command rollback"),
    (Flavour.IMPLEMENTER, "debug", "reproduce {s} locally before we change anything"),
    (Flavour.IMPLEMENTER, "", "spike {t} to find the hidden cost"),
    (Flavour.TECH_LEAD, "data", "confirm {t} stays additive and reversible"),
    (Flavour.TECH_LEAD, "api", "write the caller's code for {t} first"),
    (Flavour.TECH_LEAD, "decompos", "slice {t} into steps that ship alone"),
    (Flavour.TECH_LEAD, "", "write down whether {t} is a one-way door"),
)


@dataclass(frozen=True)
class Point:
    """Something the persona could say, the topic words it matches, and the soul domain it comes from."""

    text: str
    hits: tuple[str, ...]
    domain: str = ""


@dataclass(frozen=True)
class Reading:
    """What a persona finds relevant in a topic."""

    persona: Persona
    topic: TopicPhrase
    words: dict[str, str]  # the topic's content words, {stem: word}
    opinions: tuple[Point, ...]
    skill: Point | None
    peeve: Point | None

    @property
    def relevant(self) -> bool:
        return bool(self.opinions or self.skill or self.peeve)

    @property
    def flavour(self) -> Flavour:
        return flavour_for(self.persona.role)

    @property
    def words_used(self) -> frozenset[str]:
        """The persona's own words, in lower case."""
        return frozenset(word.strip().lower() for word in self.persona.style.words_used)

    @property
    def defers_to(self) -> tuple[tuple[str, str], ...]:
        """(name, area) for each "Defer to NAME on AREA" in the persona's instructions."""
        found: list[tuple[str, str]] = []
        for line in self.persona.skill.additional_instructions:
            for match in _DEFER.finditer(line):
                for part in re.split(r",\s*", match.group(1).replace(" and ", ", ")):
                    one = _DEFER_ONE.match(part)
                    if one:
                        found.append((one.group(1), one.group(2)))
        return tuple(found)


def read(persona: Persona, topic_text: str) -> Reading:
    """Match a persona's soul against a topic."""
    soul = persona.soul
    words = keywords(topic_text)
    opinions = _ranked([p for domain, items in soul.opinions.items() for p in _points(items, words, domain)])
    skills = _ranked(_points(soul.expertise, words))
    peeves = _ranked(_points(soul.pet_peeves, words))
    return Reading(
        persona=persona,
        topic=topic_phrase(topic_text),
        words=words,
        opinions=tuple(opinions),
        skill=skills[0] if skills else None,
        peeve=peeves[0] if peeves else None,
    )


def check_for(reading: Reading, phrase: str, subject: str) -> str:
    """The check this persona asks for, as a verb phrase about `phrase` (what is discussed) and `subject`."""
    domain = reading.opinions[0].domain.lower() if reading.opinions else ""
    for flavour, key, template in _CHECKS:
        if flavour is reading.flavour and key in domain:
            return template.format(t=phrase, s=subject)
    if reading.skill:
        return f"check the {_short(reading.skill.text)} side of {phrase}"
    return f"look at {phrase} from the {reading.persona.role.lower() or 'team'} side"


def plain(text: str) -> str:
    """A soul item as speech: no parenthetical lists, wrapping quotes or final full stop."""
    return _ASIDE.sub("", unmark(text)).strip().strip("\"'“”").rstrip(".").strip()


def lower_first(text: str) -> str:
    return text[0].lower() + text[1:] if text[:1].isupper() and not text[1:2].isupper() else text


def _points(items: tuple[str, ...], topic: dict[str, str], domain: str = "") -> list[Point]:
    found = []
    for item in items:
        hits = tuple(overlap(topic, keywords(f"{domain.replace('_', ' ')} {item}")))
        if plain(item) and _strong(hits, topic):
            found.append(Point(plain(item), hits, domain))
    return found


def _strong(hits: tuple[str, ...], topic: dict[str, str]) -> bool:
    """Two shared words, or one that says something: not a common word of the trade, not a short plain word
    ("key" alone meets "idempotency keys" and "signing key" alike; "CVE" or "login" do not mislead)."""
    if len(hits) != 1:
        return len(hits) >= 2
    word = topic[hits[0]]
    distinct = len(hits[0]) >= MIN_SINGLE_HIT or word.isupper() or any(ch.isdigit() for ch in word)
    return hits[0] not in _GENERIC and distinct


def _ranked(points: list[Point]) -> list[Point]:
    """Most hits first; the persona's own order breaks ties."""
    return sorted(points, key=lambda p: -len(p.hits))


def _short(text: str) -> str:
    words = text.split()
    return " ".join(words[:4]).rstrip(",;:")
