"""What became of each lesson offered to memory is counted: created, merged, superseded or refused."""

from __future__ import annotations

from collections import Counter

import pytest

from nightwatch.domain.llm import Purpose
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory.models import ReflectionContext
from nightwatch.domain.memory.ports import LessonOutcome, LessonTally
from nightwatch.domain.models import Persona
from nightwatch.domain.recall.ranking import Recall
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

DEV = Persona(name="Dev", slug="dev", role="Implementer")
CONTEXT = ReflectionContext(kind="pr_review", topic="PR 7: cache warmup", summary="Cache warmup ran too long on boot.")


class CountingTally:
    """The LessonTally port, counting in memory."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def lessons_counted(self, outcome: LessonOutcome, count: int) -> None:
        self.counts[outcome] += count


class BrokenTally:
    def lessons_counted(self, outcome: LessonOutcome, count: int) -> None:
        raise RuntimeError("the metrics registry is gone")


def service(llm: ScriptedLLM, tally: LessonTally) -> MemoryService:
    policy = MemoryPolicy(use_model_for_curation=True)
    return MemoryService(
        store=InMemoryMemoryStore(),
        llm=llm,
        clock=FakeClock(),
        recall=Recall(),
        policy=policy,
        tally=tally,
    )


def test_each_outcome_of_recording_is_counted() -> None:
    llm, tally = ScriptedLLM(default={Purpose.CURATION: '{"action": "create", "target": null}'}), CountingTally()
    memory = service(llm, tally)
    memory.remember(DEV, "p", "The release train runs on Tuesdays.")
    assert tally.counts == {"created": 1}
    memory.remember(DEV, "p", "The release train runs on Thursdays.")
    assert tally.counts == {"created": 1, "superseded": 1}
    memory.remember(DEV, "p", "the release train runs on thursdays")
    assert tally.counts == {"created": 1, "superseded": 1, "merged": 1}

    memory.remember(DEV, "p", "Cache warmup must finish before the health check passes.")
    llm.script(Purpose.CURATION, '{"action": "skip", "target": null}')  # the model: it says nothing new
    llm.script(
        Purpose.REFLECTION,
        "- Cache warmup should finish before health checks report ready.\n"
        "- What patterns, pitfalls or conventions should you remember?",  # the prompt echoed: the junk guard's
    )
    assert memory.reflect(DEV, "p", CONTEXT) == []
    assert tally.counts == {"created": 2, "superseded": 1, "merged": 1, "refused": 2}


def test_a_tally_that_fails_loses_no_lesson(caplog: pytest.LogCaptureFixture) -> None:
    memory = service(ScriptedLLM(default={Purpose.CURATION: '{"action": "create", "target": null}'}), BrokenTally())
    kept = memory.remember(DEV, "p", "The release train runs on Tuesdays.")
    assert memory.lessons(DEV, "p") == [kept]
    assert "could not count 1 created lesson(s)" in caplog.text
