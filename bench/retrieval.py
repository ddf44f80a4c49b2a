"""Memory-retrieval quality: recall@k, recall inside the injected block, per kind and per half, and the write path.

    python -m bench.retrieval [--dataset FILE.jsonl ...] [--k 10] [--budget 1000] [--write-path] [--json]
                              [--no-latency]

Without --dataset it reads LoCoMo (../shared/bench/locomo.jsonl, when a shared/ folder sits beside the checkout),
our persona lessons (bench/data/persona_lessons.jsonl) and the blind set (bench/data/blind/part_*.jsonl, which
bench.tune_recall never reads). FILE is in the format of
../shared/bench/README.md. Every method runs in the same process over the same cases:

- bm25: the plain reference, rank-bm25's BM25Okapi over lower-cased words less English stop words;
- dense: all-MiniLM-L6-v2 cosine alone (nightwatch's numpy encoder);
- keywords: nightwatch's Recall without vectors (NIGHTWATCH_RECALL_DENSE=off);
- default: nightwatch's Recall with the lessons' vectors, as the memory service reads;
- truncation: the naive block of the newest lines that fit.

A memory counts as found at a budget B when it is inside the block injected under B tokens: lines packed in rank
order at their line cost, the block rendered as the memory service renders it and checked whole with
estimate_tokens. A case's `now` is its newest memory's time. Figures are given for all cases and for each half
(`split`: settings are chosen on "tune" and must carry over to "report"; LoCoMo's cases alternate). Latency is
rank, pack and render of one query over one case, the query's vector already made (bench.embedding times that);
the read path at 10,000 lessons comes from bench.read_latency. --write-path adds, for each data set, bench.write_path's
figures and bench.compaction's, and one table of them side by side (issue 19's figures), with the 95% interval of
each pair figure (Wilson, from its count of pairs).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench import compaction, read_latency, write_path
from bench.retrieval_data import Case, Tally, found_share, load, pairs_judged, percentiles, stale_ok, wilson
from bench.vectors import CachedEncoder
from nightwatch.domain.memory import LessonSuccession, MemoryBlockPrompt, line_cost
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import STOP_WORDS, Recall, RecallWeights
from nightwatch.domain.tokens import estimate_tokens
from nightwatch.domain.vectors import LessonVectors

ROOT = Path(__file__).resolve().parents[1]
PERSONA_SET = ROOT / "bench" / "data" / "persona_lessons.jsonl"
BLIND_SETS = sorted(str(path) for path in (ROOT / "bench" / "data" / "blind").glob("part_*.jsonl"))  # report only
BUDGETS = (1000, 2000)
WORD = re.compile(r"\w+")
OVERHEAD = estimate_tokens(MemoryBlockPrompt(lessons=()).render())

Order = Callable[[str], list[int]]
Inject = Callable[[str, int], list[int]]
Method = Callable[[Case], tuple[Order, Inject]]


def default_datasets() -> list[str]:
    """LoCoMo from the nearest shared/bench/ beside the checkout or a parent, and our persona lessons."""
    found = [str(PERSONA_SET)]
    for folder in ROOT.parents:
        locomo = folder / "shared" / "bench" / "locomo.jsonl"
        if locomo.is_file():
            return [str(locomo), *found]
    return found


def render(lessons: Sequence[Lesson]) -> str:
    """The block as the memory service renders it."""
    return MemoryBlockPrompt(lessons=tuple(lesson.text for lesson in lessons)).render() if lessons else ""


def fit(memories: Sequence[Lesson], chosen: list[int], budget: int) -> list[int]:
    """Render the block and drop the last lines while the whole of it is over the budget."""
    while chosen and estimate_tokens(render([memories[i] for i in chosen])) > budget:
        chosen = chosen[:-1]
    return chosen


def pack(memories: Sequence[Lesson], order: Sequence[int], budget: int) -> list[int]:
    """Positions injected under `budget`: lines in order while they fit, as MemoryService.read packs them."""
    room, spent, chosen = budget - OVERHEAD, 0, []
    for i in order:
        price = line_cost(memories[i].text)
        if spent + price <= room:
            chosen.append(i)
            spent += price
    return fit(memories, chosen, budget)


def ranked(case: Case, order: Order) -> tuple[Order, Inject]:
    """A method from any function that orders the case's memories for a query."""
    return order, lambda query, budget: pack(case.memories, order(query), budget)


