"""The teaching use cases: who learns, recording with the teacher as author, and finding what to forget."""

from __future__ import annotations

import pytest

from nightwatch.domain.deliberation.models import Deliberation, Turn
from nightwatch.domain.errors import InvalidInputError, NotFoundError
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import Recall
from nightwatch.domain.teaching import TAUGHT, Intent, Teaching, TeachingService, may_forget
from tests.fakes import FakeClock, InMemoryDeliberationLog, InMemoryMemoryStore, ScriptedLLM

MAYA = Persona(name="Maya", slug="maya", role="Security Reviewer")
CARLOS = Persona(name="Carlos", slug="carlos", role="Tech Lead")
PRIYA = Persona(name="Priya", slug="priya", role="QA Engineer")
REVIEWER = Persona(name="Code Reviewer", slug="code-reviewer", role="Reviewer")
EVERYONE = [MAYA, CARLOS, PRIYA, REVIEWER]
THREAD = "C1:1795000000.000100"
LINK = "https://slack.com/archives/C1/p1795000000000100"


class World:
    def __init__(self) -> None:
        self.store = InMemoryMemoryStore()
        self.log = InMemoryDeliberationLog()
        self.memory = MemoryService(
            store=self.store,
            llm=ScriptedLLM(),
            clock=FakeClock(),
            recall=Recall(),
            policy=MemoryPolicy(use_model_for_curation=False),
        )
        self.teaching = TeachingService(memory=self.memory, log=self.log, llm=ScriptedLLM())

    def deliberated(self, thread: str, *speakers: str) -> None:
        started = self.log.start(Deliberation("the deploy plan", "night-watch", thread))
        assert started.id is not None
        for name in speakers:
            self.log.add_turn(started.id, Turn(persona=name, role="r", text="…", round=1))


@pytest.fixture
def world() -> World:
    return World()


def teaching(*names: str) -> Teaching:
    return Teaching(Intent.REMEMBER, names, "We deploy on Thursdays now.")


def test_the_personas_named_learn_by_name_in_any_case_or_by_slug(world: World) -> None:
    named = world.teaching.audience(teaching("maya", "code-reviewer", "CARLOS", "Maya"), EVERYONE, THREAD)
    assert named == (MAYA, REVIEWER, CARLOS)


def test_an_unknown_name_is_refused_with_the_names_there_are(world: World) -> None:
    with pytest.raises(NotFoundError, match=r"No persona is called 'Bob'.*Maya, Carlos, Priya, Code Reviewer"):
        world.teaching.audience(teaching("Maya", "Bob"), EVERYONE, THREAD)


def test_without_a_name_the_threads_participants_learn_in_the_order_they_spoke(world: World) -> None:
    world.deliberated(THREAD, "Priya", "Maya", "Priya", "Someone Renamed")
    world.deliberated(THREAD + "9", "Carlos")  # another thread whose id starts the same
    world.deliberated("C2:1795000000.000100", "Carlos")
    world.deliberated(THREAD, "Maya", "Carlos")
    assert world.teaching.audience(teaching(), EVERYONE, THREAD) == (PRIYA, MAYA, CARLOS)


def test_with_neither_nobody_learns_yet(world: World) -> None:
    assert world.teaching.audience(teaching(), EVERYONE, THREAD) == ()


def test_a_lesson_taught_is_recorded_for_each_persona_with_its_teacher(world: World) -> None:
    taught = world.teaching.remember(
        [MAYA, CARLOS], "night-watch", "We deploy on Thursdays now.", author="U1", link=LINK
    )
    assert [(t.persona, t.restated, t.problem) for t in taught] == [(MAYA, False, ""), (CARLOS, False, "")]
    for persona in (MAYA, CARLOS):
        [lesson] = world.memory.lessons(persona, "night-watch")
        assert (lesson.text, lesson.author, lesson.kind, lesson.link) == (
            "We deploy on Thursdays now.",
            "U1",
            TAUGHT,
            LINK,
        )
    assert "## 2026-11-21 · taught · " + LINK in world.store.read("maya", "night-watch")


def test_teaching_it_again_is_a_restatement_that_keeps_the_first_teacher(world: World) -> None:
    world.teaching.remember([MAYA], "p", "We deploy on Thursdays now.", author="U1", link=None)
    [again] = world.teaching.remember([MAYA], "p", "We deploy on Thursdays now.", author="U2", link=None)
    assert again.restated
    assert again.lesson is not None
    assert (again.lesson.seen, again.lesson.author) == (2, "U1")


