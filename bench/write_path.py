"""The write path: every memory of a data set recorded through MemoryService.remember, then read back.

    python -m bench.retrieval --write-path      (or: python -m bench.write_path --dataset FILE.jsonl)

Each case's memories go through `remember` in `created_at` order, with a clock that returns the memory's date, into
a FileMemoryStore in a temporary folder, with the offline model (curation by the deterministic rule) unless a model
is given. Compaction is left out (the line limit is raised): this measures curation. Then, at the case's newest date,
each query is read as a persona's turn reads it (`MemoryService.read` under --budget tokens). Reported:

- duplicates merged: `duplicates` pairs whose second memory was merged into the first;
- not-duplicates kept apart: `not_duplicates` pairs where neither was merged into or superseded by the other (a
  third, later lesson may still supersede one of them);
- stale left out: `stale` memories of a query that are not in the block injected for it;
- block recall: the share of a query's `relevant` memories inside that block.

The data sets carry no categories, so every memory is recorded without one (as in files from before categories);
`--categories` gives each the category the offline model would (`category_for`), so the category rules of curation
apply. `--cosine-alone` compares two lessons as one point by their cosine only, with no point map (`domain.vectors`),
as reading did before round 26.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.retrieval_data import Case, load
from bench.rules_before import rules
from bench.vectors import CachedEncoder, EmbedOnly
from nightwatch.adapters.files import FileMemoryStore
from nightwatch.adapters.offline import OfflineLLM, category_for
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.llm import LLM
from nightwatch.domain.memory import LessonSuccession, MemoryPolicy, MemoryService
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import persona_slug, project_slug
from nightwatch.domain.recall import Recall
from nightwatch.domain.vectors import point_map_as


class SettableClock:
    def __init__(self) -> None:
        self.at = datetime.now().astimezone()

    def now(self) -> datetime:
        return self.at


class InlineBackfill:
    """A bench has no use for a background thread: every lesson is written through `remember`."""

    def request(self, persona_slug: str, project: str) -> None:
        return None


@dataclass
class Counts:
    merged: int = 0
    duplicates: int = 0
    kept_apart: int = 0
    not_duplicates: int = 0
    stale_out: int = 0
    stale: int = 0
    found: float = 0.0
    queries: int = 0
    refused: list[str] = field(default_factory=list)

    def plus(self, other: Counts) -> Counts:
        """These counts and `other`'s together (figures pooled over several files)."""
        summed = {f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        return Counts(**summed)

    def report(self) -> dict[str, Any]:
        def share(part: float, whole: int) -> float | None:
            return round(part / whole, 4) if whole else None

        return {
            "duplicates_merged": share(self.merged, self.duplicates),
            "not_duplicates_kept": share(self.kept_apart, self.not_duplicates),
            "stale_left_out": share(self.stale_out, self.stale),
            "block_recall": share(self.found, self.queries),
            "pairs": {"duplicates": self.duplicates, "not_duplicates": self.not_duplicates, "stale": self.stale},
            "refused": len(self.refused),
        }


def whose(case: Case) -> tuple[Persona, str]:
    """The persona whose memory a case is, and the project's slug."""
    return Persona(name=case.persona, slug=persona_slug(case.persona), role="team member"), project_slug(case.project)


def record_case(
    memory: MemoryService, clock: SettableClock, case: Case, counts: Counts, *, categories: bool = False
) -> dict[str, str]:
    """Remember every memory in date order (with the offline model's category for it, when asked); returns each
    memory id's lesson id ('' when refused)."""
    persona, project = whose(case)
    lesson_of: dict[str, str] = {}
    for item in sorted(case.memories, key=lambda m: m.recorded_at):
        clock.at = item.recorded_at
        try:
            category = category_for(item.text) if categories else None
            lesson_of[item.id] = memory.remember(persona, project, item.text, kind="bench", category=category).id
        except InvalidInputError as err:
            lesson_of[item.id] = ""
            counts.refused.append(f"{case.id}/{item.id}: {err}")
    return lesson_of


def judge_case(memory: MemoryService, clock: SettableClock, case: Case, lesson_of: dict[str, str],
               counts: Counts) -> None:  # fmt: skip
    persona, project = whose(case)
    replaced_by = {lesson.id: lesson.superseded_by for lesson in memory.history(persona, project)}
    for a, b in case.duplicates:
        counts.duplicates += 1
        counts.merged += bool(lesson_of[a]) and lesson_of[a] == lesson_of[b]
    for a, b in case.not_duplicates:
        first, second = lesson_of[a], lesson_of[b]
        counts.not_duplicates += 1
        apart = first != second and replaced_by.get(first) != second and replaced_by.get(second) != first
        counts.kept_apart += apart
    clock.at = case.now
    for query in case.queries:
        if not query.relevant and not query.stale:
            continue
        block = {lesson.id for lesson in memory.read(persona, project, query.text).lessons}
        for stale in query.stale:
            counts.stale += 1
            counts.stale_out += lesson_of[stale] not in block
        if query.relevant:
            counts.queries += 1
            counts.found += sum(lesson_of[r] in block for r in query.relevant) / len(query.relevant)


def service(home: Path, encoder: CachedEncoder | EmbedOnly, *, budget: int = 1000, llm: LLM | None = None,
            succession: LessonSuccession | None = None) -> tuple[MemoryService, SettableClock]:  # fmt: skip
    """A memory service over files in `home` as the write path records with: no compaction, the offline model unless
    `llm` is given, and a clock the caller sets to each memory's date."""
    clock = SettableClock()
    policy = MemoryPolicy(token_budget=budget, max_lines=10**9, use_model_for_curation=llm is not None)
    memory = MemoryService(
        store=FileMemoryStore(home),
        llm=llm or OfflineLLM(),
        clock=clock,
        recall=Recall(encoder=encoder, succession=succession),
        policy=policy,
        backfill=InlineBackfill(),
    )
    return memory, clock


def tally(path: str, budget: int = 1000, llm: LLM | None = None, encoder: CachedEncoder | None = None,
          split: str | None = None, categories: bool = False, before: bool = False,
          judged: bool = True) -> Counts:  # fmt: skip
    """The write path's counts over one data set (or one half of it); `before`: by the rule of commit eca6a5d
    (bench/rules_before.py), reading without the newer-lesson preference, as then; without `judged`, restatements by
    the rules alone (the encoder reads no pairs)."""
    cases = [case for case in load(path) if split is None or case.split == split]
    encoder = encoder or CachedEncoder()
    embedder = encoder if judged and not before else EmbedOnly(encoder)
    counts = Counts()
    succession = None if before else LessonSuccession()
    with rules(before=before), tempfile.TemporaryDirectory(prefix="nightwatch-write-path-") as home:
        memory, clock = service(Path(home), embedder, budget=budget, llm=llm, succession=succession)
        for case in cases:
            judge_case(memory, clock, case, record_case(memory, clock, case, counts, categories=categories), counts)
    return counts


def measure(path: str, budget: int = 1000, llm: LLM | None = None, encoder: CachedEncoder | None = None,
            split: str | None = None, categories: bool = False, before: bool = False,
            judged: bool = True) -> dict[str, Any]:  # fmt: skip
    """The write-path figures over one data set (or one half of it), as `tally` counts them."""
    counts = tally(path, budget, llm, encoder, split, categories, before, judged)
    model = (
        ("advice" if llm else "rules before (eca6a5d)" if before else "offline rule")
        + ("" if before or judged else ", restatements by the rules alone")
        + (", categories inferred" if categories else "")
    )
    model += f", {split} half" if split else ""
    return {"dataset": path, "budget": budget, "model": model, **counts.report()}


def summary(result: dict[str, Any]) -> str:
    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:.4f}"

    pairs = result["pairs"]
    return (
        f"write path, {result['dataset']} ({result['model']}, block of {result['budget']} tokens): "
        f"duplicates merged {cell(result['duplicates_merged'])} of {pairs['duplicates']}, "
        f"not-duplicates kept apart {cell(result['not_duplicates_kept'])} of {pairs['not_duplicates']}, "
        f"stale left out of the block {cell(result['stale_left_out'])} of {pairs['stale']}, "
        f"block recall {cell(result['block_recall'])}; {result['refused']} memories refused by the junk guard"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write-path benchmark: remember every memory, then read.")
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--split", choices=("tune", "report"), help="only the cases of this half")
    parser.add_argument("--categories", action="store_true", help="give each memory the offline model's category")
    parser.add_argument("--rules", choices=("new", "before"), default="new", help="today's curation or eca6a5d's")
    parser.add_argument("--no-judge", action="store_true", help="restatements by the rules alone, no learned judge")
    parser.add_argument("--cosine-alone", action="store_true", help="two lessons compared by the cosine, no point map")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    encoder = CachedEncoder()
    alone = point_map_as(np.eye(encoder.encoder.dimensions)) if args.cosine_alone else contextlib.nullcontext()
    with alone:
        result = measure(args.dataset, args.budget, encoder=encoder, split=args.split, categories=args.categories,
                         before=args.rules == "before", judged=not args.no_judge)  # fmt: skip
    if args.cosine_alone:
        result["model"] += ", cosine alone"
    print(json.dumps(result) if args.json else summary(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