def bm25(case: Case) -> tuple[Order, Inject]:
    from rank_bm25 import BM25Okapi

    def words(text: str) -> list[str]:
        return [word for word in WORD.findall(text.lower()) if word not in STOP_WORDS]

    model = BM25Okapi([words(memory.text) for memory in case.memories])
    everything = range(len(case.memories))
    return ranked(case, lambda query: sorted(everything, key=model.get_scores(words(query)).__getitem__, reverse=True))


def dense(encoder: CachedEncoder) -> Method:
    def make(case: Case) -> tuple[Order, Inject]:
        vectors = encoder.embed([memory.text for memory in case.memories])

        def order(query: str) -> list[int]:
            cosines = vectors @ encoder.embed([query])[0]
            return np.argsort(-cosines, kind="stable").tolist()

        return ranked(case, order)

    return make


def ours(encoder: CachedEncoder | None, weights: RecallWeights | None = None) -> Method:
    """Recall as MemoryService.read uses it: select under the budget less the block's overhead, then render."""

    def make(case: Case) -> tuple[Order, Inject]:
        recall = Recall(encoder=encoder, weights=weights, succession=LessonSuccession())
        vectors = None
        if encoder is not None:
            matrix = encoder.embed([memory.text for memory in case.memories])
            vectors = LessonVectors(matrix, np.ones(len(case.memories), dtype=bool))
        position = {memory.id: i for i, memory in enumerate(case.memories)}
        recall.rank(case.memories, "", case.now, vectors)  # builds the index outside the timings

        def order(query: str) -> list[int]:
            return [position[s.lesson.id] for s in recall.rank(case.memories, query, case.now, vectors)]

        def inject(query: str, budget: int) -> list[int]:
            cost = lambda memory: line_cost(memory.text)  # noqa: E731
            chosen = recall.select(case.memories, query, case.now, budget - OVERHEAD, cost, vectors)
            return fit(case.memories, [position[memory.id] for memory in chosen], budget)

        return order, inject

    return make


def truncation(case: Case) -> tuple[Order, Inject]:
    """The newest lines that fit; later in the file breaks ties."""
    newest = sorted(range(len(case.memories)), key=lambda i: (case.memories[i].recorded_at, i), reverse=True)
    return ranked(case, lambda _query: newest)


def run(cases: Sequence[Case], make: Method, ks: Sequence[int], budgets: Sequence[int]) -> dict[str, Any]:
    """Quality and latency of one method over every case, overall, per kind and per half."""
    tally, halves, stale_checks, timings = Tally(), {"tune": Tally(), "report": Tally()}, [], []
    for case in cases:
        order, inject = make(case)
        ids = [memory.id for memory in case.memories]
        for query in case.queries:
            ranking = [ids[i] for i in order(query.text)]
            if query.stale:
                stale_checks.append(stale_ok(ranking, query, max(ks)))
            if not query.relevant:
                continue
            figures = {f"recall@{k}": found_share(ranking[:k], query.relevant) for k in ks}
            for budget in budgets:
                started = time.perf_counter()
                block = inject(query.text, budget)
                if budget == budgets[0]:
                    timings.append((time.perf_counter() - started) * 1000)
                figures[f"budget_recall@{budget}"] = found_share([ids[i] for i in block], query.relevant)
            tally.add(query.kind, figures)
            halves.setdefault(case.split, Tally()).add(query.kind, figures)
    stale_share = round(sum(stale_checks) / len(stale_checks), 4) if stale_checks else None
    split = {name: half.mean("all") for name, half in halves.items() if half.counts}
    return {**tally.report(), **percentiles(timings), "stale_ok": stale_share, "halves": split}


