"""Slack: a Bolt app, its listeners, commands, modals and Home tab, the worker pool, and the poster.

`SlackApp` routes Slack's events to the listeners. The composition root (wiring/slack.py) builds it from the pieces
exported here; nightwatch/serve.py serves it over Socket Mode (`EagerAckSocketModeHandler`).
"""

from nightwatch.adapters.slack.admins import AdminCheck
from nightwatch.adapters.slack.app import (
    HAND_OVER_SECONDS,
    SET_UP,
    Authorization,
    SlackApp,
    bolt_app,
    listener_threads,
    web_client,
)
from nightwatch.adapters.slack.commands import SlashCommands
from nightwatch.adapters.slack.forget_undo import ForgetUndo
from nightwatch.adapters.slack.held import HeldReview
from nightwatch.adapters.slack.home import HomeTab
from nightwatch.adapters.slack.lease_keeper import LeaseKeeper
from nightwatch.adapters.slack.lesson_notes import LessonNotes
from nightwatch.adapters.slack.listeners import Listeners
from nightwatch.adapters.slack.persona_admin import PersonaAdmin
from nightwatch.adapters.slack.pin_commands import PinCommands
from nightwatch.adapters.slack.pool import WorkerPool
from nightwatch.adapters.slack.poster import SlackPoster
from nightwatch.adapters.slack.share_commands import ShareCommands
from nightwatch.adapters.slack.socket_mode import EagerAckSocketModeHandler
from nightwatch.adapters.slack.teachers import TeacherCheck
from nightwatch.adapters.slack.teaching import ThreadTeaching
from nightwatch.adapters.slack.threads import ChannelDirectory, Deliberations

__all__ = [
    "HAND_OVER_SECONDS",
    "SET_UP",
    "AdminCheck",
    "Authorization",
    "ChannelDirectory",
    "Deliberations",
    "EagerAckSocketModeHandler",
    "ForgetUndo",
    "HeldReview",
    "HomeTab",
    "LeaseKeeper",
    "LessonNotes",
    "Listeners",
    "PersonaAdmin",
    "PinCommands",
    "ShareCommands",
    "SlackApp",
    "SlackPoster",
    "SlashCommands",
    "TeacherCheck",
    "ThreadTeaching",
    "WorkerPool",
    "bolt_app",
    "listener_threads",
    "web_client",
]
