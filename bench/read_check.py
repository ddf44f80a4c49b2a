"""Reading's learned check, fitted and measured: `python -m bench.read_check [--save]`.

Every tune file goes through the write path (`bench.write_path`: each memory remembered in date order, then each
question read) with the check switched off; each pair the check would read (`recall.succession.pairs`: two lessons of
a question's head as one point, the older not left out by the rules) is kept with its figures
(`succession.pair_figures`) and, where the file's labels say, whether the older is the question's stale lesson (yes)
or its answer (no). Pairs where it is neither teach nothing and are not fitted on.

Four folds: a quarter of the tune files held out in turn, a logistic regression (`domain.classifier`) fitted on the
rest; each held-out question's block, as read, less the older lessons the check would leave out, gives the stale
lessons it takes out and the answers it loses (a simulation: the room freed is not refilled). --save then fits on
every tune file and writes the weights the product ships. Never run on bench/data/blind nor on a file kept back to
judge a change.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bench.retrieval_data import Query, load
from bench.vectors import CachedEncoder
from bench.write_path import Counts, NeverLeavesOut, record_case, service, whose
from nightwatch.domain.classifier import Logistic, fit
from nightwatch.domain.memory import LessonSuccession
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import succession
from nightwatch.domain.recall.ports import Succession
from nightwatch.domain.vectors import Matrix

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data"
WEIGHTS = ROOT / "nightwatch" / "domain" / "recall" / "read_check.json"
TUNE = ("tune_extra", "tune_extra2", *(f"tune_more_{n}" for n in range(1, 56)))  # 56.. judge the check, never fit it
THRESHOLD = 0.875  # the lowest of THRESHOLDS at which the held-out folds lose an answer for ten stale lessons or more
THRESHOLDS = (0.8, 0.825, 0.85, 0.875, 0.9, 0.925)


@dataclass
class Read:
    """One question as read: its block's lesson ids, and the lesson ids of its answers and of its stale lessons."""

    block: set[str]
    relevant: list[str]
    stale: list[str]
    older: list[str] = field(default_factory=list)  # the older lesson of each pair the check read
    rows: list[list[float]] = field(default_factory=list)  # ... that pair's figures
    labels: list[int] = field(default_factory=list)  # ... 1 stale, 0 an answer, -1 neither


@contextmanager
def recording(into: list[Read | None], memory_of: dict[str, set[str]], query: list[Query]) -> Iterator[None]:
    """While the block runs, the check never leaves a lesson out, and each pair it reads is kept in `into[0]`."""
    shipped_check, shipped_figures = succession.read_check, succession.pair_figures

    def figures(lessons: Sequence[Lesson], pair: succession.Pair, question: str, cosines: Matrix,
                rules: Succession) -> list[float]:  # fmt: skip
        row = shipped_figures(lessons, pair, question, cosines, rules)
        read = into[0]
        if read is not None:
            older = memory_of.get(lessons[pair.older].id, set())
            read.older.append(lessons[pair.older].id)
            read.rows.append(row)
            read.labels.append(1 if older & set(query[0].stale) else 0 if older & set(query[0].relevant) else -1)
        return row

    succession.read_check = NeverLeavesOut  # type: ignore[assignment]
    succession.pair_figures = figures  # type: ignore[assignment]
    try:
        yield
    finally:
        succession.read_check, succession.pair_figures = shipped_check, shipped_figures  # type: ignore[method-assign]


def collect(path: Path, encoder: CachedEncoder) -> list[Read]:
    """Every question of a data file as read with the check off, with the pairs the check would read."""
    reads: list[Read] = []
    with (
        tempfile.TemporaryDirectory(prefix="nightwatch-read-check-") as home,
        contextlib.redirect_stderr(io.StringIO()),
    ):
        memory, clock = service(Path(home), encoder, succession=LessonSuccession())
        for case in load(str(path)):
            lesson_of = record_case(memory, clock, case, Counts())
            memory_of: dict[str, set[str]] = {}
            for memory_id, lesson_id in lesson_of.items():
                memory_of.setdefault(lesson_id, set()).add(memory_id)
            persona, project = whose(case)
            clock.at = case.now
            current: list[Read | None] = [None]
            for query in case.queries:
                if not query.relevant and not query.stale:
                    continue
                read = Read(set(), [lesson_of[m] for m in query.relevant], [lesson_of[m] for m in query.stale])
                current[0] = read
                with recording(current, memory_of, [query]):
                    read.block = {lesson.id for lesson in memory.read(persona, project, query.text).lessons}
                reads.append(read)
    return reads


def fitted(reads: Sequence[Read], threshold: float = THRESHOLD) -> Logistic:
    """Fitted on the pairs whose older lesson is a question's stale lesson or its answer."""
    rows = [(row, label) for read in reads for row, label in zip(read.rows, read.labels, strict=True) if label >= 0]
    x = np.array([row for row, _ in rows], dtype=np.float64)
    return fit(x, np.array([label == 1 for _, label in rows]), succession.FIGURES, threshold)


def simulated(reads: Sequence[Read], model: Logistic, threshold: float) -> np.ndarray:
    """[stale lessons, stale lessons in their blocks, of those the check takes out, questions, answers in their blocks,
    answers the check takes out], each answer counted as its share of its question's answers."""
    counts = np.zeros(6)
    for read in reads:
        gone = {old for old, row in zip(read.older, read.rows, strict=True) if model.probability(row) >= threshold}
        counts[0] += len(read.stale)
        counts[1] += sum(s in read.block for s in read.stale)
        counts[2] += sum(s in read.block and s in gone for s in read.stale)
        if read.relevant:
            counts[3] += 1
            counts[4] += sum(r in read.block for r in read.relevant) / len(read.relevant)
            counts[5] += sum(r in read.block and r in gone for r in read.relevant) / len(read.relevant)
    return counts


def report(folds: dict[float, np.ndarray]) -> list[str]:
    lines = ["reading's learned check, four folds of tune files held out in turn (simulated on the blocks as read):"]
    for threshold, (stale, stale_in, out, questions, found, lost) in folds.items():
        left = stale - stale_in
        lines.append(
            f"  p >= {threshold:<5}: stale left out {left / stale:.3f} -> {(left + out) / stale:.3f} (+{out:.0f} of "
            f"{stale:.0f}), block recall {found / questions:.4f} -> {(found - lost) / questions:.4f} "
            f"(-{lost:.1f} answers of {questions:.0f} questions)"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Reading's learned check: four folds of tune files, then --save.")
    parser.add_argument("--save", action="store_true", help="also fit on every tune file and write the weights")
    args = parser.parse_args(argv)
    encoder = CachedEncoder()
    reads = {name: collect(DATA / f"{name}.jsonl", encoder) for name in TUNE}
    folds: dict[float, Any] = {threshold: np.zeros(6) for threshold in THRESHOLDS}
    for held in (TUNE[i::4] for i in range(4)):
        model = fitted([read for name in TUNE if name not in held for read in reads[name]])
        for threshold in THRESHOLDS:
            folds[threshold] += simulated([read for name in held for read in reads[name]], model, threshold)
    print("\n".join(report(folds)))
    if args.save:
        pooled = [read for found in reads.values() for read in found]
        WEIGHTS.write_text(fitted(pooled).to_json(), encoding="utf-8")
        pairs = sum(label >= 0 for read in pooled for label in read.labels)
        print(f"wrote {WEIGHTS.relative_to(ROOT)}: fitted on {pairs} pairs of {len(reads)} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