def evaluate(
    path: str, k: int = 10, budget: int = 1000, with_latency: bool = True, encoder: CachedEncoder | None = None
) -> dict[str, Any]:
    """Every method over one data set, in one run."""
    cases = load(path)
    ks = sorted({5, 10, k})
    budgets = [budget, *(b for b in BUDGETS if b != budget)]
    encoder = encoder or CachedEncoder()
    methods: dict[str, Any] = {
        "bm25": run(cases, bm25, ks, budgets),
        "dense": run(cases, dense(encoder), ks, budgets),
        "keywords": run(cases, ours(None), ks, budgets),
        "default": run(cases, ours(encoder), ks, budgets),
    }
    methods["default"].update(pairs_judged(cases, _cosine(encoder)))
    trunc = run(cases, truncation, ks, budgets)
    wanted = [f"budget_recall@{b}" for b in budgets]
    result: dict[str, Any] = {
        "dataset": path,
        "cases": len(cases),
        "methods": methods,
        "truncation": {
            **{name: trunc[name] for name in wanted},
            "kinds": {kind: {name: f[name] for name in wanted} for kind, f in trunc["kinds"].items()},
        },
    }
    if with_latency:
        result["read_path"] = read_latency.measure()
    return result


def _cosine(encoder: CachedEncoder) -> Callable[[str, str], float | None]:
    def cosine(a: str, b: str) -> float | None:
        first, second = encoder.embed([a, b])
        return float(first @ second)

    return cosine


# --- output ----------------------------------------------------------------------------------------------------


COLUMNS = ("recall@5", "recall@10", "budget_recall@1000", "budget_recall@2000", "p50_ms", "p95_ms")


def table(result: dict[str, Any]) -> str:
    """The figures as plain text: the methods, then per half and per kind, then the rest."""
    methods = result["methods"]
    rows = [("method", *COLUMNS)]
    rows += [(name, *(_cell(figures.get(c)) for c in COLUMNS)) for name, figures in methods.items()]
    trunc = result["truncation"]
    rows.append(("truncation", "", "", *(_cell(trunc.get(c)) for c in COLUMNS[2:4]), "", ""))
    lines = [f"{result['dataset']}: {result['cases']} cases", *_aligned(rows)]
    lines += ["", *_aligned(_per_half(methods)), "", *_aligned(_per_kind(methods)), ""]
    default = methods["default"]
    lines.append(
        f"default, pairwise: duplicates merged {_cell(default['dedup_recall'])}, not-duplicates kept apart "
        f"{_cell(default['not_duplicates_kept'])}; stale ranked below its successor or out of the top 10 "
        f"{_cell(default['stale_ok'])} ('-': the data has no such labels)"
    )
    if "read_path" in result:
        lines.append(read_latency.summary(result["read_path"]))
    return "\n".join(lines)


def _per_half(methods: dict[str, Any]) -> list[tuple[str, ...]]:
    rows = [("recall@10 / budget_recall@1000", "tune half", "report half")]
    for name, figures in methods.items():
        halves = figures.get("halves", {})
        cells = (f"{_cell(h.get('recall@10'))} / {_cell(h.get('budget_recall@1000'))}" for h in (
            halves.get("tune", {}), halves.get("report", {})))  # fmt: skip
        rows.append((name, *cells))
    return rows


def _per_kind(methods: dict[str, Any]) -> list[tuple[str, ...]]:
    kinds = sorted({kind for figures in methods.values() for kind in figures.get("kinds", {})})
    rows = [("recall@10 / budget_recall@1000", *kinds)]
    for name, figures in methods.items():
        if "kinds" in figures:
            pairs = (figures["kinds"].get(kind, {}) for kind in kinds)
            rows.append((name, *(f"{_cell(f.get('recall@10'))} / {_cell(f.get('budget_recall@1000'))}" for f in pairs)))
    return rows


