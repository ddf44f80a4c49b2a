"""`nightwatch deliberate`, `context`, `history` and `run`: deliberations in the terminal, and the Slack app."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import uuid
from typing import TextIO

from nightwatch.adapters.db import DatabaseProbe
from nightwatch.adapters.runtime import HealthOptions, HotReload, Metrics
from nightwatch.adapters.slack import SlackApp
from nightwatch.config import Settings
from nightwatch.domain.deliberation import (
    DeliberationEngine,
    DeliberationRequest,
)
from nightwatch.domain.deliberation.ports import DeliberationLog
from nightwatch.domain.errors import NotFoundError
from nightwatch.domain.personas import (
    PersonaService,
    project_slug,
)

log = logging.getLogger(__name__)


def deliberate(args: argparse.Namespace, out: TextIO, *, personas: PersonaService, engine: DeliberationEngine) -> int:
    from nightwatch.adapters.terminal import TerminalPoster, render_result_json

    names = tuple(n.strip() for n in (args.personas or "").split(",") if n.strip())
    for name in names:
        personas.get(name)  # fail early with a clear message
    request = DeliberationRequest(
        topic=args.topic,
        project=project_slug(args.project),
        thread=f"terminal:{uuid.uuid4().hex[:12]}",
        personas=names,
    )
    poster = TerminalPoster(out=out, quiet=args.json)
    result = engine.run(request, poster)
    if args.json:
        print(json.dumps(render_result_json(result), ensure_ascii=False, indent=2), file=out)
    for message in result.unsaved:  # lessons storage refused: kept for `nightwatch memory retry`
        print(f"error: {message}", file=sys.stderr)
    if result.model_never_answered:  # a script must tell this from a decision
        print(
            "error: no persona got an answer from the model; check ANTHROPIC_API_KEY and the network.", file=sys.stderr
        )
        return 3
    return 1 if result.unsaved else 0


def context(args: argparse.Namespace, out: TextIO, *, personas: PersonaService, engine: DeliberationEngine) -> int:
    from nightwatch.adapters.terminal import render_budget

    persona = personas.get(args.persona)
    project = project_slug(args.project)
    budget = engine.context_budget(persona.name, project, args.topic)
    if args.show:
        print(budget.system_prompt, file=out)
        return 0
    print(render_budget(persona, project, budget, full=args.full), file=out)
    return 0


def history(args: argparse.Namespace, out: TextIO, *, deliberations: DeliberationLog) -> int:
    if args.show is not None:
        return _show(deliberations, args.show, out)
    recent = deliberations.recent(args.limit)
    if not recent:
        print('No deliberations yet. Start one: nightwatch deliberate "TOPIC"', file=out)
    for item in recent:
        when = f"{item.started_at:%Y-%m-%d %H:%M}" if item.started_at else "?"
        outcome = item.verdict.decision.value if item.verdict else item.status.value
        where = "terminal" if item.thread.startswith("terminal:") else "slack"
        print(f"#{item.id}  {when}  {outcome:<11} {item.project:<16} {where:<8}  {item.topic[:80]}", file=out)
    return 0


def _show(deliberations: DeliberationLog, deliberation_id: int, out: TextIO) -> int:
    """One deliberation as stored: its topic, each turn's whole text (a thread shows turns cut short), its verdict."""
    found = deliberations.get(deliberation_id)
    if found is None:
        raise NotFoundError(f"No deliberation #{deliberation_id}; `nightwatch history` lists their numbers.")
    outcome = found.verdict.decision.value if found.verdict else found.status.value
    print(f"#{found.id}  {found.project}  {outcome}\n{found.topic}\n", file=out)
    for turn in deliberations.turns(deliberation_id):
        skipped = " (not posted)" if turn.skipped else ""
        print(f"{turn.persona} · round {turn.round}{skipped}\n{turn.text}\n", file=out)
    if found.verdict:
        print(f"Verdict: {found.verdict.decision.value}: {found.verdict.summary}", file=out)
    return 0


def run(
    args: argparse.Namespace,
    out: TextIO,
    *,
    settings: Settings,
    slack: SlackApp,
    reload: HotReload,
    metrics: Metrics,
    database: DatabaseProbe,
) -> int:
    from nightwatch.serve import run_socket_mode

    # start-up has already closed the deliberations a dead process left running
    warn_when_memory_is_local(settings)
    ops = settings.operations
    health = None
    if ops.health_port is not None:
        health = HealthOptions(host=ops.health_host, port=ops.health_port, metrics=metrics, database_problem=database)
    run_socket_mode(slack, settings.slack.app_token, reload=reload, health=health)
    return 0


def warn_when_memory_is_local(settings: Settings) -> None:
    """Log, loudly, that this replica's memory stays on its machine although the database is shared."""
    if settings.local_memory_notice:  # the note on stderr scrolls away; a replica's log is where operators look
        log.warning("MEMORY IS LOCAL TO THIS MACHINE. %s", settings.local_memory_notice)
