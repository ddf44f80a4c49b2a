"""The teaching use cases: understand a message, find who it is for, record a lesson taught, and find and forget the
lesson a person asks to forget.

Who learns: the personas the message addresses by name (name or slug, any case); else the personas who took part in
the thread's deliberations; else nobody yet (the caller asks which). A lesson taught goes through
`MemoryService.remember`, so the junk guard, redaction, deduplication and supersession apply, and it carries its
teacher as its author. Forgetting is two steps: `closest` finds the lesson nearest in meaning (or words) among the
audience's lessons, and only once someone allowed confirms (`may_forget`: the lesson's author or an admin) does
`forget` remove it from every persona that holds it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace

from nightwatch.domain.deliberation.ports import RECENT_MAX, DeliberationLog
from nightwatch.domain.errors import InvalidInputError, InvalidNameError, LLMError, NotFoundError, StorageError
from nightwatch.domain.llm import LLM, ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt
from nightwatch.domain.memory import MemoryService, validate_lesson_id, validate_query
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.names import persona_slug
from nightwatch.domain.recall import terms
from nightwatch.domain.teaching.intent import Teaching, TeachingPrompt, may_teach, read_teaching
from nightwatch.domain.teaching.phrases import parse_teaching

log = logging.getLogger(__name__)

TAUGHT = "taught"  # the interaction kind of a lesson taught in a thread (its section header says so)
# A lesson is close enough to offer to forget when its cosine to the request, or the share of the request's words it
# contains (all there is without vectors), reaches this.
CLOSE = 0.5
CANDIDATES = 3  # the nearest lessons shown when none is close enough


@dataclass(frozen=True)
class Taught:
    """What teaching one persona did: the lesson recorded (or the kept one it restates), or a storage problem."""

    persona: Persona
    lesson: Lesson | None
    restated: bool = False
    problem: str = ""
    said: str = "created"  # what recording did: "created", "merged into <id>" or "superseded <id>"


@dataclass(frozen=True)
class Match:
    """A lesson some of the audience hold (the same text has the same id in every memory), and how close it is."""

    lesson: Lesson
    personas: tuple[Persona, ...]
    score: float


@dataclass(frozen=True)
class Nearest:
    """The outcome of looking for what to forget: `best` when one lesson is close enough, and the nearest few."""

    best: Match | None
    candidates: tuple[Match, ...]


def may_forget(lesson: Lesson, user: str, *, admin: bool) -> bool:
    """Only the lesson's author (the person who taught or added it) or an admin may forget it."""
    return admin or (lesson.author is not None and lesson.author == user)