def side_by_side(
    written: Sequence[dict[str, Any]], compacted: Sequence[dict[str, Any]], found: Sequence[dict[str, Any]]
) -> str:
    """Issue 19's figures, one data set a row, from one run: the write path's four, reading's `stale_ok` with
    curation off (the default method's), and compaction's (bench.compaction)."""
    keys = ("duplicates_merged", "not_duplicates_kept", "stale_left_out", "block_recall")
    rows = [("data set", "merged", "kept apart", "stale out", "block recall", "stale_ok", "lost", "newest-50 recall")]
    for wrote, compact, result in zip(written, compacted, found, strict=True):
        figures = (
            *(wrote[key] for key in keys),
            result["methods"]["default"].get("stale_ok"),
            compact["newest_recall"],
        )
        cells = ["-" if value is None else f"{value:.2f}" for value in figures]
        rows.append((Path(wrote["dataset"]).name, *cells[:5], str(compact["lost"]), cells[5]))
    targets = "targets on data nobody tuned to: 0.80 / 0.95 / 0.90 / 0.95, stale_ok 0.85, lost 0, newest-50 0.95"
    spread = [("data set", "merged", "kept apart", "stale out")]
    for wrote in written:
        counts = (wrote["pairs"][name] for name in ("duplicates", "not_duplicates", "stale"))
        bounds = (None if wrote[key] is None else wilson(wrote[key], n) for key, n in zip(keys, counts, strict=False))
        spread.append((Path(wrote["dataset"]).name, *("-" if b is None else f"{b[0]:.2f}-{b[1]:.2f}" for b in bounds)))
    intervals = "95% intervals (Wilson, from the pair counts): where each figure may land on another set of that size"
    table = ["issue 19, side by side (-: the data has no such labels)", *_aligned(rows), targets]
    return "\n".join([*table, intervals, *_aligned(spread)])


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if isinstance(value, float) and value <= 1.0 else str(value)


def _aligned(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Memory-retrieval benchmark over JSON Lines data sets.")
    parser.add_argument("--dataset", action="append", help="a .jsonl file in the benchmark format (repeatable)")
    parser.add_argument("--k", type=int, default=10, help="also report recall@k")
    parser.add_argument("--budget", type=int, default=1000, help="also report budget recall at this many tokens")
    parser.add_argument("--write-path", action="store_true", help="also record every memory through the service")
    parser.add_argument("--categories", action="store_true", help="the write path gives each memory a category")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--no-latency", action="store_true", help="skip the 10,000-lesson read-path figure")
    args = parser.parse_args(argv)
    encoder = CachedEncoder()
    paths = args.dataset or [*default_datasets(), *BLIND_SETS]
    results = [evaluate(path, args.k, args.budget, False, encoder) for path in paths]
    document: dict[str, Any] = {"datasets": results}
    if args.write_path:
        document["write_path"] = [
            write_path.measure(path, args.budget, encoder=encoder, categories=args.categories) for path in paths
        ]
        document["compaction"] = [compaction.compaction_figure(path, encoder=encoder) for path in paths]
    if not args.no_latency:
        document["read_path"] = read_latency.measure()
    if args.json:
        print(json.dumps(document, indent=1))
        return 0
    for result in results:
        print(table(result), end="\n\n")
    for figures in document.get("write_path", []):
        print(write_path.summary(figures), end="\n\n")
    for figure in document.get("compaction", []):
        print(compaction.summary(figure), end="\n\n")
    if args.write_path:
        print(side_by_side(document["write_path"], document["compaction"], results), end="\n\n")
    if "read_path" in document:
        print(read_latency.summary(document["read_path"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
