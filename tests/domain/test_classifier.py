"""The learned yes or no: fitted, kept as JSON and read back, refused when its weights do not fit together."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nightwatch.domain.classifier import Logistic, fit


def test_it_learns_which_side_of_a_line_says_yes_and_keeps_it_through_json() -> None:
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(400, 2))
    model = fit(rows, rows[:, 0] + 0.2 * rows[:, 1] > 0.5, ("first", "second"), threshold=0.5)
    assert model.says([2.0, 0.0])
    assert not model.says([-1.0, 0.0])
    assert model.probability([3.0, 0.0]) > 0.9 > 0.1 > model.probability([-2.0, 0.0])
    again = Logistic.from_json(model.to_json())
    assert again.features == ("first", "second")
    assert again.probability([0.7, -0.3]) == pytest.approx(model.probability([0.7, -0.3]), abs=1e-4)


@pytest.mark.parametrize(
    "change",
    [{"mean": [0.0]}, {"scale": [1.0, 0.0]}, {"weights": [1.0, 2.0, 3.0]}],
    ids=["a mean missing", "a scale of zero", "a weight too many"],
)
def test_weights_that_do_not_fit_together_are_refused(change: dict[str, list[float]]) -> None:
    body = {"features": ["a", "b"], "mean": [0.0, 0.0], "scale": [1.0, 1.0], "weights": [1.0, 1.0], "bias": 0.0,
            "threshold": 0.5}  # fmt: skip
    with pytest.raises(ValueError, match="2 features"):
        Logistic.from_json(json.dumps({**body, **change}))


def test_a_figure_that_never_varies_in_the_fit_weighs_nothing_and_the_weights_still_load() -> None:
    rng = np.random.default_rng(3)
    varying = rng.normal(size=400)
    rows = np.column_stack([varying, np.zeros(400)])  # the second figure is 0 in every row fitted on
    model = Logistic.from_json(fit(rows, varying > 0, ("varies", "constant"), threshold=0.5).to_json())
    assert model.scale[1] == 1.0
    assert model.says([1.0, 0.0])
    assert model.probability([1.0, 5.0]) == pytest.approx(model.probability([1.0, 0.0]), abs=1e-6)
