"""What recall needs from outside: an encoder that turns texts into unit vectors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np
from numpy.typing import NDArray


class Embedder(Protocol):
    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Return one unit vector per text, as the rows of a (len(texts), dimensions) float32 matrix, in order."""
        ...


class Succession(Protocol):
    def replaces(self, older: str, newer: str, similarity: float) -> bool:
        """Whether `newer` updates `older` (the same point with a specific changed, or reversed), given their cosine."""
        ...

    def retires(
        self, older: str, newer: str, similarity: float, *, ranked_below: bool = False, first_two: bool = False
    ) -> bool:
        """Whether `newer` replaces `older` so surely that `older` may go: the same things with a specific changed.
        `ranked_below`: for the question being read, `older` ranks below `newer` on its own; `first_two`: the two
        are the question's two best answers."""
        ...
