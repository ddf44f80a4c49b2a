"""Fakes for our own ports: small, real implementations that keep everything in memory."""

from __future__ import annotations

import copy
import fnmatch
import itertools
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import PurePosixPath
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.arrays import Arrays
from nightwatch.domain.deliberation.models import ChangesRequest, Deliberation, DeliberationStatus, Turn, Verdict
from nightwatch.domain.deliberation.ports import recent_limit
from nightwatch.domain.errors import (
    ConflictError,
    FetchError,
    InvalidInputError,
    LLMOutputError,
    NotFoundError,
    StorageError,
)
from nightwatch.domain.llm import LLMRequest, LLMResponse, Purpose, Usage
from nightwatch.domain.memory.models import PendingLesson
from nightwatch.domain.memory.ports import FolderMove, Forgotten
from nightwatch.domain.models import Persona, ThreadMessage
from nightwatch.domain.names import check_slug
from nightwatch.domain.pins.models import Pin, PinKind
from nightwatch.domain.pins.ports import PinSnapshot
from nightwatch.domain.sharing.models import Item, ItemShare, Share
from nightwatch.domain.tool_use import ToolCall
from nightwatch.domain.vectors import VectorTable

T0 = datetime(2026, 11, 21, 9, 0, tzinfo=UTC)


class FakeClock:
    def __init__(self, start: datetime = T0) -> None:
        self.current = start

    def now(self) -> datetime:
        return self.current

    def advance(self, **delta: float) -> None:
        self.current += timedelta(**delta)


Reply = str | LLMResponse | BaseException | Callable[[LLMRequest], str | LLMResponse]


class ScriptedLLM:
    """Answers from per-purpose scripts (queues); falls back to `default` replies; records every request.

    A reply is a text, a whole LLMResponse (to call tools: `calling(...)`), an exception to raise, or a function of
    the request giving either.
    """

    def __init__(self, default: dict[Purpose, Reply] | None = None) -> None:
        self.scripts: dict[Purpose, list[Reply]] = {}
        self.default: dict[Purpose, Reply] = dict(default or {})
        self.requests: list[LLMRequest] = []
        self._lock = threading.Lock()

    def script(self, purpose: Purpose, *replies: Reply) -> ScriptedLLM:
        self.scripts.setdefault(purpose, []).extend(replies)
        return self

    def complete(self, request: LLMRequest) -> LLMResponse:
        with self._lock:
            self.requests.append(request)
            queue = self.scripts.get(request.purpose)
            reply = queue.pop(0) if queue else self.default.get(request.purpose)
        if reply is None:
            raise LLMOutputError(f"ScriptedLLM has no reply for {request.purpose}")
        if isinstance(reply, BaseException):
            raise reply
        answer = reply(request) if callable(reply) else reply
        if isinstance(answer, LLMResponse):
            return answer
        return LLMResponse(text=answer, usage=Usage(input_tokens=10, output_tokens=5), model="scripted")

    def calls(self, purpose: Purpose) -> list[LLMRequest]:
        return [r for r in self.requests if r.purpose is purpose]


_CALL_IDS = itertools.count(1)


def calling(*calls: tuple[str, dict[str, object]], text: str = "") -> LLMResponse:
    """A scripted answer that calls tools (ids call-1, call-2, ... unique in the test run), with `text` beside them."""
    made = tuple(ToolCall(f"call-{next(_CALL_IDS)}", name, given) for name, given in calls)
    return LLMResponse(text=text, usage=Usage(input_tokens=10, output_tokens=5), model="scripted", tool_calls=made)


