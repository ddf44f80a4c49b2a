"""The state behind the fake Slack's Web API: users, channels, messages, trigger ids and views.

`tests/fake_slack.py` owns the servers; this module answers each Web API method the way Slack does, from plain
dicts, so its behaviour (single-use trigger ids, thread order, views) can be read in one place. The checks Slack
applies to every request (tokens, Block Kit limits, paging) are in `tests/fake_slack_rules.py`.
"""

from __future__ import annotations

import copy
import threading
import time
import uuid
from collections.abc import Callable

from tests.fake_slack_rules import Json, between, check_content, check_token, error, page, ts_key

TEAM_ID = "T1"
APP_ID = "A1"
BOT_ID = "B1"
BOT_USER_ID = "UBOT"
TRIGGER_LIFETIME = 3.0  # seconds; Slack's documented lifetime of a trigger_id


class FakeClock:
    """Wall-clock seconds that a test can move forward (trigger expiry, message timestamps)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def now(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


class SlackWorkspace:
    """One workspace: answers Web API methods (`handle`) and keeps what they changed, thread-safely."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.lock = threading.RLock()
        self.users: dict[str, Json] = {}
        self.channels: dict[str, Json] = {}
        self.channel_messages: dict[str, list[Json]] = {}
        self.ephemeral: list[Json] = []
        self.views: dict[str, Json] = {}
        self.home_views: dict[str, Json] = {}
        self.user_groups: dict[str, list[str]] = {}  # user group id -> its members' ids
        self._triggers: dict[str, tuple[float, bool]] = {}  # id -> (issued at, already exchanged)
        self._last_ts = (0, 0)
        self._serial = 0
        self.add_user(BOT_USER_ID, name="nightwatch", is_bot=True)
        self.add_user("U1", name="alice")
        self.add_channel("C1", "general")
        self._methods: dict[str, Callable[[Json], Json]] = {
            "auth.test": self._auth_test,
            "chat.postMessage": self._post_message,
            "chat.postEphemeral": self._post_ephemeral,
            "chat.update": self._update_message,
            "chat.delete": self._delete_message,
            "conversations.replies": self._replies,
            "conversations.history": self._history,
            "conversations.info": self._channel_info,
            "users.info": self._user_info,
            "usergroups.users.list": self._user_group_members,
            "views.open": self._open_view,
            "views.push": self._open_view,
            "views.update": self._update_view,
            "views.publish": self._publish_view,
        }

    # ----- set-up -----------------------------------------------------------------------------------------------

    def add_user(
        self, user_id: str, *, name: str = "", is_admin: bool = False, is_owner: bool = False, is_bot: bool = False
    ) -> None:
        name = name or user_id.lower()
        with self.lock:
            self.users[user_id] = {
                "id": user_id,
                "team_id": TEAM_ID,
                "name": name,
                "real_name": name,
                "deleted": False,
                "is_admin": is_admin,
                "is_owner": is_owner,
                "is_primary_owner": False,
                "is_bot": is_bot,
                "profile": {"display_name": name, "real_name": name},
            }

    def add_user_group(self, group_id: str, members: list[str]) -> None:
        with self.lock:
            self.user_groups[group_id] = list(members)

    def add_channel(self, channel_id: str, name: str) -> None:
        with self.lock:
            self.channels[channel_id] = {
                "id": channel_id,
                "name": name,
                "is_channel": True,
                "is_private": False,
                "is_member": True,
                "is_archived": False,
                "created": int(self.clock.now()),
                "topic": {"value": ""},
            }
            self.channel_messages.setdefault(channel_id, [])

    def new_trigger_id(self) -> str:
        with self.lock:
            self._serial += 1
            trigger_id = f"{self._serial}.{int(self.clock.now())}.{uuid.uuid4().hex[:12]}"
            self._triggers[trigger_id] = (self.clock.now(), False)
            return trigger_id

    def next_ts(self) -> str:
        """A message timestamp: unique and increasing, as Slack's are within a channel."""
        with self.lock:
            seconds = int(self.clock.now())
            last_seconds, last_serial = self._last_ts
            serial = last_serial + 1 if seconds <= last_seconds else 1
            self._last_ts = (max(seconds, last_seconds), serial)
            return f"{self._last_ts[0]}.{serial:06d}"

    def store_message(self, channel: str, message: Json) -> Json:
        """Adds a message to a channel (and to its thread's parent counters); returns the stored copy."""
        with self.lock:
            stored = copy.deepcopy(message)
            stored.setdefault("type", "message")
            stored.setdefault("ts", self.next_ts())
            self.channel_messages.setdefault(channel, []).append(stored)
            thread_ts = stored.get("thread_ts")
            parent = self.find_message(channel, thread_ts) if thread_ts and thread_ts != stored["ts"] else None
            if parent is not None:
                parent["thread_ts"] = thread_ts
                parent["reply_count"] = parent.get("reply_count", 0) + 1
                parent["latest_reply"] = stored["ts"]
                who = stored.get("user")
                if who and who not in parent.setdefault("reply_users", []):
                    parent["reply_users"].append(who)
            return copy.deepcopy(stored)

    def find_message(self, channel: str, ts: str | None) -> Json | None:
        with self.lock:
            return next((m for m in self.channel_messages.get(channel, []) if m["ts"] == ts), None)

    def thread(self, channel: str, thread_ts: str) -> list[Json]:
        """The parent and its replies, oldest first (what conversations.replies shows)."""
        with self.lock:
            found = [
                m
                for m in self.channel_messages.get(channel, [])
                if m["ts"] == thread_ts or m.get("thread_ts") == thread_ts
            ]
            return copy.deepcopy(sorted(found, key=lambda m: ts_key(m["ts"])))

    def all_messages(self, channel: str) -> list[Json]:
        with self.lock:
            return copy.deepcopy(sorted(self.channel_messages.get(channel, []), key=lambda m: ts_key(m["ts"])))

    # ----- dispatch ---------------------------------------------------------------------------------------------

    def handle(self, method: str, args: Json, token: str | None) -> Json:
        """Answers one Web API call as Slack would; unknown methods get a plain ok."""
        refusal = check_token(method, token)
        if refusal is not None:
            return refusal
        answer = self._methods.get(method)
        if answer is None:
            return {"ok": True}
        with self.lock:
            return answer(args)

    def _auth_test(self, args: Json) -> Json:
        return {
            "ok": True,
            "url": "https://nightwatch-test.slack.invalid/",
            "team": "Night Watch Test",
            "user": "nightwatch",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "app_id": APP_ID,
            "is_enterprise_install": False,
        }

    # ----- chat.* -----------------------------------------------------------------------------------------------

    def _post_message(self, args: Json) -> Json:
        channel = str(args.get("channel") or "")
        if not channel:
            return error("channel_not_found")
        problem = check_content(args)
        if problem is not None:
            return problem
        message: Json = {
            "type": "message",
            "user": BOT_USER_ID,
            "bot_id": BOT_ID,
            "app_id": APP_ID,
            "team": TEAM_ID,
            "text": str(args.get("text") or ""),
        }
        for key in ("blocks", "attachments", "thread_ts", "metadata", "username", "icon_emoji", "icon_url"):
            if args.get(key) not in (None, ""):
                message[key] = args[key]
        if "username" in message:
            message["subtype"] = "bot_message"
        icons = {k: v for k, v in (("emoji", args.get("icon_emoji")), ("image_48", args.get("icon_url"))) if v}
        if icons:
            message["icons"] = icons
        stored = self.store_message(channel, message)
        return {"ok": True, "channel": channel, "ts": stored["ts"], "message": stored}

    def _post_ephemeral(self, args: Json) -> Json:
        if not args.get("channel") or not args.get("user"):
            return error("invalid_arguments")
        problem = check_content(args)
        if problem is not None:
            return problem
        ts = self.next_ts()
        self.ephemeral.append({**copy.deepcopy(args), "ts": ts})
        return {"ok": True, "message_ts": ts}

    def _update_message(self, args: Json) -> Json:
        channel = str(args.get("channel") or "")
        message = self.find_message(channel, args.get("ts"))
        if message is None:
            return error("message_not_found")
        problem = check_content(args)
        if problem is not None:
            return problem
        for key in ("text", "blocks", "attachments", "metadata"):
            if key in args:
                message[key] = copy.deepcopy(args[key])
        message["edited"] = {"user": BOT_USER_ID, "ts": self.next_ts()}
        return {
            "ok": True,
            "channel": channel,
            "ts": message["ts"],
            "text": message.get("text", ""),
            "message": copy.deepcopy(message),
        }

    def _delete_message(self, args: Json) -> Json:
        channel = str(args.get("channel") or "")
        message = self.find_message(channel, args.get("ts"))
        if message is None:
            return error("message_not_found")
        self.channel_messages[channel].remove(message)
        return {"ok": True, "channel": channel, "ts": message["ts"]}

    # ----- conversations.* / users.* ----------------------------------------------------------------------------

    def _replies(self, args: Json) -> Json:
        channel = str(args.get("channel") or "")
        if channel not in self.channel_messages:
            return error("channel_not_found")
        if self.find_message(channel, args.get("ts")) is None:
            return error("thread_not_found")
        messages = between(self.thread(channel, str(args["ts"])), args)
        return page(messages, args)

    def _history(self, args: Json) -> Json:
        channel = str(args.get("channel") or "")
        if channel not in self.channel_messages:
            return error("channel_not_found")
        top = [m for m in self.all_messages(channel) if m.get("thread_ts") in (None, m["ts"])]
        return page(list(reversed(between(top, args))), args)

    def _channel_info(self, args: Json) -> Json:
        channel = self.channels.get(str(args.get("channel") or ""))
        return {"ok": True, "channel": copy.deepcopy(channel)} if channel else error("channel_not_found")

    def _user_info(self, args: Json) -> Json:
        user = self.users.get(str(args.get("user") or ""))
        return {"ok": True, "user": copy.deepcopy(user)} if user else error("user_not_found")

    def _user_group_members(self, args: Json) -> Json:
        members = self.user_groups.get(str(args.get("usergroup") or ""))
        return {"ok": True, "users": list(members)} if members is not None else error("no_such_subteam")

    # ----- views.* ----------------------------------------------------------------------------------------------

    def exchange_trigger(self, trigger_id: str) -> str | None:
        """Uses up a trigger id; returns Slack's error code when it cannot be used."""
        issued = self._triggers.get(trigger_id)
        if issued is None:
            return "invalid_trigger_id"
        issued_at, exchanged = issued
        if exchanged:
            return "exchanged_trigger_id"
        if self.clock.now() - issued_at > TRIGGER_LIFETIME:
            return "expired_trigger_id"
        self._triggers[trigger_id] = (issued_at, True)
        return None

    def _open_view(self, args: Json) -> Json:
        view = args.get("view")
        if not isinstance(view, dict) or view.get("type") != "modal":
            return error("invalid_arguments", response_metadata={"messages": ["[ERROR] a modal view is required"]})
        refused = self.exchange_trigger(str(args.get("trigger_id") or ""))
        if refused is not None:
            return error(refused)
        stored = self._store_view(view)
        return {"ok": True, "view": copy.deepcopy(stored)}

    def _update_view(self, args: Json) -> Json:
        view = args.get("view")
        target = self.views.get(str(args.get("view_id") or "")) or next(
            (v for v in self.views.values() if args.get("external_id") and v.get("external_id") == args["external_id"]),
            None,
        )
        if target is None:
            return error("not_found")
        if not isinstance(view, dict):
            return error("invalid_arguments")
        if args.get("hash") and args["hash"] != target["hash"]:
            return error("hash_conflict")
        stored = self._store_view(view, view_id=target["id"])
        return {"ok": True, "view": copy.deepcopy(stored)}

    def _publish_view(self, args: Json) -> Json:
        view = args.get("view")
        user_id = str(args.get("user_id") or "")
        if user_id not in self.users:
            return error("user_not_found")
        if not isinstance(view, dict) or view.get("type") != "home":
            return error("invalid_arguments", response_metadata={"messages": ["[ERROR] a home view is required"]})
        stored = self._store_view(view, view_id=self.home_views.get(user_id, {}).get("id"))
        self.home_views[user_id] = stored
        return {"ok": True, "view": copy.deepcopy(stored)}

    def _store_view(self, view: Json, view_id: str | None = None) -> Json:
        if view_id is None:
            self._serial += 1
            view_id = f"V{self._serial:08d}"
        stored = {
            **copy.deepcopy(view),
            "id": view_id,
            "team_id": TEAM_ID,
            "app_id": APP_ID,
            "bot_id": BOT_ID,
            "root_view_id": view_id,
            "state": {"values": {}},
            "hash": f"{int(self.clock.now())}.{uuid.uuid4().hex[:8]}",
        }
        self.views[view_id] = stored
        return stored
