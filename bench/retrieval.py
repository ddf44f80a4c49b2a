"""Memory-retrieval quality: recall@k, recall inside the injected block, per-kind figures and read latency.

    python -m bench.retrieval --dataset FILE.jsonl [--k 10] [--budget 1000] [--json] [--no-latency]

FILE is in the format of ../shared/bench/README.md (unknown optional fields are ignored). Every method runs in the
same process over the same cases:

- bm25: the plain reference, rank-bm25's BM25Okapi over lower-cased words less English stop words;
- dense: all-MiniLM-L6-v2 cosine alone (needs the `semantic` extra; reported unavailable without it);
- default: nightwatch's Recall as the memory service uses it, without a dense encoder;
- default+dense: the same Recall with the MiniLM encoder (with the extra only);
- truncation: the naive block of the newest lines that fit.

A memory counts as found at a budget B when it is inside the block injected under B tokens: lines packed in rank
order at their line cost, the block rendered as the memory service renders it and checked whole with
estimate_tokens. A case's `now` is its newest memory's time. Latency is the read path (rank, pack, render) of one
query over one case at --budget, the case's index already built. The read path at 10,000 lessons in one file comes
from bench.read_latency (MemoryService.read over FileMemoryStore).
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from bench import read_latency
from bench.retrieval_data import Case, Tally, dedup, found_share, load, percentiles, stale_ok
from nightwatch.adapters import embeddings
from nightwatch.domain.memory import MemoryBlockPrompt, line_cost
from nightwatch.domain.models import Lesson
from nightwatch.domain.ports import Embedder
from nightwatch.domain.recall import STOP_WORDS, Recall
from nightwatch.domain.tokens import estimate_tokens

BUDGETS = (1000, 2000)
WORD = re.compile(r"\w+")
OVERHEAD = estimate_tokens(MemoryBlockPrompt(lessons=()).render())

Order = Callable[[str], list[int]]
Inject = Callable[[str, int], list[int]]


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


def dense(encoder: Embedder) -> Callable[[Case], tuple[Order, Inject]]:
    def make(case: Case) -> tuple[Order, Inject]:
        vectors = encoder.embed([memory.text for memory in case.memories])

        def order(query: str) -> list[int]:
            probe = encoder.embed([query])[0]
            cosines = [sum(map(float.__mul__, probe, vector)) for vector in vectors]
            return sorted(range(len(vectors)), key=cosines.__getitem__, reverse=True)

        return ranked(case, order)

    return make


def ours(encoder: Embedder | None) -> Callable[[Case], tuple[Order, Inject]]:
    """Recall as MemoryService.read uses it: select under the budget less the block's overhead, then render."""

    def make(case: Case) -> tuple[Order, Inject]:
        recall = Recall(encoder=encoder)
        position = {memory.id: i for i, memory in enumerate(case.memories)}
        recall.rank(case.memories, "", case.now)  # builds the index outside the timings

        def order(query: str) -> list[int]:
            return [position[s.lesson.id] for s in recall.rank(case.memories, query, case.now)]

        def inject(query: str, budget: int) -> list[int]:
            cost = lambda memory: line_cost(memory.text)  # noqa: E731
            chosen = recall.select(case.memories, query, case.now, budget - OVERHEAD, cost)
            return fit(case.memories, [position[memory.id] for memory in chosen], budget)

        return order, inject

    return make


def truncation(case: Case) -> tuple[Order, Inject]:
    """The newest lines that fit; later in the file breaks ties."""
    newest = sorted(range(len(case.memories)), key=lambda i: (case.memories[i].recorded_at, i), reverse=True)
    return ranked(case, lambda _query: newest)


def run(cases: Sequence[Case], make: Callable[[Case], tuple[Order, Inject]], ks: Sequence[int],
        budgets: Sequence[int]) -> dict[str, Any]:  # fmt: skip
    """Quality and latency of one method over every case."""
    tally, stale_checks, timings = Tally(), [], []
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
    stale_share = round(sum(stale_checks) / len(stale_checks), 4) if stale_checks else None
    return {**tally.report(), **percentiles(timings), "stale_ok": stale_share}


def evaluate(path: str, k: int = 10, budget: int = 1000, with_latency: bool = True) -> dict[str, Any]:
    """Every method over the dataset, in one run."""
    cases = load(path)
    ks = sorted({5, 10, k})
    budgets = [budget, *(b for b in BUDGETS if b != budget)]
    encoder = embeddings.MiniLMEmbedder() if embeddings.available() else None
    methods: dict[str, Any] = {"bm25": run(cases, bm25, ks, budgets)}
    methods["dense"] = (
        run(cases, dense(encoder), ks, budgets) if encoder else {"unavailable": embeddings.MISSING_MESSAGE}
    )
    methods["default"] = {**run(cases, ours(None), ks, budgets), **dedup(cases)}
    if encoder:
        methods["default+dense"] = {**run(cases, ours(encoder), ks, budgets), **dedup(cases)}
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


# --- output ----------------------------------------------------------------------------------------------------


COLUMNS = ("recall@5", "recall@10", "budget_recall@1000", "budget_recall@2000", "p50_ms", "p95_ms")


def table(result: dict[str, Any]) -> str:
    """The figures as plain text: the methods, then recall@10 and budget recall per kind, then the rest."""
    methods = result["methods"]
    rows = [("method", *COLUMNS)]
    rows += [(name, *(_cell(figures.get(c)) for c in COLUMNS)) for name, figures in methods.items()]
    trunc = result["truncation"]
    rows.append(("truncation", "", "", *(_cell(trunc.get(c)) for c in COLUMNS[2:4]), "", ""))
    lines = [f"{result['dataset']}: {result['cases']} cases", *_aligned(rows)]
    lines += [f"{name}: {figures['unavailable']}" for name, figures in methods.items() if "unavailable" in figures]
    lines += ["", *_aligned(_per_kind(methods)), ""]
    default = methods["default"]
    lines.append(
        f"default: dedup precision {_cell(default['dedup_precision'])}, dedup recall {_cell(default['dedup_recall'])}, "
        f"stale_ok {_cell(default['stale_ok'])} ('-': the data has no such labels)"
    )
    if "read_path" in result:
        lines.append(read_latency.summary(result["read_path"]))
    return "\n".join(lines)


def _per_kind(methods: dict[str, Any]) -> list[tuple[str, ...]]:
    kinds = sorted({kind for figures in methods.values() for kind in figures.get("kinds", {})})
    rows = [("recall@10 / budget_recall@1000", *kinds)]
    for name, figures in methods.items():
        if "kinds" in figures:
            pairs = (figures["kinds"][kind] for kind in kinds)
            rows.append((name, *(f"{_cell(f.get('recall@10'))} / {_cell(f.get('budget_recall@1000'))}" for f in pairs)))
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.4f}" if isinstance(value, float) and value <= 1.0 else str(value)


def _aligned(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Memory-retrieval benchmark over a JSON Lines dataset.")
    parser.add_argument("--dataset", required=True, help="a .jsonl file in the benchmark format")
    parser.add_argument("--k", type=int, default=10, help="also report recall@k")
    parser.add_argument("--budget", type=int, default=1000, help="also report budget recall at this many tokens")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--no-latency", action="store_true", help="skip the 10,000-lesson read-path figure")
    args = parser.parse_args(argv)
    result = evaluate(args.dataset, args.k, args.budget, with_latency=not args.no_latency)
    print(json.dumps(result, indent=1) if args.json else table(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
