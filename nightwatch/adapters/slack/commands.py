"""The /nightwatch slash command: parse the subcommand, make one domain call, and say what happened.

The listener acks before calling `SlashCommands.handle`, so nothing here races Slack's 3-second limit except opening
a modal, which uses the trigger id at once. Errors a person can act on (NightWatchError) come back as their message.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from nightwatch.adapters.db import SlackState
from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.blocks import Block, clip, escape, mrkdwn
from nightwatch.adapters.slack.held import HeldReview
from nightwatch.adapters.slack.home import HomeTab
from nightwatch.adapters.slack.memory_words import category_and_lesson, category_filter, clear_blocks
from nightwatch.adapters.slack.persona_modal import persona_modal
from nightwatch.adapters.slack.sanitize import sanitize
from nightwatch.adapters.slack.threads import ChannelDirectory, Deliberations
from nightwatch.adapters.slack.views import help_blocks, history_blocks, memory_blocks, personas_blocks
from nightwatch.adapters.terminal import render_budget
from nightwatch.domain.deliberation import DeliberationEngine, find_persona, validate_topic
from nightwatch.domain.deliberation.ports import DeliberationLog
from nightwatch.domain.errors import InvalidInputError, NightWatchError, NotFoundError
from nightwatch.domain.inputs import shown
from nightwatch.domain.memory import MemoryService, unread_summary, validate_query
from nightwatch.domain.models import Persona
from nightwatch.domain.personas import PersonaService, project_slug
from nightwatch.domain.ports import Clock

log = logging.getLogger(__name__)

_PERSON_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^<>]*)?>")

COMMAND = "/nightwatch"
REPORT_MAX = 3500  # characters of a report in one message (Slack shows at most 4,000 in a message's text)
UNEXPECTED = "Something went wrong on our side; the error was logged. Try again in a moment."


@dataclass(frozen=True)
class Invocation:
    """One /nightwatch call: who, where, the words after the command, and the trigger id for a modal."""

    user: str
    channel: str
    text: str
    trigger_id: str = ""
    bot_user_id: str = ""

    @classmethod
    def of(cls, command: dict[str, Any], bot_user_id: str = "") -> Invocation:
        return cls(
            user=str(command.get("user_id") or ""),
            channel=str(command.get("channel_id") or ""),
            text=str(command.get("text") or "").strip(),
            trigger_id=str(command.get("trigger_id") or ""),
            bot_user_id=bot_user_id,
        )


@dataclass(frozen=True)
class Reply:
    """What to tell the user (only them, unless `in_channel`)."""

    text: str
    blocks: list[Block] = field(default_factory=list)


Respond = Callable[..., Any]
Handler = Callable[[Invocation, str], Reply | None]


class SlashCommands:
    """Runs one /nightwatch subcommand and answers through `respond` (the command's response_url)."""

    def __init__(
        self,
        *,
        personas: PersonaService,
        memory: MemoryService,
        engine: DeliberationEngine,
        log: DeliberationLog,
        state: SlackState,
        clock: Clock,
        client: WebClient,
        admins: AdminCheck,
        home: HomeTab,
        deliberations: Deliberations,
        channels: ChannelDirectory,
        held: HeldReview,
        more: Mapping[str, Handler] | None = None,
    ) -> None:
        self._held = held
        self._personas = personas
        self._memory = memory
        self._engine = engine
        self._log = log
        self._state = state
        self._clock = clock
        self._client = client
        self._admins = admins
        self._home = home
        self._deliberations = deliberations
        self._channels = channels
        self._handlers: dict[str, Handler] = {
            "help": self.help,
            "ask": self.ask,
            "personas": self.list_personas,
            "persona": self.persona,
            "memory": self.memory,
            "remember": self.remember,
            "forget": self.forget,
            "context": self.context,
            "project": self.project,
            "history": self.history,
            **(more or {}),  # subcommands kept in modules of their own (share_commands.py, pin_commands.py)
        }

    def handle(self, call: Invocation, respond: Respond) -> None:
        """Run the subcommand in `call.text` (none: help) and respond with its reply, or with what it accepts."""
        name, rest = _first_word(call.text)
        handler = self._handlers.get(name.lower(), self.unknown)
        try:
            reply = handler(call, rest.strip())
        except InvalidInputError as err:
            reply = self.usage(call, str(err))
        except NightWatchError as err:
            reply = Reply(escape(str(err)))  # it may quote what the user typed
        except SlackApiError as err:
            log.warning("/nightwatch %s: Slack refused a call: %s", shown(name), err.response["error"])
            reply = Reply(f"Slack refused the request ({err.response['error']}). Try again, or ask an admin.")
        except Exception:
            log.exception("/nightwatch %s failed", shown(name))
            reply = Reply(UNEXPECTED)
        if reply is not None:
            respond(text=reply.text, blocks=reply.blocks or None, response_type="ephemeral")

    # --- subcommands ---------------------------------------------------------------------------------------------

    def help(self, call: Invocation, rest: str) -> Reply:
        return Reply("Night Watch help", self._help_blocks(call))

    def unknown(self, call: Invocation, rest: str) -> Reply:
        name, _ = _first_word(call.text)
        return self.usage(call, f"{COMMAND} {shown(name)} is not a command; these are the ones I know.")

    def ask(self, call: Invocation, rest: str) -> Reply | None:
        topic = validate_topic(rest)
        # The topic as the app repeats it: the asker's own mentions of people stay, broadcasts and groups never ping.
        echo = sanitize(topic, allowed_users={call.user, *_PERSON_MENTION.findall(topic)})
        try:
            posted = self._client.chat_postMessage(channel=call.channel, text=f"<@{call.user}> asked: {echo}")
        except SlackApiError as err:
            if err.response["error"] in ("not_in_channel", "channel_not_found"):
                return Reply("I am not in this channel yet: invite me with `/invite` and ask again.")
            raise
        self._deliberations.start(
            channel=call.channel, thread_ts=str(posted["ts"]), topic=topic, bot_user_id=call.bot_user_id, user=call.user
        )
        return None

    def list_personas(self, call: Invocation, rest: str) -> Reply:
        return Reply("Personas", personas_blocks(self._personas.list()))

    def persona(self, call: Invocation, rest: str) -> Reply | None:
        action, name = _first_word(rest)
        if action.lower() == "new":
            self._admins.require(call.user, "create personas")
            self._client.views_open(trigger_id=call.trigger_id, view=persona_modal())
            return None
        if action.lower() == "edit" and name.strip():
            self._admins.require(call.user, "edit personas")
            self._client.views_open(trigger_id=call.trigger_id, view=persona_modal(self._personas.get(name)))
            return None
        raise InvalidInputError(f"Use `{COMMAND} persona new` or `{COMMAND} persona edit <name>`.")

    def memory(self, call: Invocation, rest: str) -> Reply:
        first, after = _first_word(rest)
        if first.lower() == "clear":
            return self._clear(call, after)
        if first.lower() == "search":
            persona, words = self._persona_and_rest(after)
            category, query = category_filter(words)
            if not query:
                raise InvalidInputError(f"Give words to search for: `{COMMAND} memory search {persona.name} tokens`.")
            query = validate_query(query)
            project = self._channels.project_for(call.channel)
            found = [hit.lesson for hit in self._memory.search(persona, project, query, category=category)]
            about = f"lessons in {category}" if category else "lessons"
            title = f"*{escape(persona.name)}*: {len(found)} {about} about *{escape(project)}* match _{escape(query)}_"
            return Reply(f"{persona.name}'s memory search", memory_blocks(persona, project, found, title=title))
        persona, words = self._persona_and_rest(rest)
        category, project_name = category_filter(words)
        project = project_slug(project_name) if project_name else self._channels.project_for(call.channel)
        lessons = self._memory.lessons(persona, project, category=category)
        unread = unread_summary(self._memory.unread_lines(persona, project))
        title = f"*{escape(persona.name)}* remembers {len(lessons)} lessons in {category} about *{project}*"
        blocks = memory_blocks(persona, project, lessons, title=title if category else "", unread=unread)
        return Reply(f"{persona.name}'s memory of {project}", blocks)

    def _clear(self, call: Invocation, rest: str) -> Reply:
        """Ask before clearing: the Clear button (behind a confirm dialog) does it."""
        persona, project_name = self._persona_and_rest(rest)
        self._admins.require_admin_or_creator(call.user, persona, "clear its memory")
        project = project_slug(project_name) if project_name else self._channels.project_for(call.channel)
        held = len(self._memory.lessons(persona, project)) + len(self._memory.history(persona, project))
        return Reply(f"Clear {persona.name}'s memory of {project}?", clear_blocks(persona, project, held))

    def remember(self, call: Invocation, rest: str) -> Reply:
        persona, words = self._persona_and_rest(rest)
        category, text = category_and_lesson(words)
        project = self._channels.project_for(call.channel)
        if (reason := self._held.screen(call.user, text)) is not None:
            return Reply(self._held.hold([persona], project, text, reason, author=call.user, category=category))
        found = self._memory.record(persona, project, text, author=call.user or None, category=category)
        self._home.publish(call.user)
        lesson = found.lesson
        about = f" ({lesson.category})" if lesson.category else ""
        what = f" · {found.said}"
        return Reply(f"{persona.name} remembers `{lesson.id}`{about} for {project}: {escape(lesson.text)}{what}")

    def forget(self, call: Invocation, rest: str) -> Reply:
        self._admins.require(call.user, "forget lessons")
        persona, lesson_id = self._persona_and_rest(rest)
        if not lesson_id:
            raise InvalidInputError(f"Give the lesson's id: `{COMMAND} forget {persona.name} 3f9a2c1d`.")
        here = self._channels.project_for(call.channel)
        for project in [here, *(p for p in self._memory.projects(persona) if p != here)]:
            try:
                lesson = self._memory.forget(persona, project, lesson_id)
            except NotFoundError:
                continue
            self._home.publish(call.user)
            return Reply(f"{persona.name} forgot `{lesson.id}` ({project}): {escape(lesson.text)}")
        raise NotFoundError(f"{persona.name} has no lesson with id {lesson_id!r}; `{COMMAND} memory` shows the ids.")

    def context(self, call: Invocation, rest: str) -> Reply:
        persona, more = self._persona_and_rest(rest)
        if more and more.lower() != "full":
            raise InvalidInputError(f"Use `{COMMAND} context {persona.name}`, or add `full` to list what went in.")
        project = self._channels.project_for(call.channel)
        budget = self._engine.context_budget(persona.name, project)
        report = render_budget(persona, project, budget, full=bool(more))
        return Reply(f"```{escape(clip(report, REPORT_MAX))}```")

    def project(self, call: Invocation, rest: str) -> Reply:
        if not rest:
            current = self._channels.project_for(call.channel)
            return Reply(f"This channel uses the project *{escape(current)}*. Change it: `{COMMAND} project <slug>`.")
        slug = project_slug(rest)
        self._admins.require(call.user, "change a channel's project")  # it re-points deliberations and teaching
        self._state.map_channel(call.channel, slug, self._clock.now())
        maps = f"This channel now maps to the project *{slug}*: personas use their memory of {slug} here, and may "
        return Reply(maps + "post a short observation when the channel has been quiet for a while.")

    def history(self, call: Invocation, rest: str) -> Reply:
        recent = self._log.recent(10, thread_prefix=f"{call.channel}:")
        return Reply("Recent deliberations", history_blocks(recent))

    # --- replies -------------------------------------------------------------------------------------------------

    def usage(self, call: Invocation, problem: str) -> Reply:
        """The problem with what the user typed, then the help: every command and what it takes."""
        text = escape(problem)  # it may quote what the user typed
        return Reply(text, [mrkdwn(f":warning: {text}"), *self._help_blocks(call)])

    def _help_blocks(self, call: Invocation) -> list[Block]:
        bot = f"<@{call.bot_user_id}>" if call.bot_user_id else "the app"
        return help_blocks(command=COMMAND, bot=bot, personas=self._personas.list())

    # --- parsing -------------------------------------------------------------------------------------------------

    def _persona_and_rest(self, text: str) -> tuple[Persona, str]:
        """The persona named at the start of `text` (longest name first, so 'Code Reviewer' works) and the rest."""
        words = text.split()
        if not words:
            raise InvalidInputError("Name a persona first, for example `Maya`; `/nightwatch personas` lists them.")
        personas = self._personas.list()
        longest = max((len(p.name.split()) for p in personas), default=1)
        for count in range(min(len(words), longest), 0, -1):
            found = find_persona(personas, " ".join(words[:count]))
            if found is not None:
                return found, " ".join(words[count:])
        return self._personas.get(words[0]), ""  # raises NotFoundError listing the known names


def _first_word(text: str) -> tuple[str, str]:
    """The first word of `text` and the rest after the white space that follows it ('' when there is none)."""
    words = text.split(maxsplit=1)
    return (words[0] if words else ""), (words[1] if len(words) > 1 else "")
