"""A learned yes or no over a few figures: a logistic regression kept as JSON weights beside the code that asks it.

Fitted by a script from tune data only (curation's restatement judge: `python -m bench.judge --save`); asking it
needs only numpy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
from numpy.typing import NDArray

Floats = NDArray[np.float64]


@dataclass(frozen=True)
class Logistic:
    """p(yes) = sigmoid(((x - mean) / scale) · weights + bias), one figure of x per name in `features`; yes from
    `threshold` up."""

    features: tuple[str, ...]
    mean: Floats
    scale: Floats
    weights: Floats
    bias: float
    threshold: float

    @classmethod
    def from_json(cls, text: str) -> Logistic:
        raw = json.loads(text)
        features = tuple(str(name) for name in raw["features"])
        mean, scale, weights = (np.asarray(raw[key], dtype=np.float64) for key in ("mean", "scale", "weights"))
        if any(array.shape != (len(features),) for array in (mean, scale, weights)) or not np.all(scale > 0):
            raise ValueError(f"weights for {len(features)} features must give as many means, scales and weights")
        return cls(features, mean, scale, weights, float(raw["bias"]), float(raw["threshold"]))

    @classmethod
    def packaged(cls, package: str, name: str) -> Logistic:
        """The weights shipped as `name` inside `package`."""
        return cls.from_json(resources.files(package).joinpath(name).read_text(encoding="utf-8"))

    def to_json(self) -> str:
        numbers = {key: [round(float(x), 6) for x in getattr(self, key)] for key in ("mean", "scale", "weights")}
        body = {"features": list(self.features), **numbers, "bias": round(self.bias, 6), "threshold": self.threshold}
        return "{\n" + ",\n".join(f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in body.items()) + "\n}\n"

    def probability(self, figures: Sequence[float]) -> float:
        z = (np.asarray(figures, dtype=np.float64) - self.mean) / self.scale
        return float(1.0 / (1.0 + np.exp(-(z @ self.weights + self.bias))))

    def says(self, figures: Sequence[float]) -> bool:
        return self.probability(figures) >= self.threshold


def fit(
    rows: Floats, yes: NDArray[np.bool_], features: Sequence[str], threshold: float, penalty: float = 1.0
) -> Logistic:
    """Fit by full-batch gradient descent on standardised figures with an L2 penalty (2,000 steps)."""
    spread = rows.std(0)
    mean, scale = rows.mean(0), np.where(spread > 1e-6, spread, 1.0)  # a figure that never varies weighs nothing
    z, target = (rows - mean) / scale, yes.astype(np.float64)
    weights, bias = np.zeros(z.shape[1]), 0.0
    for _ in range(2000):
        gradient = 1.0 / (1.0 + np.exp(-(z @ weights + bias))) - target
        weights -= 0.5 * (z.T @ gradient + penalty * weights) / len(target)
        bias -= 0.5 * float(gradient.mean())
    return Logistic(tuple(features), mean, scale, weights, bias, threshold)
