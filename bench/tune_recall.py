"""How the fusion settings were chosen: a grid over RecallWeights, scored on the "tune" half of each data set.

    python -m bench.tune_recall [--dataset FILE.jsonl ...] [--half tune|report] [--top 10]

For every setting it prints recall@10 and budget recall at 1,000 tokens on each data set, and the worst of the
data sets' margins over the better of BM25-like keywords alone and meaning alone (`ours` with meaning off, and
dense cosine), so a setting that loses to one of its parts on any data set shows a negative margin. The settings
in nightwatch/domain/recall/fusion.py are the best of this grid on the tune halves; bench.retrieval then reports
both halves from one run.
"""

from __future__ import annotations

import argparse
import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from bench.retrieval import default_datasets, dense, ours, run
from bench.retrieval_data import Case, load
from bench.vectors import CachedEncoder
from nightwatch.domain.recall import RecallWeights

# The last of three grids. The first two also tried a share of the neighbours' cosines (0-0.5: a little better on
# LoCoMo, worse on the persona lessons) and scaling meaning by a perfect match instead of the query's best lesson
# (worse on both); both are gone from RecallWeights. Tried outside this grid, none past 0.722 recall@10 on LoCoMo:
# z-score and reciprocal-rank fusion, the cosine to the centroid of each lesson's interaction, and pseudo-relevance
# feedback (the query's vector moved toward its top 3-5 lessons). Choosing, per question, whichever of keywords or
# meaning does better would reach 0.752 on LoCoMo: the parts, not the mix, hold it back.
GRID: dict[str, Sequence[Any]] = {
    "meaning": (0.35, 0.4, 0.45, 0.5, 0.6),
    "keyword_evidence": (0.0, 6.0, 9.0, 12.0, 16.0),
    "meaning_floor": (0.05, 0.1, 0.15),
}


def score(cases: Sequence[Case], weights: RecallWeights, encoder: CachedEncoder) -> tuple[float, float]:
    figures = run(cases, ours(encoder, weights), [10], [1000])
    return figures["recall@10"], figures["budget_recall@1000"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", action="append")
    parser.add_argument("--half", default="tune", choices=("tune", "report"))
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args(argv)
    encoder = CachedEncoder()
    sets = {
        path: [case for case in load(path) if case.split == args.half] for path in args.dataset or default_datasets()
    }
    parts = {}
    for path, cases in sets.items():
        keyword = run(cases, ours(None), [10], [1000])
        meaning = run(cases, dense(encoder), [10], [1000])
        parts[path] = (
            max(keyword["recall@10"], meaning["recall@10"]),
            max(keyword["budget_recall@1000"], meaning["budget_recall@1000"]),
        )
        print(f"{path} ({args.half}): keywords {keyword['recall@10']:.4f}/{keyword['budget_recall@1000']:.4f}, "
              f"dense {meaning['recall@10']:.4f}/{meaning['budget_recall@1000']:.4f}")  # fmt: skip
    rows = []
    names = list(GRID)
    for values in itertools.product(*(GRID[name] for name in names)):
        weights = replace(RecallWeights(), **dict(zip(names, values, strict=True)))
        figures = {path: score(cases, weights, encoder) for path, cases in sets.items()}
        margin = min(min(f[0] - parts[p][0], f[1] - parts[p][1]) for p, f in figures.items())
        total = sum(f[0] + f[1] for f in figures.values())
        rows.append((margin, total, values, figures))
    rows.sort(key=lambda row: (row[0] >= -0.01, row[1]), reverse=True)
    for margin, total, values, figures in rows[: args.top]:
        cells = "  ".join(f"{f[0]:.4f}/{f[1]:.4f}" for f in figures.values())
        print(f"{dict(zip(names, values, strict=True))}  margin {margin:+.4f}  sum {total:.4f}  {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
