"""Pinned context: documents (a file, a web page, a text) pinned to a persona's prompt for one project, or to all.

Not to be confused with a pinned lesson (📌 in a memory file), which is one of the persona's own notes that recall
always injects: a pin here is a whole document a person chose, injected in a block of its own before memory.

A pin stores a snapshot of its source (redacted where it was read), so every replica injects the same text without
reading anything. A file's snapshot follows the file: before each turn the file is stat-ed and, when it changed, read
again, so the next turn sees the edit (the Slack app also watches the files, see adapters/pins/watch.py); a file that
is gone is flagged missing, and one that can no longer be read (now a link, a folder, too large, not text) is flagged
unreadable, each keeping its last content, marked stale in the prompt, until it is back or unpinned. A page is
fetched once, when pinned, and again only when asked (`refresh`, or pinning it again). Nothing about a pin ever
fails a turn: a problem is flagged and the turn goes on.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Collection
from dataclasses import dataclass, replace

from nightwatch.domain.errors import InvalidInputError, NightWatchError, NotFoundError, StorageError
from nightwatch.domain.models import Persona
from nightwatch.domain.names import project_slug
from nightwatch.domain.pins.block import PinBlock, label_of, pack
from nightwatch.domain.pins.inputs import (
    EVERY_PERSONA,
    PINS_MAX,
    pin_key,
    pin_title,
    snapshot_hash,
    validate_pin_id,
)
from nightwatch.domain.pins.models import Pin, PinKind, PinStatus
from nightwatch.domain.pins.ports import PinFiles, PinPages, PinRepository, PinSnapshot
from nightwatch.domain.ports import Clock, PersonaLookup
from nightwatch.domain.tokens import estimate_tokens

log = logging.getLogger(__name__)

DEFAULT_BUDGET = 1500


@dataclass(frozen=True)
class PinOutcome:
    """What adding or refreshing a pin did, and a message for a person."""

    pin: Pin
    message: str
    new: bool = False
    ok: bool = True  # False: the source could not be read (the pin keeps its snapshot)


@dataclass(frozen=True)
class PinView:
    """A pin as `pin list` shows it: whose it is (None: every persona of the project) and its size."""

    pin: Pin
    persona: str | None
    tokens: int

    @property
    def label(self) -> str:
        return label_of(self.pin)


class PinService:
    """Adds, lists, removes and refreshes pins, and packs a persona's pins into the block its turns get."""

    def __init__(
        self,
        *,
        pins: PinRepository,
        personas: PersonaLookup,
        files: PinFiles,
        pages: PinPages,
        clock: Clock,
        token_budget: int = DEFAULT_BUDGET,
        max_pins: int = PINS_MAX,
    ) -> None:
        self._pins = pins
        self._personas = personas
        self._files = files
        self._pages = pages
        self._clock = clock
        self._budget = token_budget
        self._max = max_pins

    @property
    def token_budget(self) -> int:
        return self._budget

    # --- use cases ----------------------------------------------------------------------------------------------

    def add(
        self, persona: str | None, project: str, kind: PinKind, value: str, *, added_by: str, anywhere: bool = False
    ) -> PinOutcome:
        """Pin a file, page or text for `persona` (None or "all": every persona) on `project`.

        A file is read now (`anywhere`: see PinFiles.read), a page fetched now; pinning the same source again
        re-reads it. Nothing is stored when the source cannot be read.
        """
        owner = self._owner(persona)
        slug = project_slug(project)
        snapshot = self._read(kind, value, anywhere=anywhere)
        now = self._clock.now()
        pin = Pin(
            persona_id=owner.id if owner is not None else None,
            project=slug,
            kind=kind,
            source=snapshot.source,
            content=snapshot.text,
            content_hash=snapshot_hash(snapshot.text),
            read_at=now,
            added_by=added_by,
            status_since=now,
            stamp=snapshot.stamp,
            created_at=now,
        )
        key = pin_key(kind, pin.source, pin.content)
        if not any(pin_key(p.kind, p.source, p.content) == key for p in self._scope(pin)):
            self._refuse_over_limit(pin, owner)
        stored, new = self._pins.add(pin, key)
        whose = owner.name if owner is not None else f"every persona of {slug}"
        tokens = f"{estimate_tokens(stored.content):,} tokens"
        if new:
            return PinOutcome(stored, f"Pinned {label_of(stored)} for {whose} as #{stored.id} ({tokens}).", True)
        again = "already pinned" if kind is PinKind.TEXT else "re-read"
        return PinOutcome(stored, f"Pin #{stored.id} for {whose} is {again}: {label_of(stored)} ({tokens}).")

    def list(self, persona: str | None = None, project: str | None = None) -> builtins.list[PinView]:
        """Every pin, oldest first; or one persona's (its own and the project-wide ones), or only the latter ("all").

        Each file is checked against the disk first, so a file deleted or edited since is shown as it is now.
        """
        slug = project_slug(project) if project is not None else None
        pins = self._pins.list(project=slug)
        if persona is not None and persona.strip().lower() == EVERY_PERSONA:
            pins = [pin for pin in pins if pin.shared]
        elif persona is not None:
            found = self._personas.get(persona)
            pins = [pin for pin in pins if pin.shared or pin.persona_id == found.id]
        names = {p.id: p.name for p in self._personas.list()}
        pins = [self.current(pin) for pin in pins]
        return [PinView(pin, names.get(pin.persona_id), estimate_tokens(pin.content)) for pin in pins]

    def remove(self, pin_id: int) -> Pin:
        """Unpin; NotFoundError when there is no such pin. Numbers are never reused (PinRepository.add)."""
        removed = self._pins.remove(validate_pin_id(pin_id))
        if removed is None:  # a removed pin's number is never given again, so this never reaches a newer pin
            raise NotFoundError(
                f"There is no pin #{pin_id} (removed already, or never made); `pin list` shows the pins and their "
                "numbers."
            )
        return removed

    def refresh(self, pin_id: int | None = None) -> builtins.list[PinOutcome]:
        """Read every file pin again and fetch every page again (or only pin `pin_id`); texts stay as they are.

        A page that cannot be fetched keeps its snapshot, and the outcome says why.
        """
        if pin_id is not None:
            pin = self._pins.get(validate_pin_id(pin_id))
            if pin is None:
                raise NotFoundError(f"There is no pin #{pin_id}; `pin list` shows the pins and their numbers.")
            pins = [pin]
        else:
            pins = [pin for pin in self._pins.list() if pin.kind is not PinKind.TEXT]
        return [self._refreshed(pin) for pin in pins]

    # --- turns and the file watch -------------------------------------------------------------------------------

    def block(self, persona: Persona, project: str, *, budget: int | None = None) -> PinBlock:
        """The pins `persona` gets on `project`, each file checked against the disk, packed under `budget` tokens.

        None takes this service's own budget; a deliberation passes the one it started with (a reload may change it).
        """
        budget = self._budget if budget is None else budget
        if persona.id is None:
            return PinBlock(budget=budget)
        pins = self._pins.for_persona(persona.id, project_slug(project))
        return pack([self.current(pin) for pin in pins], budget)

    def opened(self, sharer: Persona, receiver: Persona, project: str) -> builtins.list[Pin]:
        """`sharer`'s own pins on `project` that a share opens to `receiver`: each file checked against the disk as
        `sharer`'s own turn checks it (`current`), less those `receiver` gets itself (the same file, page or text
        among its own pins and the project-wide ones, which every persona gets already).
        """
        if sharer.id is None or receiver.id is None:
            return []
        slug = project_slug(project)
        own = [pin for pin in self._pins.for_persona(sharer.id, slug) if pin.persona_id == sharer.id]
        if not own:
            return []
        theirs = {pin_key(pin.kind, pin.source, pin.content) for pin in self._pins.for_persona(receiver.id, slug)}
        kept = (pin for pin in own if pin_key(pin.kind, pin.source, pin.content) not in theirs)
        return [self.current(pin) for pin in sorted(kept, key=lambda pin: pin.id or 0)]

    def watched_files(self) -> builtins.list[str]:
        """The path of every file pin, for the file watch."""
        return sorted({pin.source for pin in self._pins.list(kind=PinKind.FILE)})

    def changed(self, paths: Collection[str]) -> int:
        """Bring the file pins of these paths up to date (a watch saw them change); returns how many changed."""
        wanted = set(paths)
        pins = [pin for pin in self._pins.list(kind=PinKind.FILE) if pin.source in wanted]
        return sum(1 for pin in pins if self.current(pin) != pin)

    def current(self, pin: Pin, *, again: bool = False) -> Pin:
        """The pin as its file is now: read again if it changed (or `again`), flagged if it is gone or unreadable."""
        if pin.kind is not PinKind.FILE:
            return pin
        try:
            stamp = self._files.stamp(pin.source)
            if stamp == pin.stamp and pin.status is PinStatus.OK and not again:
                return pin
            snapshot = self._files.read(pin.source, anywhere=True) if stamp is not None else None
        except NotFoundError:
            snapshot = None
        except NightWatchError as err:
            return self._flag(pin, PinStatus.UNREADABLE, str(err))
        except OSError as err:
            return self._flag(pin, PinStatus.UNREADABLE, err.strerror or str(err))
        if snapshot is None:
            return self._flag(pin, PinStatus.MISSING, None)
        log.info("pin #%s: %s changed on disk; read it again", pin.id, pin.source)
        return self._store(self._with(pin, snapshot))

    # --- steps --------------------------------------------------------------------------------------------------

    def _owner(self, persona: str | None) -> Persona | None:
        if persona is None or persona.strip().lower() == EVERY_PERSONA:
            return None
        return self._personas.get(persona)

    def _read(self, kind: PinKind, value: str, *, anywhere: bool) -> PinSnapshot:
        if kind is PinKind.FILE:
            return self._files.read(value, anywhere=anywhere)
        if kind is PinKind.URL:
            return self._pages.fetch(value)
        return PinSnapshot(source=pin_title(value), text=value)

    def _scope(self, pin: Pin) -> builtins.list[Pin]:
        """The pins `pin` counts against: the persona's own on the project, or the project-wide ones."""
        return [p for p in self._pins.list(project=pin.project) if p.persona_id == pin.persona_id]

    def _refuse_over_limit(self, pin: Pin, owner: Persona | None) -> None:
        if len(self._scope(pin)) < self._max:
            return
        whose = f"{owner.name} has" if owner is not None else "The project has"
        raise InvalidInputError(
            f"{whose} {self._max} pins on {pin.project} already, the most there may be; unpin one first "
            "(`pin list` shows them, `pin remove ID` unpins)."
        )

    def _refreshed(self, pin: Pin) -> PinOutcome:
        if pin.kind is PinKind.FILE:
            now = self.current(pin, again=True)
            if now.status is PinStatus.OK:
                return PinOutcome(now, f"#{pin.id} {label_of(pin)}: read again.")
            why = f" ({now.problem})" if now.problem else ""
            return PinOutcome(now, f"#{pin.id} {label_of(pin)}: flagged {now.status.value}{why}.", ok=False)
        if pin.kind is PinKind.URL:
            try:
                snapshot = self._pages.fetch(pin.source)
            except NightWatchError as err:
                message = f"#{pin.id} {label_of(pin)}: not fetched, the pin keeps its snapshot ({err})"
                return PinOutcome(pin, message, ok=False)
            return PinOutcome(self._store(self._with(pin, snapshot)), f"#{pin.id} {label_of(pin)}: fetched again.")
        return PinOutcome(pin, f"#{pin.id} {label_of(pin)}: a text pin has nothing to read again.")

    def _with(self, pin: Pin, snapshot: PinSnapshot) -> Pin:
        now = self._clock.now()
        return replace(
            pin,
            content=snapshot.text,
            content_hash=snapshot_hash(snapshot.text),
            stamp=snapshot.stamp,
            read_at=now,
            status=PinStatus.OK,
            status_since=pin.status_since if pin.status is PinStatus.OK else now,
            problem=None,
        )

    def _flag(self, pin: Pin, status: PinStatus, problem: str | None) -> Pin:
        if pin.status is status and pin.problem == problem:
            return pin
        log.warning("pin #%s: %s is %s%s", pin.id, pin.source, status.value, f" ({problem})" if problem else "")
        return self._store(replace(pin, status=status, status_since=self._clock.now(), problem=problem))

    def _store(self, pin: Pin) -> Pin:
        """Store a new snapshot or status; the turn goes on with it even when the database refuses."""
        try:
            return self._pins.update(pin) or pin
        except StorageError as err:
            log.warning("pin #%s could not be stored (%s); this turn uses what was read", pin.id, err)
            return pin
