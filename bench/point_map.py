"""The point map, fitted and measured: `python -m bench.point_map [--save]`.

Two lessons are compared as one point by the larger of their cosine and their cosine under a learned linear map of
the encoder's space (`domain.vectors`, `point_map.npy`). The map starts as the identity and is fitted by gradient
descent (Adam, a logistic loss on the mapped cosine) over every two lessons of one case of the tune files: a stale
lesson and its successor, and a restatement pair, should read close; a look-alike pair and any other two lessons at a
cosine of 0.2 or more should not (positives weighed up to as many as the negatives), with a pull back towards the
identity so that what the tune files do not show stays as the encoder reads it.

Without --save: four folds over the tune files (a quarter held out in turn, fitted on the rest). For each held-out
quarter it prints how many stale and successor pairs, restatement pairs and look-alike pairs read at least as close as
the cosine's 0.45 would let through, at the mapped cosine's threshold that lets as many other pairs through (so a
gain is not bought by letting everything through). --write-path runs the held-out files through the write path
instead (`bench.write_path`, every lesson remembered in date order, each question read), once comparing by the
cosine alone (round 25's reading) and once under the map fitted without them, side by side, pooled per fold and over
the folds run (--folds, the first N of the four; about ten minutes a fold). --save fits on every tune file and writes
the shipped map. Never run on bench/data/blind or on a file kept back to judge a change.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bench.retrieval_data import Case, load
from bench.vectors import CachedEncoder
from bench.write_path import Counts, tally
from nightwatch.domain.vectors import point_map_as

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"
SAVED = ROOT / "nightwatch" / "domain" / "point_map.npy"
TUNE = ("tune_extra", "tune_extra2", *(f"tune_more_{n}" for n in range(1, 47)))  # 47.. judge the map, never fit it
FLOOR = 0.2  # other pairs from this cosine up are the negatives (below it the encoder already keeps them apart)
PULL, STEPS, RATE = 1e-2, 100, 3e-3  # the pull towards the identity, Adam's steps and step size
OTHER, LOOK_ALIKE, STALE, RESTATEMENT = 1, 2, 3, 4  # the kinds of pair
CHECKED = 0.45  # the cosine from which curation and reading compare two lessons


@dataclass(frozen=True)
class Pairs:
    """The cases of some files as padded tensors: vectors (case, lesson, dim) and each pair's kind (0: not used)."""

    vectors: np.ndarray
    kinds: np.ndarray

    @property
    def close(self) -> np.ndarray:
        return (self.kinds >= STALE).astype(np.float64)

    @property
    def used(self) -> np.ndarray:
        return (self.kinds > 0).astype(np.float64)


def pairs(cases: list[Case], encoder: CachedEncoder, size: int) -> Pairs:
    vectors = np.zeros((len(cases), size, encoder.encoder.dimensions))
    kinds = np.zeros((len(cases), size, size), dtype=np.int8)
    for c, case in enumerate(cases):
        at = {memory.id: i for i, memory in enumerate(case.memories)}
        when = {memory.id: memory.recorded_at for memory in case.memories}
        found = np.asarray(encoder.embed([memory.text for memory in case.memories]), dtype=np.float64)
        n = len(found)
        vectors[c, :n] = found
        upper = np.triu((found @ found.T) >= FLOOR, 1)
        kind = np.where(upper, OTHER, 0).astype(np.int8)
        labelled = [(case.not_duplicates, LOOK_ALIKE), (case.duplicates, RESTATEMENT)]
        updates = [(s, r) for q in case.queries for s in q.stale for r in q.relevant if s in at and r in at]
        labelled.append(([(s, r) for s, r in updates if when[s] < when[r]], STALE))
        for found_pairs, label in labelled:
            for a, b in found_pairs:
                if a in at and b in at and a != b:
                    kind[min(at[a], at[b]), max(at[a], at[b])] = label
        kinds[c, :n, :n] = kind
    return Pairs(vectors, kinds)


