"""The Poster for one Slack thread: each persona posts under its own name and icon; the thread reads back.

Model text is redacted and goes through `sanitize` before it is posted (no broadcast mentions, no user groups, no
mention of anyone not already in the thread) and is split to respect Slack's limits. `messages()` serves a local
transcript of the thread, people's messages redacted as they are read: read from Slack at most every
`refresh_seconds` (conversations.replies is rate limited, and the engine asks several times a turn), kept current
with the poster's own posts, and with people's replies the `message` event pushes in (`observe`). A reply that
reaches another replica's socket is seen at the next refresh.

A deliberation's poster (`deliberating=True`) keeps the thread to its turns, its verdict and one lessons message
(lesson_notes.py): lessons recorded before the verdict wait for it, notices before the verdict (a turn skipped)
fold into the verdict's message, and the lead's request for one more round is added to the lead's own last post.
`finish()` posts whatever is still held when the deliberation ends without a verdict.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import replace
from typing import Any

from slack_sdk import WebClient

from nightwatch.adapters.secrets import redact, redact_backstop
from nightwatch.adapters.slack.blocks import Block, mrkdwn
from nightwatch.adapters.slack.identity import persona_identity, shortcode
from nightwatch.adapters.slack.lesson_notes import FORGOT, LessonLine, LessonNotes, lessons_blocks
from nightwatch.adapters.slack.sanitize import sanitize, split_for_blocks
from nightwatch.adapters.slack.views import lesson_note_blocks
from nightwatch.domain.deliberation.models import Verdict
from nightwatch.domain.memory.ports import Forgotten
from nightwatch.domain.models import Persona, ThreadMessage

log = logging.getLogger(__name__)

FALLBACK_TEXT = 3000  # the notification text that accompanies blocks
REFRESH_SECONDS = 3.0
_USER_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>")


class SlackPoster:
    """Posts into `channel`'s thread `thread_ts`; with no thread, the first post starts one (proactive posts)."""

    def __init__(
        self,
        *,
        client: WebClient,
        channel: str,
        thread_ts: str | None,
        bot_user_id: str = "",
        refresh_seconds: float = REFRESH_SECONDS,
        notes: LessonNotes | None = None,
        requester: str = "",
        deliberating: bool = False,
    ) -> None:
        """`notes` tells lessons in one message per thread (without it, each lesson is a note of its own);
        `requester` is who started the deliberation (ephemeral lesson notes go to them)."""
        self._client = client
        self._notes = notes
        self._requester = requester
        self._holding = deliberating  # until the verdict: lessons and notices wait for it
        self._held_lessons: list[LessonLine] = []
        self._held_notices: list[str] = []
        self._last_post: dict[str, tuple[str, str]] = {}  # persona name -> (ts, text) of its latest post
        self.channel = channel
        self.thread_ts = thread_ts
        self._bot_user_id = bot_user_id
        self._refresh_seconds = refresh_seconds
        self._humans: set[str] = set()
        self._names: dict[str, str] = {}
        self._transcript: list[ThreadMessage] | None = None  # None: not read from Slack yet
        self._read_at = 0.0
        self._lock = threading.Lock()

    # --- posting ------------------------------------------------------------------------------------------------

    def post_turn(self, persona: Persona, text: str) -> None:
        self._post(self._clean(_with_unicode_avatar(persona, text)), persona_identity(persona))

    def post_verdict(self, lead: Persona, verdict: Verdict, text: str) -> None:
        """The lead's verdict; the notices held until now (turns skipped) are folded into its message."""
        body = self._clean(_with_unicode_avatar(lead, text))
        notices, self._held_notices = self._held_notices, []
        if notices:
            body += "\n\n" + "\n".join(f"_{notice}_" for notice in notices)
        self._post(body, persona_identity(lead))
        self._holding = False
        self._tell_lessons()

    def post_round_request(self, lead: Persona, summary: str) -> None:
        """Add the request for one more round to the lead's own latest post; the lead's post when it has none."""
        addition = f"↻ *One more round:* {self._clean(summary)}"
        last = self._last_post.get(lead.name)
        if last is not None:
            ts, text = last
            combined = f"{text}\n\n{addition}"
            sections = split_for_blocks(combined)
            if len(sections) == 1:
                self._client.chat_update(
                    channel=self.channel,
                    ts=ts,
                    text=combined[:FALLBACK_TEXT],
                    blocks=[mrkdwn(section) for section in sections[0]],
                )
                self._last_post[lead.name] = (ts, combined)
                self._revise(ts, combined)
                return
        self._post(addition, persona_identity(lead))

    def post_notice(self, text: str) -> None:
        if self._holding:
            self._held_notices.append(self._clean(text))
            return
        self._post(self._clean(text), {})

    def post_lesson(
        self,
        persona: Persona,
        project: str,
        lesson_id: str,
        text: str,
        *,
        category: str | None = None,
        change: str = "created",
    ) -> None:
        clean = self._clean(text)
        if self._notes is None:
            blocks = lesson_note_blocks(persona, project, lesson_id, clean)  # `clean` is mrkdwn-safe already
            self._send(f"★ {persona.name} remembered: {clean}"[:FALLBACK_TEXT], blocks, {})
            return
        self._hold(LessonLine(persona.name, persona.slug, project, lesson_id, clean, category, change))

    def post_forgotten(self, persona: Persona, forgotten: Forgotten) -> None:
        """A lesson the persona forgot with its tool: a line of the lessons message, with its Undo button."""
        clean = self._clean(forgotten.text)
        line = LessonLine(persona.name, persona.slug, forgotten.project, forgotten.lesson_id, clean, change=FORGOT)
        self._hold(replace(line, forgotten_id=forgotten.id))

    def _hold(self, line: LessonLine) -> None:
        self._held_lessons.append(line)
        if not self._holding:
            self._tell_lessons()

    def finish(self) -> None:
        """The deliberation is over: post what is still held (notices in one message, then the lessons)."""
        self._holding = False
        notices, self._held_notices = self._held_notices, []
        if notices:
            self._send("\n".join(notices)[:FALLBACK_TEXT], [mrkdwn(notice) for notice in notices], {})
        self._tell_lessons()

    def _tell_lessons(self) -> None:
        lines, self._held_lessons = self._held_lessons, []
        if lines and self._notes is not None and self.thread_ts:
            self._notes.tell(self.channel, self.thread_ts, lines, user=self._requester)
        elif lines and self._notes is None:  # no lessons message to keep: these lines are a message of their own
            self._send("\n".join(line.plain() for line in lines)[:FALLBACK_TEXT], lessons_blocks(lines), {})
        elif lines:  # a proactive post before its thread exists: nothing to attach to
            log.info("lessons with no thread to tell them in: %s", ", ".join(line.lesson_id for line in lines))

    def post_recall(self, persona: Persona, query: str, found: int) -> None:
        """Not posted: the reply itself says what it drew from memory, and each post spends Slack's rate limit."""
        log.info("%s recalled %d lessons in %s:%s", persona.name, found, self.channel, self.thread_ts)

    def _clean(self, text: str) -> str:
        return sanitize(redact_backstop(text, "a Slack post"), allowed_users=self._allowed_users())

    def _post(self, text: str, identity: dict[str, str]) -> None:
        for sections in split_for_blocks(text):
            self._send("\n".join(sections)[:FALLBACK_TEXT], [mrkdwn(section) for section in sections], identity)

    def _send(self, text: str, blocks: list[Block], identity: dict[str, str]) -> None:
        kwargs: dict[str, Any] = {"channel": self.channel, "text": text, "blocks": blocks, **identity}
        if self.thread_ts:
            kwargs["thread_ts"] = self.thread_ts
        response = self._client.chat_postMessage(**kwargs)
        if not self.thread_ts:
            self.thread_ts = str(response["ts"])  # the first post is the root of the thread from now on
        username = identity.get("username")
        if username:
            self._last_post[username] = (str(response["ts"]), text)
            self._remember(ThreadMessage(author=username, text=text, persona=username, ts=str(response["ts"])))

    # --- reading ------------------------------------------------------------------------------------------------

    def messages(self) -> list[ThreadMessage]:
        """The thread so far, oldest first: persona posts (by username) and people's messages; app notes left out."""
        if not self.thread_ts:
            return []
        with self._lock:
            fresh = self._transcript is not None and time.monotonic() - self._read_at < self._refresh_seconds
            if fresh and self._transcript is not None:
                return list(self._transcript)
        found = [message for raw in self._replies() if (message := self._message(raw)) is not None]
        with self._lock:
            self._transcript, self._read_at = found, time.monotonic()
            return list(found)

    def observe(self, event: dict[str, Any]) -> None:
        """Add a person's reply that arrived as a `message` event, so the next turn sees it without a read."""
        message = self._message(event)
        if message is not None and message.persona is None:
            self._remember(message)

    def _revise(self, ts: str, text: str) -> None:
        """The transcript's copy of an updated post, so the next turn reads it as the thread shows it."""
        with self._lock:
            if self._transcript is not None:
                self._transcript = [replace(m, text=text) if m.ts == ts else m for m in self._transcript]

    def _remember(self, message: ThreadMessage) -> None:
        with self._lock:
            if self._transcript is not None and all(m.ts != message.ts for m in self._transcript):
                self._transcript.append(message)

    def _replies(self) -> list[dict[str, Any]]:
        pages: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            response = self._client.conversations_replies(
                channel=self.channel, ts=str(self.thread_ts), limit=200, cursor=cursor
            )
            pages += response.get("messages") or []
            cursor = (response.get("response_metadata") or {}).get("next_cursor")
            if not response.get("has_more") or not cursor:
                return pages

    def _message(self, raw: dict[str, Any]) -> ThreadMessage | None:
        text = redact(str(raw.get("text") or ""))  # where a thread's messages enter
        ts = str(raw.get("ts") or "")
        if raw.get("bot_id") or raw.get("subtype") == "bot_message":
            username = raw.get("username")
            return ThreadMessage(author=username, text=text, persona=username, ts=ts) if username else None
        user = raw.get("user")
        if not user or raw.get("subtype"):
            return None
        with self._lock:
            self._humans.add(str(user))
        return ThreadMessage(author=self._name(str(user)), text=self._readable(text), ts=ts)

    def _readable(self, text: str) -> str:
        """Mentions as @names for the model; the app's own mention is dropped."""
        without_bot = text.replace(f"<@{self._bot_user_id}>", "").strip() if self._bot_user_id else text
        return _USER_MENTION.sub(lambda m: "@" + self._name(m.group(1)), without_bot)

    def _name(self, user_id: str) -> str:
        with self._lock:
            known = self._names.get(user_id)
        if known is not None:
            return known
        try:
            user = self._client.users_info(user=user_id).get("user") or {}
            profile = user.get("profile") or {}
            name = profile.get("display_name") or user.get("real_name") or user.get("name") or user_id
        except Exception:  # a name is a nicety: the id still identifies the person
            log.debug("users.info failed for %s", user_id, exc_info=True)
            name = user_id
        with self._lock:
            self._names[user_id] = str(name)
        return str(name)

    def _allowed_users(self) -> set[str]:
        if not self.thread_ts:
            return set()
        with self._lock:
            if self._humans:
                return set(self._humans)
        self.messages()  # nothing read yet: learn who is in the thread first
        with self._lock:
            return set(self._humans)


def _with_unicode_avatar(persona: Persona, text: str) -> str:
    """An emoji avatar with no shortcode cannot be a message icon, so it leads the text instead."""
    avatar = persona.avatar.strip()
    if not avatar or avatar.startswith((":", "http://", "https://")) or shortcode(avatar):
        return text
    return f"{avatar} {text}"
