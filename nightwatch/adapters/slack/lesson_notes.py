"""What was learned in a thread, told in one message: a line per lesson, each with its Forget button.

A thread gets at most one lessons message. The first lessons recorded there post it; lessons recorded later in the
same thread (a deliberation's reflection, teaching, the memory tools, extraction, a proactive message) are added to
it in place with `chat.update`. Forget strikes its line through in place (`strike`). A lesson a persona forgot with
its `memory_forget` tool is a line too, "Maya forgot: …", with an Undo button that puts it back (`LESSON_UNDO`: admins
and the person who started the deliberation, `starter`); once undone the line says who restored it (`restored`). A
message shows at most `MAX_LINES` lines (Slack allows 50 blocks); beyond them it says "and N more" and points at the
App Home.

`NIGHTWATCH_LESSON_NOTES` (read at each message, so a reload reaches the next one) says where lessons are told:
`thread` (the default, as above), `ephemeral` (a message only the person who started the deliberation or taught
the lesson sees; Slack cannot update those, so each batch is its own) or `off` (the App Home only).

Which message belongs to which thread is kept in this process (the newest `THREADS_KEPT` threads): after a restart,
the first lessons of an old thread start a new message there.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from slack_sdk import WebClient

from nightwatch.adapters.slack.blocks import Block, button, clip, confirm_dialog, context, escape, mrkdwn
from nightwatch.adapters.slack.views import LESSON_FORGET, ForgetTarget

log = logging.getLogger(__name__)

MAX_LINES = 40  # lesson lines in one message: with the heading and "and N more", well inside Slack's 50 blocks
THREADS_KEPT = 2000
FALLBACK_TEXT = 3000
HOME_TAB = "the App Home (the app's Home tab)"
MODES = ("thread", "ephemeral", "off")
FORGOT = "forgot"
LESSON_UNDO = "lesson_undo"


@dataclass(frozen=True)
class LessonLine:
    """One lesson as its thread is told: who learned it, what it says (sanitised mrkdwn), how it changed memory."""

    persona: str  # the persona's name
    slug: str
    project: str
    lesson_id: str
    text: str
    category: str | None = None
    change: str = "created"  # created, merged, superseded, or FORGOT (the persona forgot it with its tool)
    taught_by: str = ""  # the Slack user id of the person who taught it
    forgotten_by: str = ""  # set once someone pressed its Forget button
    forgotten_id: int | None = None  # a FORGOT line: the kept lesson its Undo button restores
    restored_by: str = ""  # a FORGOT line: set once someone pressed Undo

    @property
    def target(self) -> ForgetTarget:
        return ForgetTarget(self.slug, self.project, self.lesson_id, "note")

    def plain(self) -> str:
        """The line as notification text: "★ Maya remembered: …" (or "Maya forgot: …")."""
        if self.change == FORGOT:
            return f"{self.persona} forgot: {self.text}"
        return f"★ {self.persona} remembered: {self.text}"


def lessons_blocks(lines: Sequence[LessonLine], *, home: str = "") -> list[Block]:
    """The lessons message: a heading, a line per lesson (the first MAX_LINES), then "and N more" if there are."""
    forgot = sum(line.change == FORGOT for line in lines)
    count = len(lines) - forgot
    learned = f"{count} lesson{'' if count == 1 else 's'}" + (f" · {forgot} forgotten" if forgot else "")
    blocks: list[Block] = [context(f"★ What was learned here · {learned}")]
    blocks += [_line_block(line) for line in lines[:MAX_LINES]]
    if len(lines) > MAX_LINES:
        where = f"<{home}|the App Home>" if home else HOME_TAB
        blocks.append(context(f"…and {len(lines) - MAX_LINES} more; {where} lists every lesson."))
    return blocks


def _line_block(line: LessonLine) -> Block:
    if line.change == FORGOT:
        return _forgot_block(line)
    category = f" · {line.category}" if line.category else ""
    by = f" · taught by <@{line.taught_by}>" if line.taught_by else ""
    head = f"*{escape(line.persona)}*{category} · {line.change}"
    if line.forgotten_by:
        return mrkdwn(f"~{head}: {line.text}~ — forgotten (<@{line.forgotten_by}>)")
    block = mrkdwn(f"{head}: {line.text}{by}")
    block["accessory"] = button(
        "Forget",
        LESSON_FORGET,
        line.target.encode(),
        confirm=confirm_dialog("Forget this lesson?", clip(line.text, 250), "Forget"),
    )
    return block


def _forgot_block(line: LessonLine) -> Block:
    head = f"*{escape(line.persona)}* forgot"
    if line.restored_by:
        return mrkdwn(f"{head}: ~{line.text}~ — restored (<@{line.restored_by}>)")
    block = mrkdwn(f"{head}: {line.text}")
    block["accessory"] = button("Undo", LESSON_UNDO, str(line.forgotten_id))
    return block


def restored(blocks: Sequence[Block], value: str, user: str) -> list[Block] | None:
    """`blocks` with the forgotten line whose Undo button carries `value` shown as restored; None when none does."""
    out: list[Block] = []
    for block in blocks:
        accessory = block.get("accessory") or {}
        if block.get("type") == "section" and accessory.get("action_id") == LESSON_UNDO and accessory["value"] == value:
            text = str((block.get("text") or {}).get("text") or "")
            head, _, said = text.partition(" forgot: ")
            out.append(mrkdwn(f"{head} forgot: ~{said}~ — restored (<@{user}>)"))
        else:
            out.append(block)
    return out if out != list(blocks) else None


def strike(blocks: Sequence[Block], value: str, user: str) -> list[Block] | None:
    """`blocks` with the line whose Forget button carries `value` struck through; None when no line carries it."""
    found = False
    out: list[Block] = []
    for block in blocks:
        accessory = block.get("accessory") or {}
        if block.get("type") == "section" and accessory.get("value") == value:
            found = True
            text = str((block.get("text") or {}).get("text") or "")
            out.append(mrkdwn(f"~{text}~ — forgotten (<@{user}>)"))
        else:
            out.append(block)
    return out if found else None


@dataclass
class _Message:
    ts: str
    lines: list[LessonLine]


class LessonNotes:
    """Tells each thread what was learned there, in its one lessons message (see the module's docstring)."""

    def __init__(self, *, client: WebClient, mode: Callable[[], str], home: Callable[[], str] = lambda: "") -> None:
        """`mode` is NIGHTWATCH_LESSON_NOTES now; `home` a link to the App Home ('' when none is known)."""
        self._client = client
        self._mode = mode
        self._home = home
        self._messages: OrderedDict[tuple[str, str], _Message] = OrderedDict()
        self._starters: OrderedDict[int, str] = OrderedDict()  # a forgotten lesson's id -> who started its thread's run
        self._lock = threading.Lock()

    @property
    def mode(self) -> str:
        mode = self._mode()
        return mode if mode in MODES else "thread"

    def tell(self, channel: str, thread_ts: str, lines: Sequence[LessonLine], *, user: str = "") -> None:
        """Tell the thread about `lines`: in its lessons message (posted now, or updated), privately, or not at all."""
        mode = self.mode
        self._note_starter(lines, user)
        if not lines or mode == "off":
            return
        lines = folded([], lines)
        if mode == "ephemeral":
            if user:
                self._client.chat_postEphemeral(
                    channel=channel, user=user, thread_ts=thread_ts, text=_text(lines), blocks=self._blocks(lines)
                )
            return
        with self._lock:  # held across the Slack call: two batches at once must not post two messages
            known = self._messages.get((channel, thread_ts))
            if known is None:
                response = self._client.chat_postMessage(
                    channel=channel, thread_ts=thread_ts, text=_text(lines), blocks=self._blocks(lines)
                )
                self._keep(channel, thread_ts, _Message(str(response["ts"]), lines))
                return
            known.lines = folded(known.lines, lines)
            self._messages.move_to_end((channel, thread_ts))
            self._update(channel, known)

    def forgotten(self, channel: str, message_ts: str, target: ForgetTarget, user: str) -> None:
        """Remember that a line of a lessons message was forgotten, so later updates keep it struck through."""
        with self._lock:
            for (where, _), message in self._messages.items():
                if where == channel and message.ts == message_ts:
                    message.lines = [
                        replace(line, forgotten_by=user) if line.target == target else line for line in message.lines
                    ]

    def starter(self, forgotten_id: int) -> str:
        """Who started the deliberation whose persona forgot this lesson ('' when this process does not know)."""
        with self._lock:
            return self._starters.get(forgotten_id, "")

    def restored(self, channel: str, message_ts: str, forgotten_id: int, user: str) -> None:
        """Remember that a forgotten line was undone, so later updates keep showing it restored."""
        with self._lock:
            for (where, _), message in self._messages.items():
                if where == channel and message.ts == message_ts:
                    message.lines = [
                        replace(line, restored_by=user) if line.forgotten_id == forgotten_id else line
                        for line in message.lines
                    ]

    def _note_starter(self, lines: Sequence[LessonLine], user: str) -> None:
        with self._lock:
            for line in lines:
                if line.forgotten_id is not None and user:
                    self._starters[line.forgotten_id] = user
            while len(self._starters) > THREADS_KEPT:
                self._starters.popitem(last=False)

    def _update(self, channel: str, message: _Message) -> None:
        self._client.chat_update(
            channel=channel, ts=message.ts, text=_text(message.lines), blocks=self._blocks(message.lines)
        )

    def _keep(self, channel: str, thread_ts: str, message: _Message) -> None:
        self._messages[(channel, thread_ts)] = message
        while len(self._messages) > THREADS_KEPT:
            self._messages.popitem(last=False)

    def _blocks(self, lines: Sequence[LessonLine]) -> list[Block]:
        return lessons_blocks(lines, home=self._home())


def folded(told: Sequence[LessonLine], new: Sequence[LessonLine]) -> list[LessonLine]:
    """`told` and then `new`, where a lesson restated again (merged into one the message already has a line for)
    marks that line "seen again" instead of adding a line with the same words."""
    out = list(told)
    for line in new:
        same = next((i for i, old in enumerate(out) if _same_lesson(old, line)), None)
        if same is None or not line.change.startswith("merged"):
            out.append(line)
        elif not out[same].change.endswith("seen again"):
            out[same] = replace(out[same], change=f"{out[same].change} · seen again")
    return out


def _same_lesson(old: LessonLine, new: LessonLine) -> bool:
    told = (old.slug, old.project, old.lesson_id, old.forgotten_id, old.forgotten_by)
    return told == (new.slug, new.project, new.lesson_id, None, "")


def _text(lines: Sequence[LessonLine]) -> str:
    return "\n".join(line.plain() for line in lines)[:FALLBACK_TEXT]
