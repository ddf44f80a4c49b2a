"""Who may administer personas and memories: configured user ids, or workspace admins and owners; for a few actions
on one persona (clearing its memory), also whoever created it in Slack."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from nightwatch.domain.errors import PermissionDeniedError
from nightwatch.domain.models import Persona
from nightwatch.domain.ports import Clock

log = logging.getLogger(__name__)

CACHE_FOR = timedelta(minutes=5)
REFUSAL = (
    "Only Night Watch admins can {action}. Ask an admin (a workspace admin or owner, or a user listed in "
    "NIGHTWATCH_ADMINS) to do it for you."
)
CREATOR_REFUSAL = (
    "Only Night Watch admins or whoever created {name} can {action}. Ask an admin (a workspace admin or owner, or a "
    "user listed in NIGHTWATCH_ADMINS) to do it for you."
)


class AdminCheck:
    """Answers whether a user is an admin: listed in settings, else `users.info` says admin or owner (cached).

    `admins` may be a function returning the listed ids now (settings can be reloaded): it is asked at each check.
    """

    def __init__(
        self,
        *,
        admins: frozenset[str] | Callable[[], frozenset[str]],
        client: WebClient,
        clock: Clock,
        cache_for: timedelta = CACHE_FOR,
    ):
        self._admins = admins
        self._client = client
        self._clock = clock
        self._cache_for = cache_for
        self._cache: dict[str, tuple[datetime, bool]] = {}
        self._lock = threading.Lock()

    def is_admin(self, user_id: str) -> bool:
        listed = self._admins if isinstance(self._admins, frozenset) else self._admins()
        if user_id in listed:
            return True
        now = self._clock.now()
        with self._lock:
            cached = self._cache.get(user_id)
        if cached is not None and now - cached[0] < self._cache_for:
            return cached[1]
        answer = self._ask_slack(user_id)
        if answer is None:
            return False  # not cached: a passing API failure should not lock an admin out for minutes
        with self._lock:
            self._cache[user_id] = (now, answer)
        return answer

    def require(self, user_id: str, action: str) -> None:
        """Raise PermissionDeniedError with a message saying who can `action`, unless the user is an admin."""
        if not self.is_admin(user_id):
            raise PermissionDeniedError(REFUSAL.format(action=action))

    def require_admin_or_creator(self, user_id: str, persona: Persona, action: str) -> None:
        """Raise PermissionDeniedError unless the user created `persona` in Slack or is an admin."""
        if user_id and persona.created_by == user_id:
            return
        if not self.is_admin(user_id):
            raise PermissionDeniedError(CREATOR_REFUSAL.format(name=persona.name, action=action))

    def _ask_slack(self, user_id: str) -> bool | None:
        try:
            user = self._client.users_info(user=user_id).get("user") or {}
        except SlackApiError as err:
            error = err.response["error"]
            log.warning("users.info for %s failed (%s); treating the user as not an admin", user_id, error)
            return None
        return bool(user.get("is_admin") or user.get("is_owner") or user.get("is_primary_owner"))
