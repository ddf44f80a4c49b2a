"""Per-turn overhead of a deliberation outside the model: memory read and rank, prompt compile, persistence.

    python -m bench.turn_overhead [--runs 40] [--shared] [--pins N]

It runs real deliberations with the real engine, MemoryService over FileMemoryStore (150-line memory files for the
4 default personas, in a temporary NIGHTWATCH_HOME) and SqlDeliberationLog on a SQLite file, with a model that
answers instantly. A turn's overhead is the time between the end of one persona's model call and the start of the
next persona's: posting and storing the reply, then the next turn's thread window, memory read, ranking and
compile. It prints p50 and p95 in milliseconds; the target is p95 < 10 ms. Reflection is switched off here: it runs
once after a deliberation, not per turn. With `--shared` every persona shares its lessons with all (personas and
shares in the SQLite database), so each turn also reads and ranks its three teammates' 150-line memories. With
`--pins N` each persona has N pinned files of about 16 KiB (real files, the real PinService and SqlPinRepository):
each turn reads its pins from the database, checks each file on disk and packs them under the default budget.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from nightwatch.adapters.db import (
    SqlDeliberationLog,
    SqlPersonaRepository,
    SqlPinRepository,
    SqlShareRepository,
    make_engine,
    upgrade,
)
from nightwatch.adapters.files import FileMemoryStore
from nightwatch.adapters.persona_files import load_default_personas
from nightwatch.adapters.pins import PageFetcher, SafePinFiles
from nightwatch.domain.context import ContextReader, ContextSource
from nightwatch.domain.deliberation import DeliberationEngine, DeliberationPolicy, DeliberationRequest
from nightwatch.domain.deliberation.models import Verdict
from nightwatch.domain.llm import LLMRequest, LLMResponse, Purpose, Usage
from nightwatch.domain.memory import MemoryPolicy, MemoryService, MemorySource
from nightwatch.domain.memory.models import Discarded, MemoryBlock, ReflectionContext, Remembered
from nightwatch.domain.models import Persona, ThreadMessage
from nightwatch.domain.personas import PersonaService
from nightwatch.domain.pins import PinBlock, PinService, PinsSource
from nightwatch.domain.pins.models import PinKind
from nightwatch.domain.recall import Recall
from nightwatch.domain.sharing import SharedBlock, SharedSource, SharingService
from nightwatch.domain.sharing.models import Share, ShareContent
from nightwatch.domain.soul import SoulCompiler

PROJECT = "bench"
LINES = 150
TARGET_P95_MS = 10.0
TOPICS = (
    "Should we store login sessions in Redis instead of signed cookies?",
    "Add rate limiting to the password reset endpoint",
    "Our integration tests are flaky on CI since the retry change",
    "Refactor the billing module into smaller services before the migration",
)
WORDS = (
    "auth token session cookie redis cache migration rollback schema index query latency retry flaky test "
    "coverage fixture mock deploy canary flag release review diff refactor module service queue worker "
    "timeout backoff secret key rotation audit log metric alert incident postmortem budget owner"
).split()


class Clock:
    def now(self) -> datetime:
        return datetime.now(UTC)


class InstantModel:
    """Answers at once and records when each call started and ended (perf_counter seconds)."""

    def __init__(self) -> None:
        self.calls: list[tuple[Purpose, float, float]] = []
        self._count = 0

    def complete(self, request: LLMRequest) -> LLMResponse:
        started = time.perf_counter()
        self._count += 1
        text = self._answer(request)
        self.calls.append((request.purpose, started, time.perf_counter()))
        return LLMResponse(text=text, usage=Usage(1200, 80), model="instant")

    def _answer(self, request: LLMRequest) -> str:
        if request.purpose is Purpose.CONSENSUS:
            final = "This is the final round." in request.messages[-1].content
            decision = "APPROVE" if final else "CHANGES"
            return json.dumps({"decision": decision, "summary": "Bench verdict.", "reasons": [], "action_items": []})
        if request.purpose is Purpose.SUMMARY:
            return "The team discussed the topic."
        name = request.persona.name if request.persona else "someone"
        return f"{name} point {self._count}: {' '.join(WORDS[(self._count * 7 + i) % len(WORDS)] for i in range(12))}."


class BenchMemory:
    """The real MemoryService for reads; reflection off (it is not part of a turn) so files stay at 150 lines."""

    def __init__(self, service: MemoryService, timings: dict[str, list[float]]) -> None:
        self._service = service
        self._timings = timings

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> MemoryBlock:
        started = time.perf_counter()
        block = self._service.read(persona, project, topic, thread=thread, budget=budget)
        self._timings["memory read + rank"].append(time.perf_counter() - started)
        return block

    def reflect(self, persona: Persona, project: str, context: ReflectionContext) -> list[Remembered]:
        return []

    def extract(self, persona: Persona, project: str, discarded: Discarded) -> list[Remembered]:
        return []

    def note_injected(self, persona: Persona, project: str, lesson_ids: list[str]) -> None:
        return None


class TimedPins:
    """The real PinService's block for a turn, timed."""

    def __init__(self, service: PinService, timings: dict[str, list[float]]) -> None:
        self._service = service
        self._timings = timings

    def block(self, persona: Persona, project: str, *, budget: int | None = None) -> PinBlock:
        started = time.perf_counter()
        block = self._service.block(persona, project, budget=budget)
        self._timings["pins read + pack"].append(time.perf_counter() - started)
        return block