class InMemoryPersonaRepository:
    def __init__(self, personas: Iterable[Persona] = ()) -> None:
        self._rows: dict[int, Persona] = {}
        self._seeded: dict[str, str | None] = {}  # file marks: slug -> fingerprint
        self._next = 1
        for persona in personas:
            self.add(persona)

    def list(self, *, include_inactive: bool = True) -> list[Persona]:
        rows = sorted(self._rows.values(), key=lambda p: p.id or 0)
        return [p for p in rows if include_inactive or p.active]

    def get(self, persona_id: int) -> Persona | None:
        return self._rows.get(persona_id)

    def find(self, name_or_slug: str) -> Persona | None:
        key = name_or_slug.strip().lower()
        return next((p for p in self._rows.values() if key in (p.name.lower(), p.slug)), None)

    def _check_unique(self, persona: Persona) -> None:
        for other in self._rows.values():
            if other.id != persona.id and (other.name.lower() == persona.name.lower() or other.slug == persona.slug):
                raise ConflictError(f"A persona named {other.name!r} already exists.")

    def add(self, persona: Persona) -> Persona:
        self._check_unique(persona)
        stored = replace(persona, id=self._next)
        self._rows[self._next] = stored
        self._next += 1
        return stored

    def save(self, persona: Persona) -> Persona:
        if persona.id not in self._rows:
            raise NotFoundError(f"No persona with id {persona.id}.")
        self._check_unique(persona)
        self._rows[persona.id] = persona
        return persona

    def remove(self, persona_id: int) -> None:
        self._rows.pop(persona_id, None)

    def file_marks(self) -> dict[str, str | None]:
        return dict(self._seeded)

    def mark_file(self, slug: str, fingerprint: str | None) -> None:
        self._seeded[slug] = fingerprint


