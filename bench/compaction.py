"""The compaction figure: 1,000 lessons recorded through a 150-line limit in date order, then read back.

    python -m bench.compaction [--dataset FILE.jsonl ...] [--split tune|report] [--count 1000] [--json]

(`bench.retrieval --write-path` reports it beside the write path, one row a data set.)

Every memory of a data set's cases goes into ONE persona's memory of one project (a busy persona's memory is many
teams' worth of lessons), through `MemoryService.remember` in `created_at` order, offline model (so the rules
compact), a FileMemoryStore in a temporary folder, the default line limit (150) and compaction target (50). A data
set with fewer than `--count` memories is recorded again, round after round, each round's dates moved past the
previous one's, until `--count` lessons were recorded: a later round restates what is still remembered (merged,
counted as seen again) and learns again what compaction let go.

Reported:
- lost: lessons `remember` returned (the new lesson, or the one it merged into) that were not in the memory right
  after the call, compaction included: must be 0 (each text is redacted first, as every entry point does, so the
  files store's redaction backstop never rewrites a line under the id `remember` returned);
- newest recall: the newest 50 lessons recorded (all in the last round); each query whose `relevant` names one of them
  is read at the end as a turn reads it (`MemoryService.read` under --budget tokens), and the share of those of its
  relevant lessons inside the block is averaged (target >= 0.95);
- newest live: the share of those newest 50 lessons still in the memory at the end (a miss of the recall above
  that is not a miss here is the reading's, not compaction's);
- compactions, and the lessons live at the end.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench.retrieval_data import Case, load
from bench.vectors import CachedEncoder
from bench.write_path import InlineBackfill, SettableClock
from nightwatch.adapters.files import FileMemoryStore
from nightwatch.adapters.offline import OfflineLLM
from nightwatch.adapters.secrets import redact
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.memory import LessonSuccession, MemoryPolicy, MemoryService
from nightwatch.domain.models import Persona
from nightwatch.domain.recall import Recall

DATASETS = ("bench/data/persona_lessons.jsonl",)
NEWEST = 50
PERSONA = Persona(name="Bench", slug="bench", role="team member")
PROJECT = "bench"


@dataclass(frozen=True)
class Item:
    """One memory of the stream: which case and memory it is, in which round, when it is recorded."""

    case: int
    memory: str
    text: str
    at: datetime


def stream(cases: list[Case], count: int) -> list[Item]:
    """The cases' memories in date order, repeated in rounds (dates moved on) until there are `count`."""
    one = sorted(
        (Item(c, m.id, m.text, m.recorded_at) for c, case in enumerate(cases) for m in case.memories),
        key=lambda item: (item.at, item.case),
    )
    if not one:
        return []
    span = one[-1].at - one[0].at + timedelta(days=1)
    items: list[Item] = []
    while len(items) < count:
        shift = span * (len(items) // len(one))
        items += [Item(i.case, i.memory, i.text, i.at + shift) for i in one[: count - len(items)]]
    return items


def compaction_figure(
    path: str,
    *,
    split: str | None = None,
    count: int = 1000,
    max_lines: int = 150,
    target: int = 50,
    budget: int = 1000,
    encoder: CachedEncoder | None = None,
) -> dict[str, Any]:
    """The compaction figures over one data set (or one half of it)."""
    cases = [case for case in load(path) if split is None or case.split == split]
    items = stream(cases, count)
    clock = SettableClock()
    lesson_of: dict[tuple[int, str], str] = {}
    lost: list[str] = []
    refused = compactions = 0
    with tempfile.TemporaryDirectory(prefix="nightwatch-compaction-") as home:
        store = FileMemoryStore(Path(home))
        memory = MemoryService(
            store=store,
            llm=OfflineLLM(),
            clock=clock,
            recall=Recall(encoder=encoder or CachedEncoder(), succession=LessonSuccession()),
            policy=MemoryPolicy(
                token_budget=budget, max_lines=max_lines, compaction_target=target, use_model_for_compaction=False
            ),
            backfill=InlineBackfill(),
        )
        before = 0  # lessons live before each call: a compaction leaves fewer
        for item in items:
            clock.at = item.at
            try:
                lesson = memory.remember(PERSONA, PROJECT, redact(item.text), kind="bench")  # as every entry point
            except InvalidInputError:
                refused += 1
                lesson_of[(item.case, item.memory)] = ""
                continue
            lesson_of[(item.case, item.memory)] = lesson.id
            live = memory.lessons(PERSONA, PROJECT)
            compactions += len(live) < before
            before = len(live)
            if lesson.id not in {kept.id for kept in live}:
                lost.append(item.text)
        newest = {(item.case, item.memory) for item in items[-NEWEST:]}
        found, queries = 0.0, 0
        if items:
            clock.at = items[-1].at
        for c, case in enumerate(cases):
            for query in case.queries:
                wanted = [lesson_of.get((c, r), "") for r in query.relevant if (c, r) in newest]
                if not wanted:
                    continue
                block = {lesson.id for lesson in memory.read(PERSONA, PROJECT, query.text).lessons}
                queries += 1
                found += sum(lid in block for lid in wanted) / len(wanted)
        live_ids = {lesson.id for lesson in memory.lessons(PERSONA, PROJECT)}
        at_end = len(live_ids)
        kept = [lesson_of[key] in live_ids for key in newest if lesson_of.get(key)]
    return {
        "dataset": path + (f" ({split} half)" if split else ""),
        "recorded": len(items),
        "memories": sum(len(case.memories) for case in cases),
        "max_lines": max_lines,
        "target": target,
        "budget": budget,
        "lost": len(lost),
        "newest_recall": round(found / queries, 4) if queries else None,
        "newest_queries": queries,
        "newest_live": round(sum(kept) / len(kept), 4) if kept else None,
        "compactions": compactions,
        "live_at_end": at_end,
        "refused": refused,
    }


def summary(figure: dict[str, Any]) -> str:
    recall = figure["newest_recall"]
    return (
        f"compaction, {figure['dataset']}: {figure['recorded']} lessons ({figure['memories']} memories, in rounds) "
        f"through a {figure['max_lines']}-line limit (target {figure['target']}): {figure['compactions']} compactions, "
        f"{figure['lost']} just-recorded lessons lost, recall of the newest {NEWEST} lessons' queries "
        f"{'-' if recall is None else f'{recall:.4f}'} over {figure['newest_queries']} queries "
        f"(block of {figure['budget']} tokens), {figure['newest_live']} of them still remembered; "
        f"{figure['live_at_end']} lessons live at the end"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compaction benchmark: record many lessons through the line limit.")
    parser.add_argument("--dataset", action="append", help="a JSON Lines data set (repeatable)")
    parser.add_argument("--split", choices=("tune", "report"), help="only the cases of this half")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--max-lines", type=int, default=150)
    parser.add_argument("--target", type=int, default=50)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    encoder = CachedEncoder()
    figures = [
        compaction_figure(
            path,
            split=args.split,
            count=args.count,
            max_lines=args.max_lines,
            target=args.target,
            budget=args.budget,
            encoder=encoder,
        )
        for path in args.dataset or DATASETS
    ]
    for figure in figures:
        print(json.dumps(figure) if args.json else summary(figure))
    return 1 if any(figure["lost"] for figure in figures) else 0


if __name__ == "__main__":
    raise SystemExit(main())
