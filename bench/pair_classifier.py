"""The issue's other approach, measured: a small pair classifier in numpy instead of curation's hand-made rules.

    python -m bench.pair_classifier [--vectors] [--write-path]

Pairs: every memory of a tune file against its nearest earlier memories (at most 5, cosine >= RELATED_MEANING,
as curation sees them), labelled a restatement (a `duplicates` pair), an update (an older lesson of an update query's
chain against a later one) or neither. Features are curation's own signals (cosine, word overlap, agreeing
specifics, a changed amount, a flipped decision, "now"-words, another subject, cause and fix, the rules' own verdicts),
and with --vectors also the two vectors' product and distance, dimension by dimension. A multinomial logistic
regression is trained on all tune files but one and judged on the one left out, for each in turn.

The same pairs train curation's learned restatement judge, which also reads the two lessons as one pair:
`python -m bench.judge [--save]`.

Printed per setting: restatements merged, look-alikes (`not_duplicates`) kept apart and updates seen (superseded),
pooled over the held-out files. The rules' figure is in-sample (they were chosen on these files), the classifier's
is not, so a classifier that only ties the rules here would likely beat them on new data. With --write-path, each
held-out file is also recorded through `MemoryService.remember` (bench.write_path) with the classifier deciding
restatements (merge at MERGE_AT_WRITE) and the rules everything else. Figures and what was concluded:
docs/memory-rounds.md ("Round 4"). Never run on bench/data/blind.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.retrieval_data import Case, load
from bench.vectors import CachedEncoder
from bench.write_path import measure
from nightwatch.domain import framing
from nightwatch.domain.memory import curation, specifics
from nightwatch.domain.models import Lesson

DATA = Path(__file__).parent / "data"
TUNE = (  # the judge's weights are fitted on these
    "persona_lessons.jsonl",
    "tune_extra.jsonl",
    "tune_extra2.jsonl",
    *(f"tune_more_{n}.jsonl" for n in range(1, 29)),
)
NEITHER, RESTATES, UPDATES = 0, 1, 2
MERGE_AT = (0.5, 0.6, 0.7)
_DAY = datetime(2026, 1, 1, tzinfo=UTC)
SETTINGS = ((0.5, 0.5), (0.6, 0.5), (0.7, 0.5), (0.5, 0.35), (0.6, 0.35))  # (merge at, supersede at) probability


@dataclass(frozen=True)
class Pair:
    older: str
    newer: str
    cosine: float
    rank: int
    label: int
    look_alike: bool
    candidate: tuple[str, str]  # (case, newer id): one decision per candidate
    vectors: np.ndarray


def pairs(case: Case, encoder: CachedEncoder) -> list[Pair]:
    memories = sorted(case.memories, key=lambda m: m.recorded_at)
    ids = [m.id for m in memories]
    vectors = encoder.embed([m.text for m in memories])
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    restated = set(case.duplicates)
    apart = set(case.not_duplicates) | {(b, a) for a, b in case.not_duplicates}
    updated = set()
    for query in case.queries:
        chain = sorted([*query.stale, *query.relevant], key=ids.index) if query.stale else []
        updated |= {(a, b) for i, a in enumerate(chain) if a in query.stale for b in chain[i + 1 :]}
    found = []
    for j in range(1, len(memories)):
        cosines = vectors[:j] @ vectors[j]
        for rank, i in enumerate(np.argsort(-cosines)[: curation.NEIGHBOURS]):
            if cosines[i] < curation.RELATED_MEANING:
                break
            key = (ids[i], ids[j])
            label = RESTATES if key in restated else UPDATES if key in updated else NEITHER
            both = np.concatenate([vectors[i] * vectors[j], np.abs(vectors[i] - vectors[j])])
            found.append(Pair(memories[i].text, memories[j].text, float(cosines[i]), rank, label, key in apart,
                              (case.id, ids[j]), both))  # fmt: skip
    return found


def signals(pair: Pair) -> list[float]:
    older, newer, cosine = pair.older, pair.newer, pair.cosine
    s, f, fo, fn = specifics, framing, specifics.features(older), specifics.features(newer)
    agree = specifics.agree(older, newer)
    change = f.says_change(newer)
    return [
        cosine, cosine**2, max(cosine - 0.7, 0.0), max(cosine - 0.85, 0.0), s.overlap(fo.words, fn.words), agree,
        change, s.flips(fo, fn), s.changed_amount(older, newer), curation.another_subject(older, newer),
        f.cause_and_fix(older, newer), f.UPDATE.search(newer) is not None, s.same_things(older, newer, 0.45),
        fo.names == fn.names, f.says_change(older), curation.is_duplicate(older, newer, cosine),
        _replaces(pair), cosine * agree, cosine * change,
        min(len(older), len(newer)) / max(len(older), len(newer)),
    ]  # fmt: skip


class Softmax:
    """Multinomial logistic regression with an L2 penalty, fitted by full-batch gradient descent on standardised
    features."""

    def __init__(self, x: np.ndarray, y: np.ndarray, penalty: float, steps: int = 2000, rate: float = 0.5) -> None:
        self.mean, self.scale = x.mean(0), x.std(0) + 1e-9
        z = (x - self.mean) / self.scale
        self.weights, self.bias = np.zeros((z.shape[1], 3)), np.zeros(3)
        target = np.eye(3)[y]
        for _ in range(steps):
            gradient = (self.probabilities(x) - target) / len(y)
            self.weights -= rate * (z.T @ gradient + penalty * self.weights / len(y))
            self.bias -= rate * gradient.sum(0)

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        logits = ((x - self.mean) / self.scale) @ self.weights + self.bias
        odds = np.exp(logits - logits.max(1, keepdims=True))
        return odds / odds.sum(1, keepdims=True)


def by_candidate(found: list[Pair]) -> dict[tuple[str, str], list[int]]:
    grouped: dict[tuple[str, str], list[int]] = defaultdict(list)
    for k, pair in enumerate(found):
        grouped[pair.candidate].append(k)
    return grouped


def classifier_actions(found: list[Pair], p: np.ndarray, merge_at: float, supersede_at: float) -> np.ndarray:
    """Merge into the likeliest restated neighbour past `merge_at`, else supersede the likeliest updated one."""
    actions = np.zeros(len(found), dtype=int)
    for ks in by_candidate(found).values():
        best = max(ks, key=lambda k: p[k, RESTATES])
        if p[best, RESTATES] >= merge_at:
            actions[best] = RESTATES
            continue
        best = max(ks, key=lambda k: p[k, UPDATES])
        actions[best] = UPDATES if p[best, UPDATES] >= supersede_at else NEITHER
    return actions


def rule_actions(found: list[Pair]) -> np.ndarray:
    """What `curation.decide` does: merge into the first restated neighbour, else supersede the nearest if updated."""
    actions = np.zeros(len(found), dtype=int)
    for candidate in by_candidate(found).values():
        ks = sorted(candidate, key=lambda k: found[k].rank)
        merged = next((k for k in ks if curation.is_duplicate(found[k].older, found[k].newer, found[k].cosine)), None)
        if merged is not None:
            actions[merged] = RESTATES
        elif _replaces(found[ks[0]]):
            actions[ks[0]] = UPDATES
    return actions


def _replaces(pair: Pair) -> bool:
    """Whether `curation.decide` supersedes the older lesson with the newer (its update rule, not reading's)."""
    older = Lesson(id="older", text=pair.older, recorded_at=_DAY)
    return curation.decide(pair.newer, [older], [curation.Neighbour(older, pair.cosine)]).action == "supersede"


def hybrid_actions(found: list[Pair], p: np.ndarray, merge_at: float) -> np.ndarray:
    """The classifier's merge, else the rules' supersession of the nearest neighbour."""
    actions = np.zeros(len(found), dtype=int)
    for candidate in by_candidate(found).values():
        best = max(candidate, key=lambda k: p[k, RESTATES])
        nearest = min(candidate, key=lambda k: found[k].rank)
        if p[best, RESTATES] >= merge_at:
            actions[best] = RESTATES
        elif _replaces(found[nearest]):
            actions[nearest] = UPDATES
    return actions


def figures(found: list[Pair], actions: np.ndarray) -> np.ndarray:
    """Counts: restatements merged, restatements, look-alikes kept apart, look-alikes, updates seen, updates."""
    labels = np.array([pair.label for pair in found])
    apart = np.array([pair.look_alike for pair in found], dtype=bool)
    return np.array([
        np.sum(actions[labels == RESTATES] == RESTATES), np.sum(labels == RESTATES),
        np.sum(actions[apart] == NEITHER), np.sum(apart),
        np.sum(actions[labels == UPDATES] == UPDATES), np.sum(labels == UPDATES),
    ])  # fmt: skip


MERGE_AT_WRITE = 0.6


@contextmanager
def restating_by(model: Softmax, merge_at: float = MERGE_AT_WRITE) -> Iterator[None]:
    """Curation's restatement test by the classifier while the block runs (by words, without a vector: the rule)."""
    rule = curation._restates

    def restates(old: str, similarity: float | None, candidate: str) -> bool:
        if similarity is None:
            return rule(old, similarity, candidate)
        curation._restates = rule  # the signals include the rules' own verdict
        try:
            x = signals(Pair(old, candidate, similarity, 0, NEITHER, False, ("", ""), np.zeros(1)))
        finally:
            curation._restates = restates
        return bool(model.probabilities(np.array([x], dtype=float))[0, RESTATES] >= merge_at)

    curation._restates = restates
    try:
        yield
    finally:
        curation._restates = rule


def write_path(held_out: str, model: Softmax) -> tuple[dict[str, Any], dict[str, Any]]:
    """The held-out file's write-path figures by the rules alone and with the classifier's restatements."""
    path = str(DATA / held_out)
    split = "tune" if held_out == TUNE[0] else None
    with contextlib.redirect_stderr(io.StringIO()):  # the redaction backstop's warning, as in bench.retrieval
        alone = measure(path, split=split, judged=False)
        with restating_by(model):
            learned = measure(path, split=split, judged=False)
    return alone, learned


def _pooled(results: list[dict[str, Any]], key: str) -> float:
    """A share over every file's pairs, not the mean of the files' shares."""
    whole = {"duplicates_merged": "duplicates", "not_duplicates_kept": "not_duplicates", "stale_left_out": "stale"}
    counts = [result["pairs"][whole[key]] for result in results]
    return sum(result[key] * n for result, n in zip(results, counts, strict=True)) / sum(counts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Leave-one-file-out: a learned pair classifier against the rules.")
    parser.add_argument("--vectors", action="store_true", help="add the vectors' product and distance as features")
    parser.add_argument("--write-path", action="store_true", help="also record each held-out file (about a minute)")
    parser.add_argument("--penalty", type=float, default=1.0, help="L2 penalty (try 30-300 with --vectors)")
    args = parser.parse_args(argv)
    encoder = CachedEncoder()
    files: dict[str, list[Pair]] = {}
    for name in TUNE:
        cases = [case for case in load(str(DATA / name)) if case.split == "tune"]
        files[name] = [pair for case in cases for pair in pairs(case, encoder)]
    rows = {name: np.array([signals(pair) for pair in found], dtype=float) for name, found in files.items()}
    if args.vectors:
        rows = {name: np.hstack([rows[name], [pair.vectors for pair in files[name]]]) for name in files}
    rules = sum(figures(found, rule_actions(found)) for found in files.values())
    learned = {setting: np.zeros(6) for setting in SETTINGS}
    mixed = {merge_at: np.zeros(6) for merge_at in MERGE_AT}
    written: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    for held_out, found in files.items():
        x = np.vstack([rows[name] for name in files if name != held_out])
        y = np.array([pair.label for name in files if name != held_out for pair in files[name]])
        model = Softmax(x, y, args.penalty)
        p = model.probabilities(rows[held_out])
        if args.write_path and not args.vectors:
            written.append((held_out, *write_path(held_out, model)))
        for setting in SETTINGS:
            learned[setting] += figures(found, classifier_actions(found, p, *setting))
        for merge_at in MERGE_AT:
            mixed[merge_at] += figures(found, hybrid_actions(found, p, merge_at))

    def line(label: str, counts: np.ndarray) -> str:
        merged, apart, seen = counts[0] / counts[1], counts[2] / counts[3], counts[4] / counts[5]
        return f"{label:38s} merged {merged:.3f}  kept apart {apart:.3f}  updates seen {seen:.3f}"

    pairs_of = sum(len(found) for found in files.values())
    print(f"{len(files)} tune files, {pairs_of} neighbour pairs; figures pooled over the held-out files")
    print(line("rules (in sample)", rules))
    for (merge_at, supersede_at), counts in learned.items():
        print(line(f"classifier, merge>={merge_at} supersede>={supersede_at}", counts))
    for merge_at, counts in mixed.items():
        print(line(f"classifier merge>={merge_at}, rules' updates", counts))
    if written:
        print(f"write path per held-out file (merged / kept apart / stale left out), rules then classifier merge>="
              f"{MERGE_AT_WRITE}:")  # fmt: skip
        keys = ("duplicates_merged", "not_duplicates_kept", "stale_left_out")
        for name, alone, learned in written:
            print(f"  {name:24s} " + " / ".join(f"{alone[k]:.3f}" for k in keys) + "   "
                  + " / ".join(f"{learned[k]:.3f}" for k in keys))  # fmt: skip
        pooled = [" / ".join(f"{_pooled([run[i] for run in written], k):.3f}" for k in keys) for i in (1, 2)]
        print(f"  {'pooled':24s} {pooled[0]}   {pooled[1]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
