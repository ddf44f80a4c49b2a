"""Start-up I/O shared by every entry point: data folder, schema upgrade, default personas, abandoned deliberations."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from injector import Injector
from sqlalchemy import Engine

from nightwatch.adapters import embeddings
from nightwatch.adapters.db import SchemaChange, upgrade
from nightwatch.adapters.persona_files import load_default_personas
from nightwatch.config import Settings
from nightwatch.domain.deliberation import DeliberationEngine
from nightwatch.domain.errors import StorageError
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaService

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Started:
    schema: SchemaChange
    seeded: tuple[Persona, ...]


def start(container: Injector) -> Started:
    """Create the data folder, run the migrations, seed default personas never seeded before, close abandoned runs.

    Every command runs this, so a deliberation whose process was killed shows as interrupted at the next command
    (`nightwatch history` included), while one a live process still runs is left alone (see abandoned.py).
    """
    settings = container.get(Settings)
    try:
        settings.home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(
            f"Cannot create the data folder {settings.home} ({exc.strerror}); set NIGHTWATCH_HOME to a writable folder."
        ) from exc
    if settings.memory.dense == "on" and not embeddings.available():
        log.warning("Memory recall matches words only, not meaning. %s", embeddings.MISSING_MESSAGE)
    schema = upgrade(container.get(Engine))
    if schema.changed:
        log.info("%s", schema.message)
    seeded = container.get(PersonaService).seed_defaults(load_default_personas())
    if seeded:
        log.info("seeded default personas: %s", ", ".join(p.name for p in seeded))
    for deliberation in container.get(DeliberationEngine).close_abandoned():
        log.info("deliberation #%s (%s) was cut off: marked interrupted", deliberation.id, deliberation.topic[:80])
    return Started(schema=schema, seeded=tuple(seeded))
