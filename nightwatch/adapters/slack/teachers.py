"""Who may teach personas (NIGHTWATCH_TEACHERS): everyone, the admins, or the members of one Slack user group.

A user group's members are read through `usergroups.users.list` and kept for a minute. Admins may always teach.
When Slack cannot say (an API failure), the person is treated as not a teacher: their lesson waits for an admin.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.domain.ports import Clock

log = logging.getLogger(__name__)

CACHE_FOR = timedelta(minutes=1)


class TeacherCheck:
    """Answers whether a user may teach; `teachers` returns the setting now (it reloads)."""

    def __init__(self, *, teachers: Callable[[], str], admins: AdminCheck, client: WebClient, clock: Clock) -> None:
        self._teachers = teachers
        self._admins = admins
        self._client = client
        self._clock = clock
        self._members: dict[str, tuple[datetime, frozenset[str]]] = {}
        self._lock = threading.Lock()

    def may_teach(self, user_id: str) -> bool:
        teachers = self._teachers()
        if teachers == "everyone":
            return True
        if self._admins.is_admin(user_id):
            return True
        return teachers != "admins" and user_id in self._group(teachers)

    def _group(self, group_id: str) -> frozenset[str]:
        now = self._clock.now()
        with self._lock:
            cached = self._members.get(group_id)
        if cached is not None and now - cached[0] < CACHE_FOR:
            return cached[1]
        try:
            users = self._client.usergroups_users_list(usergroup=group_id).get("users") or []
        except SlackApiError as err:
            log.warning(
                "usergroups.users.list for %s failed (%s); nobody outside the admins teaches now",
                group_id,
                err.response["error"],
            )
            return frozenset()
        members = frozenset(str(user) for user in users)
        with self._lock:
            self._members[group_id] = (now, members)
        return members