class TimedSharing:
    """The real SharingService's read, timed."""

    def __init__(self, sharing: SharingService, timings: dict[str, list[float]]) -> None:
        self._sharing = sharing
        self._timings = timings

    def read(
        self, persona: Persona, project: str, topic: str, *, thread: str = "", budget: int | None = None
    ) -> SharedBlock:
        started = time.perf_counter()
        block = self._sharing.read(persona, project, topic, thread=thread, budget=budget)
        self._timings["shared read + rank"].append(time.perf_counter() - started)
        return block


class TimedCompiler(SoulCompiler):
    def __init__(self, timings: dict[str, list[float]]) -> None:
        self._timings = timings

    def compile(self, persona: Persona, **kwargs: Any) -> Any:
        started = time.perf_counter()
        prompt = super().compile(persona, **kwargs)
        self._timings["compile"].append(time.perf_counter() - started)
        return prompt


class TimedLog(SqlDeliberationLog):
    def __init__(self, engine: Any, timings: dict[str, list[float]]) -> None:
        super().__init__(engine)
        self._timings = timings

    def add_turn(self, deliberation_id: int, turn: Any) -> None:
        started = time.perf_counter()
        super().add_turn(deliberation_id, turn)
        self._timings["persist turn"].append(time.perf_counter() - started)


class Directory:
    def __init__(self, personas: list[Persona]) -> None:
        self._personas = personas

    def list(self, *, include_inactive: bool = False) -> list[Persona]:
        return list(self._personas)


class QuietPoster:
    def __init__(self) -> None:
        self.thread: list[ThreadMessage] = []

    def post_turn(self, persona: Persona, text: str) -> None:
        self.thread.append(ThreadMessage(persona.name, text, persona.name))

    def post_verdict(self, lead: Persona, verdict: Verdict, text: str) -> None:
        self.thread.append(ThreadMessage(lead.name, text, lead.name))

    def post_lesson(self, persona: Persona, project: str, lesson_id: str, text: str, **_: object) -> None:
        return None

    def post_round_request(self, lead: Persona, summary: str) -> None:
        return None

    def post_recall(self, persona: Persona, query: str, found: int) -> None:
        return None

    def post_forgotten(self, persona: Persona, forgotten: object) -> None:
        return None

    def post_notice(self, text: str) -> None:
        return None

    def messages(self) -> list[ThreadMessage]:
        return list(self.thread)


def memory_file(persona: Persona, lines: int = LINES) -> str:
    """A realistic memory file of exactly `lines` lines: dated sections of bullet lessons."""
    out = [f"# {persona.name} · memory for {PROJECT}", ""]
    day = date(2026, 1, 1)
    n = 0
    while len(out) < lines:
        out += [f"## {day.isoformat()} · deliberation · https://example.slack.com/archives/C1/p{n}"]
        for _ in range(5):
            if len(out) >= lines - 1:
                break
            words = " ".join(WORDS[(n * 5 + k) % len(WORDS)] for k in range(9))
            out.append(f"- Lesson {n} for {persona.slug}: when {words} changes, check it with the owner first.")
            n += 1
        out.append("")
        day += timedelta(days=3)
    return "\n".join(out[:lines]) + "\n"


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def turn_gaps(calls: Sequence[tuple[Purpose, float, float]]) -> list[float]:
    """Seconds from the end of one TURN call to the start of the next, within one deliberation."""
    gaps: list[float] = []
    for (before, _, ended), (after, started, _) in itertools.pairwise(calls):
        if before is Purpose.TURN and after is Purpose.TURN:
            gaps.append(started - ended)
    return gaps


def run(runs: int, report: Callable[[str], None] = print, *, shared: bool = False, pins: int = 0) -> dict[str, float]:
    """Run the benchmark; return p50/p95 of the per-turn overhead in milliseconds."""
    with tempfile.TemporaryDirectory(prefix="nw-bench-") as home:
        root = Path(home)
        store = FileMemoryStore(root)
        personas = load_default_personas()
        for persona in personas:
            text = memory_file(persona)
            store.update(persona.slug, PROJECT, lambda _old, text=text: text)
        db = make_engine(f"sqlite:///{root / 'nightwatch.db'}")
        try:
            upgrade(db)
            return _measure(store, personas, db, runs, report, shared=shared, pins=pins, docs=root / "docs")
        finally:
            db.dispose()