class InMemoryMemoryStore:
    """MemoryStore over a dict of (persona_slug, project_slug) -> text, with folder moves modelled by slug."""

    def __init__(self) -> None:
        self.files: dict[tuple[str, str], str] = {}
        self.previous: dict[tuple[str, str], str] = {}
        self.vectors: dict[tuple[str, str], VectorTable] = {}
        self.indexes: dict[tuple[str, str], dict[str, NDArray[Any]]] = {}  # not moved with a folder: made again
        self.archived: dict[str, dict[str, str]] = {}
        self.archived_vectors: dict[str, dict[str, VectorTable]] = {}
        self._lock = threading.RLock()

    def read(self, persona_slug: str, project_slug: str) -> str:
        return self.files.get((check_slug(persona_slug), check_slug(project_slug)), "")

    def update(self, persona_slug: str, project_slug: str, change: Callable[[str], str]) -> str:
        key = (check_slug(persona_slug), check_slug(project_slug))
        with self._lock:
            old = self.files.get(key, "")
            new = change(old)
            if new != old:
                self.files[key] = new
            return new

    def replace_keeping_previous(self, persona_slug: str, project_slug: str, expected: str, text: str) -> bool:
        key = (check_slug(persona_slug), check_slug(project_slug))
        with self._lock:
            if self.files.get(key, "") != expected:
                return False
            self.previous[key] = expected
            self.files[key] = text
            return True

    def rollback(self, persona_slug: str, project_slug: str) -> bool:
        key = (check_slug(persona_slug), check_slug(project_slug))
        with self._lock:
            if key not in self.previous:
                return False
            self.files[key] = self.previous.pop(key)
            return True

    def projects(self, persona_slug: str) -> list[str]:
        slug = check_slug(persona_slug)
        return sorted(project for persona, project in self.files if persona == slug)

    def location(self, persona_slug: str, project_slug: str) -> str:
        return f"agents/{check_slug(persona_slug)}/memories/{check_slug(project_slug)}/main.md"

    def read_vectors(self, persona_slug: str, project_slug: str) -> VectorTable:
        return self.vectors.get((check_slug(persona_slug), check_slug(project_slug)), VectorTable.empty())

    def save_vectors(
        self, persona_slug: str, project_slug: str, table: VectorTable, *, keep: frozenset[str] | None = None
    ) -> None:
        key = (check_slug(persona_slug), check_slug(project_slug))
        with self._lock:
            stored = self.vectors.get(key, VectorTable.empty())
            if keep is not None:
                stored = stored.only(keep)
            self.vectors[key] = stored.with_rows(table)

    def read_index(self, persona_slug: str, project_slug: str) -> Arrays:
        return self.indexes.get((check_slug(persona_slug), check_slug(project_slug)), {})

    def save_index(self, persona_slug: str, project_slug: str, arrays: Callable[[], Arrays]) -> None:
        key = (check_slug(persona_slug), check_slug(project_slug))
        with self._lock:
            self.indexes[key] = {name: np.array(array) for name, array in arrays().items()}

    def _take(self, slug: str) -> tuple[dict[str, str], dict[str, VectorTable]]:
        """Remove and return one persona's folder: its files and its vectors, by project."""
        files = {project: text for (persona, project), text in self.files.items() if persona == slug}
        vectors = {project: table for (persona, project), table in self.vectors.items() if persona == slug}
        for project in files:
            del self.files[(slug, project)]
        for project in vectors:
            del self.vectors[(slug, project)]
        return files, vectors

    def _put(self, slug: str, folder: tuple[dict[str, str], dict[str, VectorTable]]) -> None:
        files, vectors = folder
        self.files.update({(slug, project): text for project, text in files.items()})
        self.vectors.update({(slug, project): table for project, table in vectors.items()})

    def _archive(self, name: str, folder: tuple[dict[str, str], dict[str, VectorTable]]) -> None:
        self.archived[name], self.archived_vectors[name] = folder

    def _unarchive(self, name: str) -> tuple[dict[str, str], dict[str, VectorTable]]:
        return self.archived.pop(name), self.archived_vectors.pop(name)

    def migrate(self, old_slug: str, new_slug: str, now: datetime) -> FolderMove:
        old, new = check_slug(old_slug), check_slug(new_slug)
        with self._lock:
            moving = self._take(old)
            if not moving[0]:
                self._put(old, moving)
                return FolderMove(moved=False)
            set_aside = None
            stray = self._take(new)
            if stray[0]:
                name = f"{new}-{now:%Y%m%dT%H%M%SZ}"
                self._archive(name, stray)
                set_aside = PurePosixPath("agents/.archived") / name
            self._put(new, moving)
            return FolderMove(True, PurePosixPath("agents") / old, PurePosixPath("agents") / new, set_aside)

    def archive(self, slug: str, now: datetime) -> FolderMove:
        slug = check_slug(slug)
        with self._lock:
            taken = self._take(slug)
            if not taken[0]:
                self._put(slug, taken)
                return FolderMove(moved=False)
            name = f"{slug}-{now:%Y%m%dT%H%M%SZ}"
            self._archive(name, taken)
            return FolderMove(True, PurePosixPath("agents") / slug, PurePosixPath("agents/.archived") / name)

    def restore(self, move: FolderMove) -> None:
        if not move.moved or move.source is None or move.target is None:
            return
        with self._lock:
            if move.target.parent.name == ".archived":
                self._put(move.source.name, self._unarchive(move.target.name))
            else:
                self._put(move.source.name, self._take(move.target.name))
            if move.set_aside is not None:
                self._put(move.target.name, self._unarchive(move.set_aside.name))

    @contextmanager
    def moving(self, *persona_slugs: str) -> Iterator[None]:
        with self._lock:  # every write waits, not only these personas': simple, and enough for a fake
            yield