class TeachingService:
    """Teaching personas in plain words, for any persona and project."""

    def __init__(self, *, memory: MemoryService, log: DeliberationLog, llm: LLM) -> None:
        self._memory = memory
        self._log = log
        self._llm = llm

    def understand(self, message: str, personas: Sequence[Persona]) -> Teaching:
        """What the message asks: the model's reading when it gives a valid one, else the phrase rules'."""
        if not may_teach(message):
            return Teaching.none()
        prompt = TeachingPrompt(message=message, personas=", ".join(p.name for p in personas) or "none yet")
        request = LLMRequest(
            purpose=Purpose.TEACHING,
            system=SystemPrompt((PromptBlock(prompt.render()),)),
            messages=(ChatMessage(role="user", content="Answer now, in the form asked for."),),
            max_tokens=300,
            topic=message,
        )
        try:
            answer = self._llm.complete(request).text
        except LLMError as err:
            log.warning("Understanding a teaching fell back to the phrase rules: the model failed (%s)", err)
            return parse_teaching(message)
        understood = read_teaching(answer, message)
        if understood is None:
            log.warning("Understanding a teaching fell back to the phrase rules: unusable answer %r", answer[:200])
            return parse_teaching(message)
        return understood

    def audience(self, teaching: Teaching, personas: Sequence[Persona], thread: str) -> tuple[Persona, ...]:
        """The personas named, else those who took part in the thread; () when neither (ask which).

        Raises NotFoundError naming the known personas when a name matches none.
        """
        if teaching.personas:
            named = {persona.slug: persona for persona in (_named(personas, name) for name in teaching.personas)}
            return tuple(named.values())
        return self.participants(thread, personas)

    def participants(self, thread: str, personas: Sequence[Persona]) -> tuple[Persona, ...]:
        """The personas who took a turn in the thread's deliberations, in the order they first spoke."""
        by_name = {persona.name.casefold(): persona for persona in personas}
        found: dict[str, Persona] = {}
        for deliberation in reversed(self._log.recent(RECENT_MAX, thread_prefix=thread)):
            if deliberation.thread != thread or deliberation.id is None:
                continue
            for turn in self._log.turns(deliberation.id):
                persona = by_name.get(turn.persona.casefold())
                if persona is not None:
                    found.setdefault(persona.slug, persona)
        return tuple(found.values())

    def remember(
        self, personas: Sequence[Persona], project: str, text: str, *, author: str, link: str | None
    ) -> list[Taught]:
        """Record the lesson for each persona, taught by `author`; a restatement only counts the kept lesson again.

        A lesson no persona would take (empty, too long, junk) raises InvalidInputError, and nothing is written; one
        that only some refuse (it stitches together lessons one of them has) is reported for those as a problem.
        """
        taught: list[Taught] = []
        refused: list[str] = []
        for persona in personas:
            try:
                found = self._memory.record(persona, project, text, kind=TAUGHT, link=link, author=author)
            except InvalidInputError as err:
                refused.append(str(err))
                taught.append(Taught(persona, None, problem=f"{persona.name}: {err}"))
                continue
            except StorageError as err:  # it says whether the lesson is kept for a retry
                taught.append(Taught(persona, None, problem=str(err)))
                continue
            lesson = found.lesson
            taught.append(Taught(persona, lesson, restated=found.outcome == "merged", said=found.said))
        if refused and len(refused) == len(taught):
            raise InvalidInputError(refused[0])
        return taught

    def closest(self, personas: Sequence[Persona], project: str, wanted: str) -> Nearest:
        """The audience's lesson nearest to `wanted` (by meaning, else by words), if close enough; the nearest few."""
        wanted = validate_query(wanted)
        found: dict[str, Match] = {}
        for persona in personas:
            for hit in self._memory.search(persona, project, wanted, limit=CANDIDATES * 2):
                score = max(hit.similarity, word_share(wanted, hit.lesson.text))
                known = found.get(hit.lesson.id)
                if known is None:
                    found[hit.lesson.id] = Match(hit.lesson, (persona,), score)
                else:
                    better = max(known.score, score)
                    found[hit.lesson.id] = replace(known, personas=(*known.personas, persona), score=better)
        ranked = sorted(found.values(), key=lambda match: -match.score)
        best = ranked[0] if ranked and ranked[0].score >= CLOSE else None
        return Nearest(best, tuple(ranked[:CANDIDATES]))

    def held(self, personas: Sequence[Persona], project: str, lesson_id: str) -> list[tuple[Persona, Lesson]]:
        """Each persona still holding the lesson, with its copy; NotFoundError when none does any more."""
        wanted = validate_lesson_id(lesson_id)
        held = [
            (persona, lesson)
            for persona in personas
            for lesson in self._memory.lessons(persona, project)
            if lesson.id == wanted
        ]
        if not held:
            raise NotFoundError("That lesson has been forgotten already; nothing changed.")
        return held

    def forget(self, held: Sequence[tuple[Persona, Lesson]], project: str) -> list[tuple[Persona, Lesson]]:
        """Remove each copy (the caller checked `may_forget`); returns the copies removed."""
        removed: list[tuple[Persona, Lesson]] = []
        for persona, lesson in held:
            try:
                removed.append((persona, self._memory.forget(persona, project, lesson.id)))
            except NotFoundError:
                continue  # forgotten meanwhile by someone else
        return removed


def _named(personas: Sequence[Persona], name: str) -> Persona:
    """The persona called `name` (its name in any case, or its slug); NotFoundError listing the names otherwise."""
    key = name.strip().lstrip("@").strip().lower()
    try:
        slug = persona_slug(key)
    except InvalidNameError:
        slug = key
    for persona in personas:
        if key == persona.name.lower() or slug == persona.slug:
            return persona
    names = ", ".join(persona.name for persona in personas) or "none yet"
    raise NotFoundError(f"No persona is called {name.strip()!r}. The personas are: {names}. Say it again with one.")


def word_share(wanted: str, text: str) -> float:
    """The share of the request's words (stemmed, without stop words) that the lesson contains."""
    asked = set(terms(wanted))
    return len(asked & set(terms(text))) / len(asked) if asked else 0.0