def mapped(vectors: np.ndarray, space: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each case's cosines under `space`, with the mapped unit vectors and their lengths before scaling."""
    z = vectors @ space
    length = np.linalg.norm(z, axis=2, keepdims=True) + 1e-9
    units = z / length
    return units @ units.transpose(0, 2, 1), units, length


def fit(data: Pairs, pull: float = PULL, steps: int = STEPS, rate: float = RATE) -> np.ndarray:
    """The map, from the identity, by Adam on the weighted logistic loss of (scale * mapped cosine + bias)."""
    dims = data.vectors.shape[2]
    identity = np.eye(dims)
    space, scale, bias = identity.copy(), 10.0, -5.0
    close, used = data.close, data.used
    positives = (close * used).sum()
    weight = used * np.where(close == 1, (used.sum() - positives) / positives, 1.0)
    weight /= weight.sum()
    first = [np.zeros_like(space), 0.0, 0.0]
    second = [np.zeros_like(space), 0.0, 0.0]
    for step in range(1, steps + 1):
        cosines, units, length = mapped(data.vectors, space)
        chance = 1.0 / (1.0 + np.exp(-np.clip(scale * cosines + bias, -30, 30)))
        slope = (chance - close) * weight
        toward = slope * scale
        d_units = (toward + toward.transpose(0, 2, 1)) @ units
        d_z = (d_units - units * (d_units * units).sum(2, keepdims=True)) / length
        grads = [np.einsum("cnd,cnk->dk", data.vectors, d_z) + pull * (space - identity)]
        grads += [float((slope * cosines).sum()), float(slope.sum())]
        moved = []
        for i, grad in enumerate(grads):
            first[i] = 0.9 * first[i] + 0.1 * grad
            second[i] = 0.999 * second[i] + 0.001 * grad * grad
            moved.append(rate * (first[i] / (1 - 0.9**step)) / (np.sqrt(second[i] / (1 - 0.999**step)) + 1e-8))
        space, scale, bias = space - moved[0], scale - moved[1], bias - moved[2]
    return space.astype(np.float32)


def through(data: Pairs, space: np.ndarray) -> dict[str, str]:
    """How many pairs of each kind the mapped cosine lets through, at as many other pairs as the cosine's CHECKED."""
    raw = data.vectors @ data.vectors.transpose(0, 2, 1)
    learned = mapped(data.vectors, space)[0]
    others = (data.kinds == OTHER) | (data.kinds == LOOK_ALIKE)
    let = int((raw[others] >= CHECKED).sum())
    threshold = np.sort(learned[others])[::-1][let - 1]
    out = {"others through": f"{let}", "mapped threshold": f"{threshold:.3f}"}
    for label, kind in (("stale and successor", STALE), ("restatements", RESTATEMENT), ("look-alikes", LOOK_ALIKE)):
        chosen = data.kinds == kind
        before, after = int((raw[chosen] >= CHECKED).sum()), int((learned[chosen] >= threshold).sum())
        out[label] = f"{before} -> {after} of {int(chosen.sum())}"
    return out


def figures(counts: Counts) -> str:
    """Merged / kept apart / stale left out / block recall, with what each is out of."""
    report = counts.report()
    return (
        f"{report['duplicates_merged']:.3f} / {report['not_duplicates_kept']:.3f} / {report['stale_left_out']:.3f} / "
        f"{report['block_recall']:.4f} (of {counts.duplicates} restatements, {counts.not_duplicates} look-alikes, "
        f"{counts.stale} stale lessons, {counts.queries} questions)"
    )


def write_path(held: list[Path], space: np.ndarray, encoder: CachedEncoder) -> Counts:
    """The write path's counts over the files `held`, comparing lessons as one point under `space`."""
    total = Counts()
    with point_map_as(space):
        for path in held:
            total = total.plus(tally(str(path), encoder=encoder))
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fit the point map on the tune files; folds, or --save.")
    parser.add_argument("--save", action="store_true", help="fit on every tune file and write the shipped map")
    parser.add_argument("--write-path", action="store_true", help="held-out files through the write path, both ways")
    parser.add_argument("--folds", type=int, choices=range(1, 5), default=4, help="how many of the four folds to run")
    args = parser.parse_args(argv)
    encoder = CachedEncoder()
    files = {name: load(str(DATA / f"{name}.jsonl")) for name in TUNE}
    size = max(len(case.memories) for cases in files.values() for case in cases)
    if args.save:
        space = fit(pairs([case for cases in files.values() for case in cases], encoder, size))
        np.save(SAVED, space)
        print(f"wrote {SAVED.relative_to(ROOT)}: fitted on the cases of {len(files)} tune files")
        return 0
    names = list(files)
    identity, pooled = np.eye(encoder.encoder.dimensions), {"cosine alone": Counts(), "with the map": Counts()}
    for fold in range(args.folds):
        held = names[fold::4]
        fitted = fit(pairs([c for n in names if n not in held for c in files[n]], encoder, size))
        if not args.write_path:
            found = through(pairs([c for n in held for c in files[n]], encoder, size), fitted)
            shown = "; ".join(f"{key} {value}" for key, value in found.items())
            print(f"fold {fold + 1} of 4 ({len(held)} files held out): {shown}")
            continue
        print(f"fold {fold + 1} of 4, held out: {', '.join(held)}")
        for label, space in (("cosine alone", identity), ("with the map", fitted)):
            counts = write_path([DATA / f"{name}.jsonl" for name in held], space, encoder)
            pooled[label] = pooled[label].plus(counts)
            print(f"  {label:>13}: {figures(counts)}", flush=True)
    if args.write_path:
        print(f"the {args.folds} folds pooled, merged / kept apart / stale left out / block recall:")
        for label, counts in pooled.items():
            print(f"  {label:>13}: {figures(counts)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