class InMemoryPendingLessons:
    """PendingLessons in a list, oldest first; `broken` makes every call fail as an unreachable database would."""

    def __init__(self) -> None:
        self.rows: list[PendingLesson] = []
        self.broken = False
        self._next = 1

    def keep(self, lessons: Sequence[PendingLesson]) -> list[PendingLesson]:
        self._check()
        kept = []
        for lesson in lessons:
            kept.append(replace(lesson, id=self._next))
            self._next += 1
        self.rows += kept
        return kept

    def waiting(self, persona_slug: str | None = None, project: str | None = None) -> list[PendingLesson]:
        self._check()
        return [row for row in self.rows if persona_slug in (None, row.persona) and project in (None, row.project)]

    def remove(self, ids: Sequence[int]) -> None:
        self._check()
        self.rows = [row for row in self.rows if row.id not in ids]

    def failed(self, ids: Sequence[int], error: str) -> None:
        self._check()
        self.rows = [replace(row, error=error) if row.id in ids else row for row in self.rows]

    def move(self, old_slug: str, new_slug: str) -> int:
        self._check()
        moved = sum(row.persona == old_slug for row in self.rows)
        self.rows = [replace(row, persona=new_slug) if row.persona == old_slug else row for row in self.rows]
        return moved

    def drop(self, persona_slug: str) -> int:
        self._check()
        dropped = sum(row.persona == persona_slug for row in self.rows)
        self.rows = [row for row in self.rows if row.persona != persona_slug]
        return dropped

    def _check(self) -> None:
        if self.broken:
            raise StorageError("The database could not keep lessons for a retry (OperationalError); check it.")


class InMemoryForgottenLessons:
    """ForgottenLessons in a dict, ids from 1."""

    def __init__(self) -> None:
        self.rows: dict[int, Forgotten] = {}

    def keep(self, forgotten: Forgotten) -> Forgotten:
        kept = replace(forgotten, id=len(self.rows) + 1)
        self.rows[kept.id or 0] = kept
        return kept

    def get(self, forgotten_id: int) -> Forgotten | None:
        return self.rows.get(forgotten_id)

    def mark_restored(self, forgotten_id: int, user: str, now: datetime) -> bool:
        found = self.rows.get(forgotten_id)
        if found is None or found.restored_by is not None:
            return False
        self.rows[forgotten_id] = replace(found, restored_at=now, restored_by=user)
        return True


class InMemoryShareRepository:
    """ShareRepository in a list, beside a persona repository: like the database's foreign keys, a share naming a
    persona that repository no longer has is gone, and one naming an unknown persona is refused."""

    def __init__(self, personas: InMemoryPersonaRepository) -> None:
        self.personas = personas
        self.rows: list[Share] = []
        self.broken = False
        self.received_calls = 0

    def put(self, share: Share) -> Share | None:
        self._check()
        alive = self._alive()
        if share.sharer_id not in alive or (share.receiver_id is not None and share.receiver_id not in alive):
            raise NotFoundError("One of the personas of this share no longer exists.")
        for at, row in enumerate(self.rows):
            if (row.sharer_id, row.receiver_id, row.project) == (share.sharer_id, share.receiver_id, share.project):
                self.rows[at] = replace(row, what=share.what)
                return row
        self.rows.append(share)
        return None

    def remove(self, sharer_id: int, receiver_id: int | None, project: str) -> Share | None:
        self._check()
        for row in self._live():
            if (row.sharer_id, row.receiver_id, row.project) == (sharer_id, receiver_id, project):
                self.rows.remove(row)
                return row
        return None

    def list(self, *, project: str | None = None, persona_id: int | None = None) -> list[Share]:
        self._check()
        return [
            row
            for row in self._live()
            if project in (None, row.project) and (persona_id is None or persona_id in (row.sharer_id, row.receiver_id))
        ]

    def received(self, receiver_id: int, project: str) -> list[Share]:
        self._check()
        self.received_calls += 1
        return [row for row in self._live() if row.project == project and row.receiver_id in (None, receiver_id)]

    def _alive(self) -> set[int | None]:
        return {persona.id for persona in self.personas.list()}

    def _live(self) -> list[Share]:
        alive = self._alive()
        self.rows = [r for r in self.rows if r.sharer_id in alive and (r.receiver_id is None or r.receiver_id in alive)]
        return list(self.rows)

    def _check(self) -> None:
        if self.broken:
            raise StorageError("The database could not read the shares (OperationalError); check it.")


