"""Named arrays: how what a read derives from a memory is kept (a read index), and checked when it comes back.

A store keeps the arrays as they are given (numbers, booleans, fixed-width bytes; never objects). Whatever comes back
is checked before it is used: `take` gives the named array only when it has the expected type and shape, and raises
ValueError otherwise, so a damaged or foreign file is treated as no file at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import DTypeLike, NDArray

Arrays = Mapping[str, NDArray[Any]]


def take(arrays: Arrays, name: str, dtype: DTypeLike, shape: tuple[int | None, ...]) -> NDArray[Any]:
    """The array called `name`, checked: exactly this dtype, and this shape (None: any length on that axis)."""
    found = arrays.get(name)
    if found is None:
        raise ValueError(f"no array {name!r}")
    if found.dtype != np.dtype(dtype):
        raise ValueError(f"array {name!r} holds {found.dtype}, not {np.dtype(dtype)}")
    if found.ndim != len(shape) or any(
        want is not None and got != want for got, want in zip(found.shape, shape, strict=True)
    ):
        raise ValueError(f"array {name!r} has shape {found.shape}, not {shape}")
    return found
