"""Where memory goes wrong on a tune file, one finding a line: `python -m bench.misses --dataset FILE.jsonl`.

Every memory is recorded as the write path records it (bench.write_path: `MemoryService.remember` in date order, the
offline model, no compaction), then each question is read at the case's newest date. Listed:

- **missing**: a relevant lesson not in its question's block, and how: retired at write (by which lesson), left out
  at read beside a newer one that ranked near it, or ranked below what the budget holds;
- **stale in**: a stale lesson still in its question's block, with its rank, its successor's and how close the two
  lessons are;
- **retired**: a lesson retired at write that no question labels stale, with the lesson that retired it (marked when
  the two are a labelled look-alike pair).

The missing and stale-in findings are exactly what bench.write_path's block recall and stale figures count. These
listings are what the rules of each round were chosen from (docs/memory-rounds.md). Tune files only: the blind set is
refused.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.retrieval_data import Case, load
from bench.vectors import CachedEncoder
from bench.write_path import Counts, SettableClock, record_case, service, whose
from nightwatch.domain.memory import LessonSuccession, MemoryService

BLIND = "blind"  # a folder of this name holds data for reporting only


@dataclass(frozen=True)
class Finding:
    kind: str  # "missing", "stale in" or "retired"
    case: str
    query: str  # the question's id ("" for a lesson retired at write)
    memory: str
    text: str
    why: str

    def line(self) -> str:
        where = f"{self.case} {self.query}".strip()
        return f"[{where}] {self.kind} {self.memory}: {self.text}\n    {self.why}"


def findings(case: Case, memory: MemoryService, clock: SettableClock, encoder: CachedEncoder) -> list[Finding]:
    """Record the case's memories through `memory`, read each question, and list what went wrong."""
    lesson_of = record_case(memory, clock, case, Counts())
    persona, project = whose(case)
    text = {m.id: m.text for m in case.memories}
    history = memory.history(persona, project)
    retired = {lesson.id: lesson.superseded_by for lesson in history}
    wording = {lesson.id: lesson.text for lesson in (*history, *memory.lessons(persona, project))}

    def closeness(a: str, b: str) -> float:
        vectors = encoder.embed([a, b])
        vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return float(vectors[0] @ vectors[1])

    found: list[Finding] = []
    clock.at = case.now
    for query in case.queries:
        if not query.relevant and not query.stale:
            continue
        block = [lesson.id for lesson in memory.read(persona, project, query.text).lessons]
        rank = {scored.lesson.id: n for n, scored in enumerate(memory.rank_shared(persona, project, query.text), 1)}
        last = max((rank[i] for i in block if i in rank), default=0)
        for relevant in query.relevant:
            lesson = lesson_of[relevant]
            if lesson in block:
                continue
            if not lesson:
                why = "refused by the junk guard"
            elif lesson in retired:
                why = f"retired at write by: {wording.get(retired[lesson] or '', '(gone)')}"
            elif rank.get(lesson, last) < last:
                why = f"left out at read beside a newer lesson (ranked {rank[lesson]})"
            else:
                why = f"ranked {rank.get(lesson, '-')}, below the budget (it holds {len(block)})"
            found.append(Finding("missing", case.id, query.id, relevant, text[relevant], why))
        successor = query.relevant[-1] if query.relevant else None
        for stale in query.stale:
            lesson = lesson_of[stale]
            if lesson not in block:
                continue
            why = f"ranked {rank[lesson]}"
            if successor:
                place = rank.get(lesson_of[successor], "-")
                why += f", its successor {successor} {place} (cosine {closeness(text[stale], text[successor]):.2f})"
            found.append(Finding("stale in", case.id, query.id, stale, text[stale], why))
    labelled_stale = {stale for query in case.queries for stale in query.stale}
    look_alikes = {frozenset(pair) for pair in case.not_duplicates}
    memories_of: dict[str, list[str]] = {}
    for memory_id, lesson in lesson_of.items():
        memories_of.setdefault(lesson, []).append(memory_id)
    for lesson, by in retired.items():
        for memory_id in memories_of.get(lesson, []):
            if memory_id in labelled_stale:
                continue
            alike = any(frozenset((memory_id, other)) in look_alikes for other in memories_of.get(by or "", []))
            why = ("a labelled look-alike " if alike else "") + f"retired by: {wording.get(by or '', '(gone)')}"
            found.append(Finding("retired", case.id, "", memory_id, text[memory_id], why))
    return found


def listing(path: str, budget: int = 1000, encoder: CachedEncoder | None = None) -> list[Finding]:
    """Every finding over the tune cases of one data set."""
    if BLIND in Path(path).resolve().parts:
        raise ValueError(f"{path} is in the blind set, which is for reporting only: list the misses of a tune file")
    encoder = encoder or CachedEncoder()
    found: list[Finding] = []
    with contextlib.redirect_stderr(io.StringIO()), tempfile.TemporaryDirectory(prefix="nightwatch-misses-") as home:
        memory, clock = service(Path(home), encoder, budget=budget, succession=LessonSuccession())
        for case in load(path):
            if case.split == "tune":
                found += findings(case, memory, clock, encoder)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="List where memory goes wrong on a tune file.")
    parser.add_argument("--dataset", required=True, help="a tune file (bench/data/...); never the blind set")
    parser.add_argument("--budget", type=int, default=1000)
    args = parser.parse_args(argv)
    try:
        found = listing(args.dataset, args.budget)
    except ValueError as err:
        parser.error(str(err))
    for finding in found:
        print(finding.line())
    counts = Counter(finding.kind for finding in found)
    print(", ".join(f"{counts[kind]} {kind}" for kind in ("missing", "stale in", "retired")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
