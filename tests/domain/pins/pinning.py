"""PinService wired to fakes (personas, pins, files, pages, clock), shared by the pinned-context tests."""

from __future__ import annotations

from dataclasses import dataclass

from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaDraft, PersonaService
from nightwatch.domain.pins import PinService
from tests.fakes import (
    FakeClock,
    FakePinFiles,
    FakePinPages,
    InMemoryMemoryStore,
    InMemoryPendingLessons,
    InMemoryPersonaRepository,
    InMemoryPinRepository,
)

DOC = "/srv/docs/ARCHITECTURE.md"
RUNBOOK = "/srv/docs/runbook.md"
PAGE = "https://wiki.example.com/threat-model"


@dataclass
class Pinning:
    """The service and every fake behind it."""

    personas: PersonaService
    repo: InMemoryPersonaRepository
    store: InMemoryMemoryStore
    pending: InMemoryPendingLessons
    pins: InMemoryPinRepository
    files: FakePinFiles
    pages: FakePinPages
    clock: FakeClock
    service: PinService

    def persona(self, name: str) -> Persona:
        return self.personas.get(name)


def pinning(*, budget: int = 1500, max_pins: int = 20) -> Pinning:
    repo, store, pending, clock = (
        InMemoryPersonaRepository(),
        InMemoryMemoryStore(),
        InMemoryPendingLessons(),
        FakeClock(),
    )
    pins = InMemoryPinRepository(repo)
    personas = PersonaService(repo=repo, store=store, clock=clock, pending=pending, pins=pins)
    for name, role in (("Maya", "Security reviewer"), ("Carlos", "Tech lead"), ("Dev", "Implementer")):
        personas.create(PersonaDraft(name=name, role=role))
    files = FakePinFiles()
    files.write(DOC, "# Architecture\nThe gateway terminates TLS; services talk over mTLS.")
    files.write(RUNBOOK, "Restart the queue workers one at a time.")
    pages = FakePinPages({PAGE: "Threat model: the admin API is reachable only from the VPN."})
    service = PinService(
        pins=pins, personas=personas, files=files, pages=pages, clock=clock, token_budget=budget, max_pins=max_pins
    )
    return Pinning(personas, repo, store, pending, pins, files, pages, clock, service)
