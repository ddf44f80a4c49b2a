"""Start-up I/O shared by every entry point: data folder, schema upgrade, default personas, abandoned deliberations."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from sqlalchemy import Engine

from nightwatch.adapters.db import SchemaChange, upgrade
from nightwatch.adapters.encoder import embeddings
from nightwatch.adapters.files import make_private_folder
from nightwatch.adapters.persona_files import PersonaFolders
from nightwatch.adapters.runtime import report_persona_files
from nightwatch.config import Settings
from nightwatch.domain.deliberation import DeliberationEngine
from nightwatch.domain.errors import StorageError
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import FileOutcome, PersonaService

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Started:
    schema: SchemaChange
    seeded: tuple[Persona, ...]


class StartUp:
    """What every command does first; wiring builds it from the services it touches."""

    def __init__(
        self,
        *,
        settings: Settings,
        engine: Engine,
        folders: PersonaFolders,
        personas: PersonaService,
        deliberations: DeliberationEngine,
    ) -> None:
        self._settings = settings
        self._engine = engine
        self._folders = folders
        self._personas = personas
        self._deliberations = deliberations

    def run(self) -> Started:
        """Create the data folder, run the migrations, apply the persona files, close abandoned runs.

        Persona files (the defaults and NIGHTWATCH_PERSONAS_DIR) add the personas never added before and update those
        nobody changed since their file set them (domain/personas/files.py); a file that cannot be used stops start-up.

        Every command runs this, so a deliberation whose process was killed shows as interrupted at the next command
        (`nightwatch history` included), while one a live process still runs is left alone (see abandoned.py).
        """
        settings = self._settings
        try:
            make_private_folder(settings.home)
        except OSError as exc:
            raise StorageError(
                f"Cannot create the data folder {settings.home} ({exc.strerror}); "
                "set NIGHTWATCH_HOME to a writable folder."
            ) from exc
        if settings.memory.dense == "on" and not embeddings.available():
            log.warning("Memory recall matches words only, not meaning. %s", embeddings.MISSING_MESSAGE)
        schema = upgrade(self._engine)
        if schema.changed:
            log.info("%s", schema.message)
        scan = self._folders.scan()
        scan.raise_refused()
        applied = self._personas.apply_files(scan.files)
        report_persona_files(scan, applied, starting=True)
        seeded = [item.persona for item in applied if item.outcome is FileOutcome.ADDED and item.persona is not None]
        for deliberation in self._deliberations.close_abandoned():
            log.info("deliberation #%s (%s) was cut off: marked interrupted", deliberation.id, deliberation.topic[:80])
        return Started(schema=schema, seeded=tuple(seeded))
