"""Snapshots of a memory for ranking, each with its read index: kept in this process, kept beside the memory, or
derived from the text reusing the last index known.

The first read of a memory in a process is the costly one: a file of 10,000 lessons takes most of a second to parse,
analyse and index. So the read index of each text a read ranks is kept beside the memory (read_index.py), and a new
process loads it in milliseconds. When the text changed since (a write, a hand edit), the index is derived again
from the lines (derive.py), taking every line the last index knew as it was: one new lesson costs a scan of the
lines and a rebuild of the keyword index, not a parse of the file. A store that keeps no read index (the database)
is never asked to build one; an index that turns out not to fit its text is not used again.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

from nightwatch.domain.errors import NightWatchError
from nightwatch.domain.memory.cache import DocumentCache, Snapshot
from nightwatch.domain.memory.derive import derive
from nightwatch.domain.memory.derive import IndexedLessons
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.memory.read_index import ReadIndex, text_digest
from nightwatch.domain.models import Lesson
from nightwatch.domain.recall import Recall

log = logging.getLogger(__name__)

_KNOWN = 256  # memories whose last read index this process keeps to derive the next one from

Memory = tuple[str, str]  # (persona slug, project slug)


class MemoryReader:
    """Snapshots of memories for ranking, each with its read index (see the module docstring)."""

    def __init__(self, *, cache: DocumentCache, store: MemoryStore, recall: Recall) -> None:
        self._cache = cache
        self._store = store
        self._weights = recall.weights.keyword
        self._last: OrderedDict[Memory, ReadIndex] = OrderedDict()
        self._distrusted: set[Memory] = set()  # memories whose index did not fit: the next one starts from nothing
        self._lock = threading.Lock()

    def ranked(self, persona_slug: str, project: str) -> Snapshot:
        """The memory as it is now, with its read index: cached, else kept beside it, else derived (and kept)."""
        text = self._store.read(persona_slug, project)
        known = self._cache.cached(persona_slug, project, text)
        if known is not None and known.index is not None:
            return known
        memory = (persona_slug, project)
        index, parsed = self._index(memory, text)
        if known is not None:
            snap = known.with_index(index)
        else:
            where = f"{persona_slug}'s memory of {project}"
            lessons = IndexedLessons(text, index, where, lambda: self._distrust(memory, snap), parsed)
            snap = Snapshot(text, lessons, index=index)
        with self._lock:
            self._last[memory] = index
            self._last.move_to_end(memory)
            while len(self._last) > _KNOWN:
                self._last.popitem(last=False)
        return self._cache.put(persona_slug, project, snap)

    def _index(self, memory: Memory, text: str) -> tuple[ReadIndex, dict[int, Lesson]]:
        """The text's read index: the last one known or the one kept beside it when made for it, else derived."""
        digest = text_digest(text)
        with self._lock:
            start_over = memory in self._distrusted
            last = None if start_over else self._last.get(memory)
        if last is not None and last.fits(text, digest):
            return last, {}
        kept = None if start_over or not text else self._kept(memory, digest, need_any=last is None)
        if kept is not None and kept.fits(text, digest):
            return kept, {}
        derived = derive(text, digest, last or kept, self._weights)
        if text:
            self._keep(memory, derived.index)
        with self._lock:
            self._distrusted.discard(memory)
        return derived.index, derived.lessons

    def _kept(self, memory: Memory, digest: str, *, need_any: bool) -> ReadIndex | None:
        """The index kept beside the memory: any usable one when `need_any`, else only one made for this digest."""
        try:
            arrays = self._store.read_index(*memory)
            if not arrays:
                return None
            if not need_any and arrays["digest"].item() != digest.encode("ascii"):
                return None  # another text's, and the last index known here serves as well to derive from
            return ReadIndex.from_arrays(arrays, self._weights)
        except (ValueError, KeyError) as err:
            log.debug("The read index of %s/%s is not used (%s)", *memory, err)
            return None

    def _keep(self, memory: Memory, index: ReadIndex) -> None:
        """Keep the index beside the memory; a failure only costs the next process a derivation."""
        try:
            self._store.save_index(*memory, index.arrays)
        except NightWatchError as err:
            log.warning("Could not keep the read index of %s/%s (%s); reads derive it instead", *memory, err)

    def _distrust(self, memory: Memory, snap: Snapshot) -> None:
        """An index whose lines do not hold its lessons: dropped, and the next one is derived from nothing."""
        with self._lock:
            self._distrusted.add(memory)
            self._last.pop(memory, None)
        self._cache.drop(*memory, snap)
