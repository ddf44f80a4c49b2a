"""`nightwatch_lessons_total{outcome}` counts what recording made of each lesson, as the wired app records them."""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine

from nightwatch.adapters.runtime.metrics import Metrics
from nightwatch.adapters.terminal import TerminalPoster
from nightwatch.config import Settings
from nightwatch.domain.deliberation.engine import DeliberationEngine
from nightwatch.domain.deliberation.models import DeliberationRequest
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.memory import MemoryService
from nightwatch.domain.personas import PersonaService
from nightwatch.startup import StartUp
from nightwatch.wiring import build_injector


def lessons(metrics: Metrics) -> dict[str, float]:
    text = metrics.exposition().decode()
    return {m[1]: float(m[2]) for m in re.finditer(r'nightwatch_lessons_total\{outcome="(\w+)"\} (\S+)', text)}


def test_every_outcome_is_shown_from_the_start_and_counted_by_the_port() -> None:
    metrics = Metrics()
    assert lessons(metrics) == {"created": 0, "merged": 0, "superseded": 0, "refused": 0}
    metrics.lessons_counted("superseded", 2)
    metrics.lessons_counted("refused", 1)
    assert lessons(metrics) == {"created": 0, "merged": 0, "superseded": 2, "refused": 1}


@pytest.fixture
def wired(settings: Settings) -> Iterator[tuple[MemoryService, PersonaService, DeliberationEngine, Metrics]]:
    container = build_injector(settings)
    container.get(StartUp).run()
    try:
        yield (
            container.get(MemoryService),
            container.get(PersonaService),
            container.get(DeliberationEngine),
            container.get(Metrics),
        )
    finally:
        container.get(Engine).dispose()


def test_the_wired_memory_feeds_the_process_metrics_and_a_deliberation_s_lessons_are_counted_once(
    wired: tuple[MemoryService, PersonaService, DeliberationEngine, Metrics],
) -> None:
    memory, personas, engine, metrics = wired
    maya = personas.get("maya")
    told = Counter(
        memory.record(maya, "demo", text).outcome
        for text in (
            "The release train runs on Tuesdays.",
            "The release train runs on Thursdays.",
            "Never merge migrations without rollback scripts.",
            "never merge a migration without a rollback script",
        )
    )
    with pytest.raises(InvalidInputError, match="Not remembered"):  # it stitches two remembered lessons together
        memory.remember(
            maya, "demo", "The release train runs on Thursdays. Never merge migrations without rollback scripts."
        )
    assert told["merged"] == 1
    assert lessons(metrics) == {"refused": 1, "created": 0, "superseded": 0, **told}
    before = lessons(metrics)

    request = DeliberationRequest(topic="Should we cut the release on Friday?", project="demo", thread="t:1")
    result = engine.run(request, TerminalPoster(out=io.StringIO(), quiet=True))
    counted = lessons(metrics)
    assert result.remembered
    added = counted["created"] - before["created"] + counted["superseded"] - before["superseded"]
    new = [item for item in result.remembered if not item.said.startswith("merged into ")]
    assert added == len(new)  # the lessons merged into a restated one are told too, and counted as merged
    assert counted["merged"] - before["merged"] == len(result.remembered) - len(new)
    metrics.deliberation_ended(result)  # as the Slack app does: its lessons were counted as they were recorded
    assert lessons(metrics) == counted

    engine.run(
        DeliberationRequest(topic="Should we cut the release on Friday?", project="demo", thread="t:2"),
        TerminalPoster(out=io.StringIO(), quiet=True),
    )
    assert lessons(metrics)["merged"] > 1, "the same reflections again restate what is remembered"
