"""Curation's learned restatement judge and update check, fitted and measured: `python -m bench.judge [--save]`.

The pairs are bench.pair_classifier's (every memory of a tune file against its nearest earlier memories, labelled from
the file's own labels). Each gets the judge's figures (`memory.vectors.signals`: the cosine, the rules' verdict and
checks, and how the two lessons' words align when the encoder reads them as one pair), and a logistic regression
(`domain.classifier`) learns restatement or not. The update check is a second one over the same figures, learned on
the pairs whose newer lesson the update rule has supersede its nearest (update or not). Leave-one-file-out: fitted
on every tune file but one, judged on that one, pair by pair and through the write path (bench.write_path: the
product's own code, with the fold's weights), beside the rules alone and the judge alone. --save fits on every tune
file and writes the weights the product ships. Never run on bench/data/blind.
"""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from bench import pair_classifier as pc
from bench.pair_classifier import Pair
from bench.retrieval_data import load
from bench.vectors import CachedEncoder
from bench.write_path import measure
from nightwatch.domain.classifier import Logistic, fit
from nightwatch.domain.memory import vectors

ROOT = Path(__file__).resolve().parents[1]
WEIGHTS = ROOT / "nightwatch" / "domain" / "memory" / "restatement.json"
CHECK_WEIGHTS = WEIGHTS.with_name("update.json")
THRESHOLD = 0.6  # a restatement from this probability up (chosen on the leave-one-file-out write path)
CHECK_THRESHOLD = 0.3  # the rule's supersession stands from this probability of an update up (chosen the same way)


def rows_of(found: list[Pair], encoder: CachedEncoder) -> np.ndarray:
    readings = encoder.alignment([(pair.older, pair.newer) for pair in found])
    return np.array(
        [vectors.signals(p.older, p.cosine, p.newer, r.tolist()) for p, r in zip(found, readings, strict=True)]
    )


def fitted(
    names: list[str], rows: dict[str, np.ndarray], yes: dict[str, np.ndarray], threshold: float = THRESHOLD
) -> Logistic:
    return fit(np.vstack([rows[n] for n in names]), np.concatenate([yes[n] for n in names]), vectors.SIGNALS, threshold)


def superseded(found: list[Pair]) -> list[Pair]:
    """The pairs whose newer lesson the update rule has supersede the older (its nearest): what the check judges."""
    return [pair for pair in found if pair.rank == 0 and pc._replaces(pair)]


@contextmanager
def judging_by(model: Logistic, check: Logistic | None = None) -> Iterator[None]:
    """The memory room's judge is `model` while the block runs, and its update check `check` (none: every update the
    rule sees stands)."""
    shipped, shipped_check = vectors.judge, vectors.update_check
    vectors.judge = lambda: model  # type: ignore[assignment]
    n = len(vectors.SIGNALS)
    always = Logistic(vectors.SIGNALS, np.zeros(n), np.ones(n), np.zeros(n), 0.0, 0.0)  # p = 0.5, yes from 0
    vectors.update_check = lambda: check or always  # type: ignore[assignment]
    try:
        yield
    finally:
        vectors.judge, vectors.update_check = shipped, shipped_check


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Leave-one-file-out: curation's restatement judge against the rules.")
    parser.add_argument("--save", action="store_true", help="fit on every tune file and write the shipped weights")
    save = parser.parse_args(argv).save
    encoder = CachedEncoder()
    files = {
        name: [pair for case in load(str(pc.DATA / name)) if case.split == "tune" for pair in pc.pairs(case, encoder)]
        for name in pc.TUNE
    }
    rows = {name: rows_of(found, encoder) for name, found in files.items()}
    yes = {name: np.array([pair.label == pc.RESTATES for pair in found]) for name, found in files.items()}
    seen = {name: superseded(found) for name, found in files.items()}
    check_rows = {name: rows_of(found, encoder) for name, found in seen.items()}
    updates = {name: np.array([pair.label == pc.UPDATES for pair in found]) for name, found in seen.items()}
    if save:
        WEIGHTS.write_text(fitted(list(rows), rows, yes).to_json(), encoding="utf-8")
        check = fitted(list(check_rows), check_rows, updates, CHECK_THRESHOLD)
        CHECK_WEIGHTS.write_text(check.to_json(), encoding="utf-8")
        for path, counts in ((WEIGHTS, rows), (CHECK_WEIGHTS, check_rows)):
            fitted_on = f"{sum(map(len, counts.values()))} pairs of {len(counts)} files"
            print(f"wrote {path.relative_to(ROOT)}: fitted on {fitted_on}")
        return 0
    rules, judged, written = np.zeros(6), np.zeros(6), []
    for held_out, found in files.items():
        others = [name for name in files if name != held_out]
        model, check = fitted(others, rows, yes), fitted(others, check_rows, updates, CHECK_THRESHOLD)
        p = np.zeros((len(found), 3))
        p[:, pc.RESTATES] = [model.probability(row) for row in rows[held_out]]
        rules += pc.figures(found, pc.rule_actions(found))
        judged += pc.figures(found, pc.hybrid_actions(found, p, THRESHOLD))
        path, split = str(pc.DATA / held_out), "tune" if held_out == pc.TUNE[0] else None
        with contextlib.redirect_stderr(io.StringIO()):  # the redaction backstop's warning, as in bench.retrieval
            alone = measure(path, split=split, encoder=encoder, judged=False)
            with judging_by(model):
                learned = measure(path, split=split, encoder=encoder)
            with judging_by(model, check):
                checked = measure(path, split=split, encoder=encoder)
        written.append((held_out, alone, learned, checked))
    _report(rules, judged, written)
    return 0


def _report(rules: np.ndarray, judged: np.ndarray, written: list[tuple[str, dict[str, Any], ...]]) -> None:
    def line(label: str, counts: np.ndarray) -> str:
        merged, apart, seen = counts[0] / counts[1], counts[2] / counts[3], counts[4] / counts[5]
        return f"{label:34s} merged {merged:.3f}  kept apart {apart:.3f}  updates seen {seen:.3f}"

    print(f"restatement judge, leave-one-file-out over {len(written)} tune files (pairs, pooled):")
    print(line("rules (in sample)", rules))
    print(line(f"judge, restatement at p >= {THRESHOLD}", judged))
    keys = ("duplicates_merged", "not_duplicates_kept", "stale_left_out", "block_recall")
    print("write path per held-out file (merged / kept apart / stale left out / block recall): rules alone, judge, ")
    print(f"judge and update check (p >= {CHECK_THRESHOLD}):")
    for name, *runs in written:
        print(f"  {name:24s}", "   ".join(" / ".join(f"{run[k]:.3f}" for k in keys) for run in runs))
    pooled = [" / ".join(f"{pc._pooled([run[i] for run in written], k):.3f}" for k in keys[:3]) for i in (1, 2, 3)]
    recall = [f"{np.mean([run[i]['block_recall'] for run in written]):.3f}" for i in (1, 2, 3)]
    print(f"  {'pooled (recall: mean)':24s}", "   ".join(f"{p} / {r}" for p, r in zip(pooled, recall, strict=True)))


if __name__ == "__main__":
    raise SystemExit(main())