class InMemoryItemShareRepository:
    """ItemShareRepository in a list, beside a persona repository: like the database's foreign keys, a share naming a
    persona that repository no longer has is gone, and one naming an unknown persona is refused."""

    def __init__(self, personas: InMemoryPersonaRepository) -> None:
        self.personas = personas
        self.rows: list[ItemShare] = []
        self.broken = False

    def put(self, share: ItemShare) -> ItemShare | None:
        self._check()
        alive = {persona.id for persona in self.personas.list()}
        if share.sharer_id not in alive or (share.receiver_id is not None and share.receiver_id not in alive):
            raise NotFoundError("One of the personas of this share no longer exists.")
        found = self._find(share.sharer_id, share.receiver_id, share.project, share.item)
        if found is None:
            self.rows.append(share)
        return found

    def remove(self, sharer_id: int, receiver_id: int | None, project: str, item: Item) -> ItemShare | None:
        self._check()
        found = self._find(sharer_id, receiver_id, project, item)
        if found is not None:
            self.rows.remove(found)
        return found

    def list(self, *, project: str | None = None, persona_id: int | None = None) -> list[ItemShare]:
        self._check()
        return [
            row
            for row in self._live()
            if project in (None, row.project) and (persona_id is None or persona_id in (row.sharer_id, row.receiver_id))
        ]

    def received(self, receiver_id: int, project: str) -> list[ItemShare]:
        self._check()
        return [row for row in self._live() if row.project == project and row.receiver_id in (None, receiver_id)]

    def _find(self, sharer_id: int, receiver_id: int | None, project: str, item: Item) -> ItemShare | None:
        key = (sharer_id, receiver_id, project, item)
        rows = self._live()
        return next((row for row in rows if (row.sharer_id, row.receiver_id, row.project, row.item) == key), None)

    def _live(self) -> list[ItemShare]:
        alive = {persona.id for persona in self.personas.list()}
        self.rows = [r for r in self.rows if r.sharer_id in alive and (r.receiver_id is None or r.receiver_id in alive)]
        return list(self.rows)

    def _check(self) -> None:
        if self.broken:
            raise StorageError("The database could not read the shares (OperationalError); check it.")


class InMemoryPinRepository:
    """PinRepository in a dict, beside a persona repository: like the database's foreign key, a pin whose persona that
    repository no longer has is gone, and one naming an unknown persona is refused. `broken` fails every call."""

    def __init__(self, personas: InMemoryPersonaRepository | None = None) -> None:
        self.personas = personas
        self.rows: dict[int, tuple[Pin, str]] = {}
        self.broken = False
        self.writes = 0
        self._next = 1

    def add(self, pin: Pin, key: str) -> tuple[Pin, bool]:
        self._check()
        if pin.persona_id is not None and pin.persona_id not in self._alive():
            raise NotFoundError("The persona of this pin no longer exists.")
        self.writes += 1
        for pin_id, (row, row_key) in self._live().items():
            if (row.persona_id, row.project, row_key) == (pin.persona_id, pin.project, key):
                stored = replace(pin, id=pin_id, added_by=row.added_by, created_at=row.created_at)
                self.rows[pin_id] = (stored, key)
                return stored, False
        stored = replace(pin, id=self._next)
        self.rows[self._next] = (stored, key)
        self._next += 1
        return stored, True

    def get(self, pin_id: int) -> Pin | None:
        self._check()
        found = self._live().get(pin_id)
        return found[0] if found else None

    def list(self, *, project: str | None = None, kind: PinKind | None = None) -> list[Pin]:
        self._check()
        pins = [row for row, _ in self._live().values()]
        return [pin for pin in pins if project in (None, pin.project) and kind in (None, pin.kind)]

    def for_persona(self, persona_id: int, project: str) -> list[Pin]:
        return [pin for pin in self.list(project=project) if pin.persona_id in (None, persona_id)]

    def update(self, pin: Pin) -> Pin | None:
        self._check()
        live = self._live()
        if pin.id not in live:
            return None
        self.writes += 1
        old, key = live[pin.id]
        stored = replace(pin, persona_id=old.persona_id, project=old.project, kind=old.kind, added_by=old.added_by)
        self.rows[pin.id] = (stored, key)
        return stored

    def remove(self, pin_id: int) -> Pin | None:
        self._check()
        found = self._live().get(pin_id)
        if found is None:
            return None
        del self.rows[pin_id]
        return found[0]

    def _alive(self) -> set[int | None]:
        return {persona.id for persona in self.personas.list()} if self.personas is not None else set()

    def _live(self) -> dict[int, tuple[Pin, str]]:
        """The rows whose persona exists (ids are never reused, so a rolled-back delete brings its pins back)."""
        rows = sorted(self.rows.items())
        if self.personas is None:
            return dict(rows)
        alive = self._alive()
        return {k: v for k, v in rows if v[0].persona_id is None or v[0].persona_id in alive}

    def _check(self) -> None:
        if self.broken:
            raise StorageError("The database could not read the pins (OperationalError); check it.")


