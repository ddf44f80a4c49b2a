"""Snapshots for reading a memory: cached in this process, else from the read index kept beside it, else parsed.

The first read of a memory in a process is the costly one: a file of 10,000 lessons takes most of a second to parse,
analyse and index. So what a read derives is kept beside the memory (read_index.py) by the read that derived it,
and a new process loads it in milliseconds. An index that does not fit the text (a hand edit, another process's
write, a damaged file) is ignored: that read parses as it would without one, and keeps a new index. A store that
keeps no read index (the database) is never asked to build one.
"""

from __future__ import annotations

import logging
import threading

from nightwatch.domain.errors import NightWatchError
from nightwatch.domain.memory.cache import DocumentCache, Snapshot
from nightwatch.domain.memory.read_index import IndexedLessons, ReadIndex, text_digest
from nightwatch.domain.ports import MemoryStore
from nightwatch.domain.recall import Recall, RecallIndex

log = logging.getLogger(__name__)


class MemoryReader:
    """Snapshots of memories for reads, and the recall index of each, kept beside the memory once worked out."""

    def __init__(self, *, cache: DocumentCache, store: MemoryStore, recall: Recall) -> None:
        self._cache = cache
        self._store = store
        self._recall = recall
        self._distrusted: set[str] = set()  # digests of read indexes found not to match their text
        self._lock = threading.Lock()

    def snapshot(self, persona_slug: str, project: str) -> Snapshot:
        """The memory as it is now: the cached snapshot of its text, else one from its read index, else its parse."""
        text = self._store.read(persona_slug, project)
        known = self._cache.cached(persona_slug, project, text)
        if known is not None:
            return known
        snap = self._indexed(persona_slug, project, text) or Snapshot.parsed(text)
        return self._cache.put(persona_slug, project, snap)

    def prepared(self, persona_slug: str, project: str, snap: Snapshot) -> RecallIndex:
        """The recall index of the snapshot's live lessons; one worked out here is kept beside the memory."""
        prepared = snap.prepared
        if prepared is None:
            prepared = snap.prepared = self._recall.prepare(snap.live)
        if not snap.kept:
            snap.kept = True  # tried once per text: a store that cannot keep it is not asked at every read
            self._keep(persona_slug, project, snap, prepared)
        return prepared

    def _indexed(self, persona_slug: str, project: str, text: str) -> Snapshot | None:
        """A snapshot from the read index kept beside the memory, when there is one made for this text."""
        if not text:
            return None
        try:
            arrays = self._store.read_index(persona_slug, project)
            if not arrays:
                return None
            index = ReadIndex.from_arrays(arrays, text, self._recall.weights.keyword)
        except ValueError as err:
            log.debug("The read index of %s/%s is not used (%s); the text is parsed", persona_slug, project, err)
            return None
        with self._lock:
            if index.digest in self._distrusted:
                return None
        where = f"{persona_slug}'s memory of {project}"
        lessons = IndexedLessons(text, index, where, lambda: self._distrust(persona_slug, project, snap, index.digest))
        snap = Snapshot(text, lessons, keys=index.vector_keys(), prepared=index.recall)
        self._recall.adopt(index.lesson_ids(), index.recall)
        return snap

    def _keep(self, persona_slug: str, project: str, snap: Snapshot, prepared: RecallIndex) -> None:
        """Keep the snapshot's read index beside the memory; a failure only costs the next process a parse."""
        if not snap.text:
            return
        if self._distrusted:
            with self._lock:
                self._distrusted.discard(text_digest(snap.text))  # the index kept now is made from the text itself
        try:
            self._store.save_index(
                persona_slug, project, lambda: ReadIndex.of(snap.text, snap.doc, snap.keys, prepared).arrays()
            )
        except NightWatchError as err:
            log.warning(
                "Could not keep the read index of %s/%s (%s); reads parse it instead", persona_slug, project, err
            )

    def _distrust(self, persona_slug: str, project: str, snap: Snapshot, digest: str) -> None:
        """A read index whose lines do not match its text: not used again; the next read parses and replaces it."""
        with self._lock:
            self._distrusted.add(digest)
        self._cache.drop(persona_slug, project, snap)
