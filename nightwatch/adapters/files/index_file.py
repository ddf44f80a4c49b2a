"""The bytes of a memory's read index (`main.index` beside `main.md`): numpy's .npz of named arrays, not compressed.

An .npz is a zip of .npy files, each with its own CRC-32, so a damaged or cut-off file fails to load rather than
loading wrong values; object arrays are refused (no pickles). Whatever fails to load reads as no index: the domain
then parses the memory and a new index replaces this one (see domain/memory/read_index.py). What the arrays mean is
the domain's business; this module only keeps them.
"""

from __future__ import annotations

import io
import tokenize
import zipfile
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from nightwatch.domain.arrays import Arrays

# What numpy's loader raises on damaged bytes: a broken zip or CRC, a cut-off member, an .npy header that does not
# parse (a literal_eval or tokenize error), a compression method zipfile does not know, a huge shape in a header.
_DAMAGED = (
    ValueError,
    SyntaxError,
    EOFError,
    OSError,
    KeyError,
    NotImplementedError,
    MemoryError,
    RecursionError,
    zipfile.BadZipFile,
    tokenize.TokenError,
)


def encode(arrays: Arrays) -> bytes:
    """The file for these arrays."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:  # what np.savez writes, without pickles
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
    return buffer.getvalue()


def decode(data: bytes) -> Mapping[str, NDArray[Any]]:
    """The arrays a file holds, each read when first asked for; empty when the file holds none (no file, another
    format, cut off). An array found damaged only when read raises ValueError, which the domain takes as no index."""
    if not data:
        return {}
    try:
        found = np.load(io.BytesIO(data), allow_pickle=False)
    except _DAMAGED:
        return {}
    if not isinstance(found, np.lib.npyio.NpzFile):
        return {}  # a single .npy array, not a set of named ones
    return _Members(found)


class _Members(Mapping[str, NDArray[Any]]):
    """The arrays of one .npz, each loaded (and its CRC checked) when first asked for."""

    def __init__(self, archive: np.lib.npyio.NpzFile) -> None:
        self._archive = archive
        self._names = frozenset(archive.files)
        self._loaded: dict[str, NDArray[Any]] = {}

    def __getitem__(self, name: str) -> NDArray[Any]:
        if name not in self._loaded:
            if name not in self._names:
                raise KeyError(name)
            try:
                self._loaded[name] = self._archive[name]
            except _DAMAGED as err:
                raise ValueError(f"the array {name!r} is damaged ({err})") from err
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names))

    def __len__(self) -> int:
        return len(self._names)
