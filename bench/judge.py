"""Curation's learned restatement judge, fitted and measured: `python -m bench.judge [--save]`.

The pairs are bench.pair_classifier's (every memory of a tune file against its nearest earlier memories, labelled from
the file's own labels). Each gets the judge's figures (`memory.vectors.signals`: the cosine, the rules' verdict and
checks, how the two lessons' words align when the encoder reads them as one pair, and since round 19 whether the two
state an amount, a name or a value in common: "three times" and "3x", 1800 and "1,800"), and a logistic regression
(`domain.classifier`) learns restatement or not. Leave-one-file-out: fitted on every tune file but one, judged on
that one, pair by pair and through the write path (bench.write_path: the product's own code, with the fold's weights),
beside the rules alone. --signals N weighs only the first N figures (the rest are zeroed before fitting, so they weigh
nothing): `--signals 16` is the judge before round 19, without the three figures of what both state; `--signals 13`
also leaves out the three of what the two lessons say apart (the judge before round 15).
--save fits on every tune file and writes the weights the product ships. Never run on bench/data/blind.
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
THRESHOLD = 0.55  # a restatement from this probability up (chosen on the leave-one-file-out write path)


def rows_of(found: list[Pair], encoder: CachedEncoder) -> np.ndarray:
    readings = encoder.alignment([(pair.older, pair.newer) for pair in found])
    return np.array(
        [vectors.signals(p.older, p.cosine, p.newer, r.tolist()) for p, r in zip(found, readings, strict=True)]
    )


def fitted(
    names: list[str], rows: dict[str, np.ndarray], yes: dict[str, np.ndarray], signals: int | None = None
) -> Logistic:
    """Fitted on the named files' pairs; with `signals`, only the first that many figures weigh anything."""
    x = np.vstack([rows[n] for n in names])
    if signals is not None:
        x[:, signals:] = 0.0  # a figure that never varies gets weight 0 (domain.classifier.fit)
    return fit(x, np.concatenate([yes[n] for n in names]), vectors.SIGNALS, THRESHOLD)


@contextmanager
def judging_by(model: Logistic) -> Iterator[None]:
    """The memory room's judge is `model` while the block runs."""
    shipped = vectors.judge
    vectors.judge = lambda: model  # type: ignore[assignment]
    try:
        yield
    finally:
        vectors.judge = shipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Leave-one-file-out: curation's restatement judge against the rules.")
    parser.add_argument("--save", action="store_true", help="fit on every tune file and write the shipped weights")
    parser.add_argument("--signals", type=int, help="weigh only the first N of the judge's figures")
    args = parser.parse_args(argv)
    save, signals = args.save, args.signals
    encoder = CachedEncoder()
    files = {
        name: [pair for case in load(str(pc.DATA / name)) if case.split == "tune" for pair in pc.pairs(case, encoder)]
        for name in pc.TUNE
    }
    rows = {name: rows_of(found, encoder) for name, found in files.items()}
    yes = {name: np.array([pair.label == pc.RESTATES for pair in found]) for name, found in files.items()}
    if save:
        WEIGHTS.write_text(fitted(list(rows), rows, yes, signals).to_json(), encoding="utf-8")
        print(f"wrote {WEIGHTS.relative_to(ROOT)}: fitted on {sum(map(len, rows.values()))} pairs of {len(rows)} files")
        return 0
    rules, judged, written = np.zeros(6), np.zeros(6), []
    for held_out, found in files.items():
        model = fitted([name for name in files if name != held_out], rows, yes, signals)
        p = np.zeros((len(found), 3))
        p[:, pc.RESTATES] = [model.probability(row) for row in rows[held_out]]
        rules += pc.figures(found, pc.rule_actions(found))
        judged += pc.figures(found, pc.hybrid_actions(found, p, THRESHOLD))
        path, split = str(pc.DATA / held_out), "tune" if held_out == pc.TUNE[0] else None
        with contextlib.redirect_stderr(io.StringIO()):  # the redaction backstop's warning, as in bench.retrieval
            alone = measure(path, split=split, encoder=encoder, judged=False)
            with judging_by(model):
                learned = measure(path, split=split, encoder=encoder)
        written.append((held_out, alone, learned))
    _report(rules, judged, written)
    return 0


def _report(rules: np.ndarray, judged: np.ndarray, written: list[tuple[str, dict[str, Any], dict[str, Any]]]) -> None:
    def line(label: str, counts: np.ndarray) -> str:
        merged, apart, seen = counts[0] / counts[1], counts[2] / counts[3], counts[4] / counts[5]
        return f"{label:34s} merged {merged:.3f}  kept apart {apart:.3f}  updates seen {seen:.3f}"

    print(f"restatement judge, leave-one-file-out over {len(written)} tune files (pairs, pooled):")
    print(line("rules (in sample)", rules))
    print(line(f"judge, restatement at p >= {THRESHOLD}", judged))
    keys = ("duplicates_merged", "not_duplicates_kept", "stale_left_out", "block_recall")
    print("write path per held-out file (merged / kept apart / stale left out / block recall), rules then judge:")
    for name, alone, learned in written:
        cells = [" / ".join(f"{run[k]:.3f}" for k in keys) for run in (alone, learned)]
        print(f"  {name:24s} {cells[0]}   {cells[1]}")
    pooled = [" / ".join(f"{pc._pooled([run[i] for run in written], k):.3f}" for k in keys[:3]) for i in (1, 2)]
    print(f"  {'pooled':24s} {pooled[0]}           {pooled[1]}")


if __name__ == "__main__":
    raise SystemExit(main())
