"""Who takes part in a deliberation: the personas addressed by name, else the best matches for the topic, plus a lead.

Relevance is keyword overlap between the topic and a persona's role, expertise and opinions, on stemmed terms, so
it works for any custom persona without naming one in code. Ties break on the name, so the choice is deterministic.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from nightwatch.domain.errors import NotFoundError
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import terms

log = logging.getLogger(__name__)

MIN_CONTRIBUTORS = 2  # when few personas match the topic, still hear at least two voices (if the cap allows)
ROLE_WEIGHT = 3.0
EXPERTISE_WEIGHT = 2.0
OPINION_WEIGHT = 1.0
PREFIX_FACTOR = 0.5  # "auth" against "authent": a shared prefix counts, at half weight
_MIN_PREFIX = 4
_LEAD_ROLES = (
    re.compile(r"\btech(?:nical)?[\s_-]*lead\b", re.IGNORECASE),
    re.compile(r"\blead\b", re.IGNORECASE),
    re.compile(r"\barchitect\b", re.IGNORECASE),
)


@dataclass(frozen=True)
class Panel:
    """The contributors of a deliberation and its lead (who is not among the contributors)."""

    contributors: tuple[Persona, ...]
    lead: Persona

    @property
    def everyone(self) -> tuple[Persona, ...]:
        return (*self.contributors, self.lead)


def find_persona(personas: Sequence[Persona], name_or_slug: str) -> Persona | None:
    """The persona whose name (ignoring case) or slug is `name_or_slug`."""
    key = name_or_slug.strip().lstrip("@").strip().lower()
    return next((p for p in personas if key in (p.name.lower(), p.slug)), None)


def named_in(text: str, personas: Sequence[Persona]) -> list[Persona]:
    """Personas addressed in `text` ("@Maya", "Maya," or "Maya:", and each name of a list that ends so: "Maya and
    Priya:", "Maya, Priya & Dev,"), in the order they are first addressed."""
    by_key = {key.lower(): p for p in personas for key in (p.name, p.slug)}
    if not by_key:
        return []
    one = "(?:" + "|".join(re.escape(key) for key in sorted(by_key, key=len, reverse=True)) + ")"
    name = re.compile(rf"(?<![\w@-]){one}(?![\w-])", re.IGNORECASE)
    first: dict[str, tuple[int, Persona]] = {}  # by slug: where the persona is first addressed
    for match in re.finditer(rf"(?<![\w@])@{one}(?![\w-])", text, re.IGNORECASE):
        persona = by_key[match.group(0)[1:].lower()]
        first.setdefault(persona.slug, (match.start(), persona))
    for listed in re.finditer(rf"(?<![\w@-]){one}(?:\s*(?:,|&|\band\b)\s*{one})*\s*[,:]", text, re.IGNORECASE):
        for match in name.finditer(listed.group(0)):
            persona = by_key[match.group(0).lower()]
            first.setdefault(persona.slug, (listed.start() + match.start(), persona))
    return [persona for _, persona in sorted(first.values(), key=lambda found: found[0])]


def relevance(persona: Persona, topic: str) -> float:
    """How well a persona's role, expertise and opinions match the topic's terms."""
    weights = _persona_terms(persona)
    score = 0.0
    for term in set(terms(topic)):
        if term in weights:
            score += weights[term]
            continue
        if len(term) >= _MIN_PREFIX:
            near = [
                w for t, w in weights.items() if len(t) >= _MIN_PREFIX and (t.startswith(term) or term.startswith(t))
            ]
            score += max(near, default=0.0) * PREFIX_FACTOR
    return score


def _persona_terms(persona: Persona) -> dict[str, float]:
    weighted: dict[str, float] = {}
    opinions = " ".join(f"{domain} {' '.join(views)}" for domain, views in persona.soul.opinions.items())
    for text, weight in (
        (opinions, OPINION_WEIGHT),
        (" ".join(persona.soul.expertise), EXPERTISE_WEIGHT),
        (persona.role, ROLE_WEIGHT),
    ):
        for term in terms(text):
            weighted[term] = max(weighted.get(term, 0.0), weight)
    return weighted


def ranked(personas: Sequence[Persona], topic: str) -> list[tuple[float, Persona]]:
    """Personas by relevance to the topic, best first; ties by name, then slug."""
    scored = [(relevance(p, topic), p) for p in personas]
    return sorted(scored, key=lambda item: (-item[0], item[1].name.lower(), item[1].slug))


def choose_lead(personas: Sequence[Persona], topic: str, configured: str | None) -> Persona:
    """The configured lead; else the persona whose role says tech lead, lead or architect; else the best match."""
    if not personas:
        raise NotFoundError("There are no active personas; create one with `nightwatch personas create NAME --role R`.")
    if configured:
        chosen = find_persona(personas, configured)
        if chosen is not None:
            return chosen
        log.warning("the configured lead %r is not an active persona; choosing the lead by role", configured)
    for pattern in _LEAD_ROLES:
        match = next((p for p in personas if pattern.search(p.role)), None)
        if match is not None:
            return match
    return ranked(personas, topic)[0][1]


def choose_panel(
    personas: Sequence[Persona],
    *,
    topic: str,
    requested: Sequence[str] = (),
    max_contributors: int,
    lead: str | None = None,
) -> Panel:
    """Pick the lead and up to `max_contributors` others: named personas first, else the best matches."""
    chosen_lead = choose_lead(personas, topic, lead)
    named = _requested(personas, requested) + named_in(topic, personas)
    named = _unique([p for p in named if p.slug != chosen_lead.slug])
    if named or _lead_named(personas, requested, topic, chosen_lead):
        return Panel(tuple(named[:max_contributors]), chosen_lead)
    others = [(score, p) for score, p in ranked(personas, topic) if p.slug != chosen_lead.slug]
    matching = [p for score, p in others if score > 0][:max_contributors]
    wanted = min(MIN_CONTRIBUTORS, max_contributors)
    fill = [p for _, p in others if p not in matching][: max(0, wanted - len(matching))]
    return Panel(tuple(matching + fill), chosen_lead)


def _unique(personas: Sequence[Persona]) -> list[Persona]:
    seen: set[str] = set()
    kept = []
    for persona in personas:
        if persona.slug not in seen:
            seen.add(persona.slug)
            kept.append(persona)
    return kept


def _requested(personas: Sequence[Persona], requested: Sequence[str]) -> list[Persona]:
    found: list[Persona] = []
    for name in requested:
        if not name.strip():
            continue
        persona = find_persona(personas, name)
        if persona is None:
            raise NotFoundError(
                f"No active persona is named {name.strip()!r}; see `nightwatch personas list` for the names."
            )
        found.append(persona)
    return found


def _lead_named(personas: Sequence[Persona], requested: Sequence[str], topic: str, lead: Persona) -> bool:
    """True when the only persona addressed is the lead: then the lead answers alone."""
    addressed = _requested(personas, requested) + named_in(topic, personas)
    return any(p.slug == lead.slug for p in addressed)
