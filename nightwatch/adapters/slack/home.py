"""The App Home tab: every persona and, per project, its most useful lessons, published for one user."""

from __future__ import annotations

from slack_sdk import WebClient

from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.held import HeldReview
from nightwatch.adapters.slack.views import PersonaMemory, home_view
from nightwatch.domain.memory import MemoryService
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaService

LESSONS_PER_PROJECT = 5


class HomeTab:
    """Builds and publishes the Home tab (views.publish); admins also get the New/Edit/Delete buttons and the
    lessons held for their approval."""

    def __init__(
        self,
        *,
        client: WebClient,
        personas: PersonaService,
        memory: MemoryService,
        admins: AdminCheck,
        held: HeldReview,
        lessons_per_project: int = LESSONS_PER_PROJECT,
    ) -> None:
        self._client = client
        self._personas = personas
        self._memory = memory
        self._admins = admins
        self._held = held
        self._per_project = lessons_per_project

    def publish(self, user_id: str) -> None:
        """Publish the current Home tab for `user_id`."""
        entries = [self._entry(persona) for persona in self._personas.list()]
        view = home_view(entries, admin=self._admins.is_admin(user_id), held=self._held.home_blocks(user_id))
        self._client.views_publish(user_id=user_id, view=view)

    def _entry(self, persona: Persona) -> PersonaMemory:
        projects = []
        for project in self._memory.projects(persona):
            total = len(self._memory.lessons(persona, project))
            if total:
                # An empty query ranks every lesson by the memory's own signals (pins, use, recency).
                best = [hit.lesson for hit in self._memory.search(persona, project, "", limit=self._per_project)]
                projects.append((project, tuple(best), total))
        return PersonaMemory(persona=persona, projects=tuple(projects))