class FakePinFiles:
    """PinFiles over a dict of absolute path -> text; each write gives a new stamp. `refused` paths are refused."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}
        self.refused: dict[str, str] = {}  # path -> why
        self.stamps: dict[str, int] = {}
        self.reads = 0

    def write(self, path: str, text: str) -> None:
        self.files[path] = text
        self.stamps[path] = self.stamps.get(path, 0) + 1

    def delete(self, path: str) -> None:
        del self.files[path]

    def read(self, path: str, *, anywhere: bool) -> PinSnapshot:
        self.reads += 1
        if path in self.refused:
            raise InvalidInputError(self.refused[path])
        if path not in self.files:
            raise NotFoundError(f"There is no file at {path}.")
        return PinSnapshot(source=path, text=self.files[path], stamp=f"v{self.stamps[path]}")

    def stamp(self, path: str) -> str | None:
        if path in self.refused:
            raise InvalidInputError(self.refused[path])
        return f"v{self.stamps[path]}" if path in self.files else None

    def expand(self, path: str, *, anywhere: bool, recursive: bool, limit: int) -> list[str]:
        """`path` itself for a file; else the files under it as a folder, or matching it as a glob (fnmatch)."""
        if path in self.files or path in self.refused:
            return [path]
        known = sorted({*self.files, *self.refused})
        if any(mark in path for mark in "*?["):
            found = [name for name in known if fnmatch.fnmatchcase(name, path)]
        else:
            inside = [name for name in known if name.startswith(path.rstrip("/") + "/")]
            found = [n for n in inside if recursive or "/" not in n[len(path.rstrip("/")) + 1 :]]
        if len(found) > limit:
            raise InvalidInputError(f"{path} names {len(found)} files; at most {limit} can be pinned at once.")
        if not found:
            raise NotFoundError(f"{path} names no file to pin.")
        return found


class FakePinPages:
    """PinPages over a dict of URL -> text; a URL not in it cannot be fetched."""

    def __init__(self, pages: dict[str, str] | None = None) -> None:
        self.pages = dict(pages or {})
        self.fetched: list[str] = []

    def fetch(self, url: str) -> PinSnapshot:
        self.fetched.append(url)
        if url not in self.pages:
            raise FetchError(f"{url} could not be fetched (connection refused); nothing was pinned.")
        return PinSnapshot(source=url, text=self.pages[url])


@dataclass(frozen=True)
class InMemoryPersonaTransaction:
    personas: InMemoryPersonaRepository
    memory: InMemoryMemoryStore
    pending: InMemoryPendingLessons
    shares: InMemoryShareRepository
    pins: InMemoryPinRepository = field(default_factory=InMemoryPinRepository)


class InMemoryPersonaTransactions:
    """PersonaTransactions over the in-memory fakes: a block that raises puts all four back as they were."""

    def __init__(
        self,
        repo: InMemoryPersonaRepository,
        store: InMemoryMemoryStore,
        pending: InMemoryPendingLessons,
        shares: InMemoryShareRepository | None = None,
        pins: InMemoryPinRepository | None = None,
    ) -> None:
        self.open = InMemoryPersonaTransaction(
            repo, store, pending, shares or InMemoryShareRepository(repo), pins or InMemoryPinRepository(repo)
        )
        self.committed = 0

    @contextmanager
    def begin(self) -> Iterator[InMemoryPersonaTransaction]:
        repo, store, pending, shares = self.open.personas, self.open.memory, self.open.pending, self.open.shares
        saved = (
            (dict(repo._rows), dict(repo._seeded), repo._next),
            {name: copy.deepcopy(getattr(store, name)) for name in _STORE_STATE},
            (list(pending.rows), pending._next),
            list(shares.rows),
        )
        try:
            yield self.open
        except BaseException:
            (repo._rows, repo._seeded, repo._next), kept, (pending.rows, pending._next), shares.rows = saved
            for name, value in kept.items():
                setattr(store, name, value)
            raise
        self.committed += 1


_STORE_STATE = ("files", "previous", "vectors", "archived", "archived_vectors")


class InMemoryDeliberationLog:
    def __init__(self) -> None:
        self.deliberations: dict[int, Deliberation] = {}
        self.turn_rows: dict[int, list[Turn]] = {}
        self.summaries: dict[str, tuple[int, str]] = {}
        self.extractions: dict[str, int] = {}
        self._next = 1
        self._lock = threading.Lock()

    def start(self, deliberation: Deliberation) -> Deliberation:
        with self._lock:
            stored = replace(deliberation, id=self._next)
            self.deliberations[self._next] = stored
            self.turn_rows[self._next] = []
            self._next += 1
            return stored

    def add_turn(self, deliberation_id: int, turn: Turn) -> None:
        self.turn_rows[deliberation_id].append(turn)

    def add_usage(self, deliberation_id: int, usage: Usage) -> None:
        current = self.deliberations[deliberation_id]
        self.deliberations[deliberation_id] = replace(current, usage=current.usage + usage)

    def finish(self, deliberation_id: int, status: DeliberationStatus, verdict: Verdict | None, now: datetime) -> None:
        current = self.deliberations[deliberation_id]
        self.deliberations[deliberation_id] = replace(current, status=status, verdict=verdict, finished_at=now)

    def get(self, deliberation_id: int) -> Deliberation | None:
        return self.deliberations.get(deliberation_id)

    def turns(self, deliberation_id: int) -> list[Turn]:
        return list(self.turn_rows.get(deliberation_id, []))

    def recent(self, limit: int = 10, thread_prefix: str | None = None) -> list[Deliberation]:
        rows = [d for d in self.deliberations.values() if thread_prefix is None or d.thread.startswith(thread_prefix)]
        return sorted(rows, key=lambda d: d.id or 0, reverse=True)[: recent_limit(limit)]

    def running(self, idle_since: datetime | None = None) -> list[Deliberation]:
        def idle(d: Deliberation) -> bool:
            if idle_since is None:
                return True
            times = [d.started_at, *(t.created_at for t in self.turn_rows.get(d.id or 0, []))]
            return all(t is not None and t < idle_since for t in times)

        return [d for d in self.deliberations.values() if d.status is DeliberationStatus.RUNNING and idle(d)]

    def interrupt(self, deliberation_id: int, now: datetime) -> bool:
        current = self.deliberations[deliberation_id]
        if current.status is not DeliberationStatus.RUNNING:
            return False
        self.deliberations[deliberation_id] = replace(current, status=DeliberationStatus.INTERRUPTED, finished_at=now)
        return True

    def renew(self, owner: str, threads: Sequence[str], now: datetime) -> int:
        with self._lock:
            held = [
                d
                for d in self.deliberations.values()
                if d.owner == owner
                and d.thread in threads
                and d.status is DeliberationStatus.RUNNING
                and d.heartbeat_at is not None
            ]
            for d in held:
                self.deliberations[d.id or 0] = replace(d, heartbeat_at=now)
            return len(held)

    def claim(
        self, deliberation_id: int, *, holder: str | None, owner: str, now: datetime, stale_before: datetime | None
    ) -> Deliberation | None:
        with self._lock:
            d = self.deliberations.get(deliberation_id)
            if d is None or d.status is not DeliberationStatus.RUNNING or d.heartbeat_at is None or d.owner != holder:
                return None
            if stale_before is not None and d.heartbeat_at >= stale_before:
                return None
            claimed = replace(d, owner=owner, heartbeat_at=now, takeovers=d.takeovers + int(holder is not None))
            self.deliberations[deliberation_id] = claimed
            return claimed

    def release(self, owner: str, threads: Sequence[str]) -> int:
        with self._lock:
            held = [
                d
                for d in self.deliberations.values()
                if d.owner == owner
                and d.thread in threads
                and d.status is DeliberationStatus.RUNNING
                and d.heartbeat_at is not None
            ]
            for d in held:
                self.deliberations[d.id or 0] = replace(d, owner=None)
            return len(held)

    def holds(self, deliberation_id: int, owner: str) -> bool:
        found = self.deliberations.get(deliberation_id)
        return found is not None and found.owner == owner

    def save_changes(self, deliberation_id: int, changes: ChangesRequest) -> None:
        self.deliberations[deliberation_id] = replace(self.deliberations[deliberation_id], changes=changes)

    def save_summary(self, thread: str, covered: int, summary: str) -> None:
        self.summaries[thread] = (covered, summary)

    def summary(self, thread: str) -> tuple[int, str] | None:
        return self.summaries.get(thread)

    def extracted(self, thread: str) -> int:
        return self.extractions.get(thread, 0)

    def save_extracted(self, thread: str, upto: int) -> None:
        self.extractions[thread] = upto


class FakeLiveness:
    """Liveness with a fixed owner for this process and a set of owners known to have exited."""

    def __init__(self, me: str = "here/1/100") -> None:
        self.me = me
        self.exited: set[str] = set()

    def owner(self) -> str:
        return self.me

    def gone(self, owner: str) -> bool:
        return owner in self.exited


class RecordingPoster:
    """A Poster that keeps what was posted and serves it back (plus injected human replies) as the thread."""

    def __init__(self, human_messages: Sequence[ThreadMessage] = ()) -> None:
        self.thread: list[ThreadMessage] = list(human_messages)
        self.turns: list[tuple[str, str]] = []
        self.verdicts: list[tuple[str, Verdict, str]] = []
        self.lessons: list[tuple[str, str, str, str]] = []
        self.recalls: list[tuple[str, str, int]] = []
        self.forgotten: list[tuple[str, Forgotten]] = []
        self.notices: list[str] = []
        self.round_requests: list[tuple[str, str]] = []
        self.changes: list[tuple[str, str | None, str]] = []  # (lesson id, category, Remembered.said)

    def post_turn(self, persona: Persona, text: str) -> None:
        self.turns.append((persona.name, text))
        self.thread.append(ThreadMessage(author=persona.name, text=text, persona=persona.name))

    def post_verdict(self, lead: Persona, verdict: Verdict, text: str) -> None:
        self.verdicts.append((lead.name, verdict, text))
        self.thread.append(ThreadMessage(author=lead.name, text=text, persona=lead.name))

    def post_lesson(
        self,
        persona: Persona,
        project: str,
        lesson_id: str,
        text: str,
        *,
        category: str | None = None,
        change: str = "created",
    ) -> None:
        self.lessons.append((persona.name, project, lesson_id, text))
        self.changes.append((lesson_id, category, change))

    def post_round_request(self, lead: Persona, summary: str) -> None:
        self.round_requests.append((lead.name, summary))

    def post_recall(self, persona: Persona, query: str, found: int) -> None:
        self.recalls.append((persona.name, query, found))

    def post_forgotten(self, persona: Persona, forgotten: Forgotten) -> None:
        self.forgotten.append((persona.name, forgotten))

    def post_notice(self, text: str) -> None:
        self.notices.append(text)

    def messages(self) -> list[ThreadMessage]:
        return list(self.thread)
