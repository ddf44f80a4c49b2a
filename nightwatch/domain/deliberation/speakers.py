"""Who speaks in a round: the contributors, anyone a person addressed in the thread meanwhile, then the lead."""

from __future__ import annotations

from collections.abc import Iterator

from nightwatch.domain.deliberation.participants import named_in
from nightwatch.domain.deliberation.state import RunState
from nightwatch.domain.models import Persona


def speakers(state: RunState, active: list[Persona]) -> Iterator[Persona]:
    """This round's speakers: the contributors and anyone a person addressed, then the lead.

    A person may address a persona while the round runs; it answers before the lead, once per round.
    """
    lead = state.panel.lead
    state.addressed = set()
    queue = list(state.panel.contributors)
    spoken: set[str] = set()
    while True:
        queue += [p for p in newly_addressed(state, active) if p.slug != lead.slug]
        queue = [p for p in queue if p.slug not in spoken]
        if not queue:
            break
        persona = queue.pop(0)
        spoken.add(persona.slug)
        yield persona
    yield lead


def newly_addressed(state: RunState, active: list[Persona]) -> list[Persona]:
    """Personas a person named in the thread since the last look (each human message is read once)."""
    messages = state.poster.messages()
    addressed = [p for m in messages[state.human_seen :] if m.persona is None for p in named_in(m.text, active)]
    state.human_seen = len(messages)
    state.addressed |= {p.slug for p in addressed}
    return addressed
