"""Finishing a deliberation another process started: its working state rebuilt from the stored turns.

The panel is chosen again from the stored topic (the same `choose_panel`, so the same personas). Every stored turn
counts as taken: the resumed run does not ask that persona again in that round, so nothing stored is posted twice.
It carries on with the round of the latest stored turn; a turn that was being generated when the owner died was
neither stored nor posted (turns are stored before they are posted), so it is simply taken again. The lead's request
for changes that opened the round in progress is stored with the deliberation (`ChangesRequest`), so the resumed
turns are asked for those changes and its action items too, and a round the lead opened before any of its turns was
stored is carried on rather than decided again. What is not stored is lost: which lessons the earlier turns injected.
"""

from __future__ import annotations

from collections.abc import Sequence

from nightwatch.domain.deliberation.models import ChangesRequest, Deliberation, Turn
from nightwatch.domain.deliberation.participants import Panel
from nightwatch.domain.deliberation.policy import DeliberationPolicy
from nightwatch.domain.deliberation.ports import Poster
from nightwatch.domain.deliberation.state import RunState, Scope
from nightwatch.domain.models import Persona


def resumed_state(
    claimed: Deliberation,
    stored: Sequence[Turn],
    *,
    scope: Scope,
    panel: Panel,
    poster: Poster,
    personas: Sequence[Persona],
    policy: DeliberationPolicy | None = None,
) -> RunState:
    """The RunState of `claimed` as its stored turns left it; people's messages so far count as already read."""
    seen = len(poster.messages())
    # The thread may hold earlier deliberations too; the story told to reflection is the last messages anyway.
    state = RunState(
        scope,
        poster,
        panel,
        claimed,
        first_message=0,
        human_seen=seen,
        usage=claimed.usage,
        policy=policy or DeliberationPolicy(),
        changes=claimed.changes.verdict if claimed.changes is not None else None,
    )
    by_name = {p.name.casefold(): p for p in (*personas, *panel.contributors, panel.lead)}
    for turn in stored:
        persona = by_name.get(turn.persona.casefold())
        if persona is not None:
            state.speakers.setdefault(persona.slug, persona)
        state.taken.add((turn.persona.casefold(), turn.round))
    state.turns = list(stored)
    state.replies = sum(not turn.skipped for turn in stored)
    return state


def round_in_progress(stored: Sequence[Turn], changes: ChangesRequest | None = None) -> int:
    """The round a resumed run carries on with: that of the latest stored turn, or the round the lead's stored
    request for changes opened, whichever is later (the first when there is neither)."""
    opened = changes.round if changes is not None else 1
    return max([opened, *(turn.round for turn in stored)])