def test_an_update_supersedes_the_lesson_it_changes(world: World) -> None:
    world.teaching.remember([MAYA], "p", "Staging data is wiped every Monday.", author="U1", link=None)
    world.teaching.remember([MAYA], "p", "Staging data is now wiped every Tuesday.", author="U2", link=None)
    assert [lesson.text for lesson in world.memory.lessons(MAYA, "p")] == ["Staging data is now wiped every Tuesday."]


@pytest.mark.parametrize(("text", "words"), [("ok", "Not remembered"), ("x" * 401, "at most 400")])
def test_junk_or_a_lesson_too_long_is_refused_and_nothing_is_written(world: World, text: str, words: str) -> None:
    with pytest.raises(InvalidInputError, match=words):
        world.teaching.remember([MAYA, CARLOS], "p", text, author="U1", link=None)
    assert world.memory.lessons(MAYA, "p") == world.memory.lessons(CARLOS, "p") == []


def test_the_closest_lesson_is_found_with_every_persona_holding_it(world: World) -> None:
    world.teaching.remember([MAYA, CARLOS], "p", "Sessions are cached in Redis for a day.", author="U1", link=None)
    world.teaching.remember([MAYA], "p", "We deploy on Fridays after the release train.", author="U1", link=None)
    nearest = world.teaching.closest([MAYA, CARLOS, PRIYA], "p", "we moved off Redis")
    assert nearest.best is not None
    assert nearest.best.lesson.text == "Sessions are cached in Redis for a day."
    assert nearest.best.personas == (MAYA, CARLOS)


def test_nothing_close_gives_no_offer_but_the_nearest_few(world: World) -> None:
    world.teaching.remember([MAYA], "p", "Sessions are cached in Redis for a day.", author="U1", link=None)
    nearest = world.teaching.closest([MAYA], "p", "the Redis cluster, coffee machine and printer")
    assert nearest.best is None
    assert [match.lesson.text for match in nearest.candidates] == ["Sessions are cached in Redis for a day."]
    assert world.teaching.closest([MAYA], "p", "kubernetes").candidates == ()


def test_only_the_author_or_an_admin_may_forget() -> None:
    world = World()
    [taught] = world.teaching.remember([MAYA], "p", "Sessions are cached in Redis.", author="U1", link=None)
    assert taught.lesson is not None
    assert may_forget(taught.lesson, "U1", admin=False)
    assert not may_forget(taught.lesson, "U2", admin=False)
    assert may_forget(taught.lesson, "U2", admin=True)


def test_forgetting_removes_every_copy_and_a_second_time_finds_none(world: World) -> None:
    taught = world.teaching.remember([MAYA, CARLOS], "p", "Sessions are cached in Redis.", author="U1", link=None)
    lesson_id = taught[0].lesson.id if taught[0].lesson else ""
    held = world.teaching.held([MAYA, CARLOS, PRIYA], "p", lesson_id)
    assert [persona for persona, _ in held] == [MAYA, CARLOS]
    assert [persona for persona, _ in world.teaching.forget(held, "p")] == [MAYA, CARLOS]
    assert world.memory.lessons(MAYA, "p") == world.memory.lessons(CARLOS, "p") == []
    assert world.teaching.forget(held, "p") == []  # forgotten meanwhile: nothing to remove
    with pytest.raises(NotFoundError, match="forgotten already"):
        world.teaching.held([MAYA, CARLOS], "p", lesson_id)
    with pytest.raises(InvalidInputError, match="8 characters"):
        world.teaching.held([MAYA], "p", "not-an-id")


def test_a_persona_that_refuses_the_lesson_is_reported_while_the_others_learn_it(world: World) -> None:
    world.memory.remember(CARLOS, "p", "The payments suite is flaky on CI runners.")
    world.memory.remember(CARLOS, "p", "Rerun the payments suite before blaming a change.")
    stitched = "The payments suite is flaky on CI runners; rerun the payments suite before blaming a change."
    maya, carlos = world.teaching.remember([MAYA, CARLOS], "p", stitched, author="U1", link=None)
    assert maya.lesson is not None
    assert maya.lesson.text == stitched
    assert carlos.lesson is None
    assert carlos.problem.startswith("Carlos: Not remembered: it copies lessons already remembered")
    assert len(world.memory.lessons(CARLOS, "p")) == 2