def pin_service(docs: Path, db: Any, store: FileMemoryStore, personas: list[Persona], count: int) -> PinService:
    """`count` pinned files of about 16 KiB in `docs` for each persona (stored ones: pins name personas by id)."""
    docs.mkdir()
    service = PinService(
        pins=SqlPinRepository(db),
        personas=PersonaService(repo=SqlPersonaRepository(db), store=store, clock=Clock()),
        files=SafePinFiles([docs]),
        pages=PageFetcher(),
        clock=Clock(),
    )
    for persona in personas:
        for n in range(count):
            doc = docs / f"{persona.slug}-{n}.md"
            doc.write_text("\n".join(f"Line {i}: " + " ".join(WORDS[(i + n) % len(WORDS) :][:12]) for i in range(190)))
            service.add(persona.name, PROJECT, PinKind.FILE, str(doc), added_by="cli")
    return service


def _measure(
    store: FileMemoryStore,
    personas: list[Persona],
    db: Any,
    runs: int,
    report: Callable[[str], None],
    *,
    shared: bool = False,
    pins: int = 0,
    docs: Path | None = None,
) -> dict[str, float]:
    timings: dict[str, list[float]] = {
        "memory read + rank": [],
        "shared read + rank": [],
        "pins read + pack": [],
        "compile": [],
        "persist turn": [],
    }
    model = InstantModel()
    clock = Clock()
    memory = MemoryService(store=store, llm=model, clock=clock, recall=Recall(), policy=MemoryPolicy())
    sharing = pinning = None
    if shared or pins:  # shares and pins name personas by id: store them
        personas = [SqlPersonaRepository(db).add(persona) for persona in personas]
    if pins:
        pinning = TimedPins(pin_service(docs or Path(tempfile.mkdtemp()), db, store, personas, pins), timings)
    if shared:  # every persona shares with all: each turn reads its three teammates' memories too
        repo, shares = SqlPersonaRepository(db), SqlShareRepository(db)
        for persona in personas:
            shares.put(Share(persona.id or 0, None, PROJECT, ShareContent.LESSONS, clock.now()))
        lookup = PersonaService(repo=repo, store=store, clock=clock)
        sharing = TimedSharing(SharingService(shares=shares, personas=lookup, memory=memory, clock=clock), timings)
    timed = BenchMemory(memory, timings)
    sources: list[ContextSource] = [MemorySource(timed)]  # in the wiring's order: pins, memory, shared
    sources[:0] = [PinsSource(pinning)] if pinning is not None else []
    sources += [SharedSource(sharing)] if sharing is not None else []
    engine = DeliberationEngine(
        personas=Directory(personas),
        memory=timed,
        compiler=TimedCompiler(timings),
        llm=model,
        log=TimedLog(db, timings),
        clock=clock,
        policy=DeliberationPolicy(),
        context=ContextReader(sources),
    )
    gaps: list[float] = []
    for i in range(runs + 1):
        model.calls.clear()
        topic = TOPICS[i % len(TOPICS)]
        engine.run(DeliberationRequest(topic, PROJECT, f"bench:{i}"), QuietPoster())
        if i:  # the first run warms caches and is left out
            gaps += turn_gaps(model.calls)
    ms = [gap * 1000 for gap in gaps]
    result = {"p50_ms": statistics.median(ms), "p95_ms": percentile(ms, 0.95), "turns": float(len(ms))}
    also = (", each sharing with all" if shared else "") + (f", {pins} pinned files each" if pins else "")
    report(
        f"per-turn overhead over {len(ms)} turns ({runs} deliberations, 4 personas{also}, {LINES}-line memory files):"
    )
    report(f"  p50 {result['p50_ms']:.2f} ms   p95 {result['p95_ms']:.2f} ms   (target p95 < {TARGET_P95_MS:.0f} ms)")
    for name, samples in timings.items():
        if samples:
            part = [s * 1000 for s in samples]
            report(f"  {name:<20} p50 {statistics.median(part):.2f} ms   p95 {percentile(part, 0.95):.2f} ms")
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=40, help="deliberations to time (default 40)")
    parser.add_argument("--shared", action="store_true", help="every persona shares its lessons with all")
    parser.add_argument("--pins", type=int, default=0, help="pinned files of about 16 KiB per persona (default 0)")
    args = parser.parse_args(argv)
    result = run(args.runs, shared=args.shared, pins=args.pins)
    return 0 if result["p95_ms"] < TARGET_P95_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())
