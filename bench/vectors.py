"""Lesson vectors for benchmarks: all-MiniLM-L6-v2 through nightwatch's own encoder, kept on disk between runs.

Embedding LoCoMo's 5,882 turns takes about a minute on two cores; the vectors of a text never change, so they are
kept in bench/.cache/ (ignored by git), keyed by the hash of the text, and only new texts are encoded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from nightwatch.adapters.encoder import embeddings
from nightwatch.adapters.files import vector_file
from nightwatch.domain.memory.ports import READING
from nightwatch.domain.vectors import Matrix, VectorTable, vector_key

CACHE = Path(__file__).resolve().parent / ".cache" / "minilm.vectors"


class CachedEncoder:
    """The numpy MiniLM encoder, answering from a vector file for texts it has seen in earlier runs."""

    def __init__(self, cache: Path = CACHE) -> None:
        self.encoder = embeddings.MiniLMEncoder()
        self.cache = cache
        self.table = vector_file.decode(cache.read_bytes()) if cache.is_file() else VectorTable.empty()
        self.readings: dict[tuple[str, str], NDArray[np.float32]] = {}

    def embed(self, texts: Sequence[str]) -> Matrix:
        missing = self.table.missing(texts)
        if missing:
            known = len(self.table)
            self.table = self.table.with_texts(missing, self.encoder.embed(missing))
            self._save(known)
        return self.table.aligned([vector_key(text) for text in texts]).matrix

    def alignment(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        """The encoder's reading of each (older, newer) pair as one pair (the restatement judge's), each read once."""
        missing = [pair for pair in dict.fromkeys(pairs) if pair not in self.readings]
        if missing:
            self.readings.update(zip(missing, self.encoder.alignment(missing), strict=True))
        return np.array([self.readings[pair] for pair in pairs], dtype=np.float32).reshape(len(pairs), READING)

    def _save(self, known: int) -> None:
        self.cache.parent.mkdir(parents=True, exist_ok=True)
        if known and self.cache.is_file():
            with self.cache.open("ab") as handle:
                handle.write(vector_file.encode_records(self.table, list(self.table.keys[known:])))
        else:
            self.cache.write_bytes(vector_file.encode(self.table))


class EmbedOnly:
    """An encoder that only embeds: memory judges restatements by the rules alone with it."""

    def __init__(self, encoder: CachedEncoder) -> None:
        self.embed = encoder.embed
