"""What every `nightwatch` command's parser shares: how a command is added, and the persona and project arguments."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeAlias

from nightwatch.domain.personas import PERSONA_NAME_MAX, PROJECT_NAME_MAX, project_slug, validate_persona_name

Handler = Callable[..., int]  # (args, out, *, the services it uses) -> exit code; see entry.py
Commands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"  # a group of commands

NAME_RULE = f"1-{PERSONA_NAME_MAX} letters, digits, spaces, - or _"
PROJECT_HELP = f"project slug: 1-{PROJECT_NAME_MAX} letters, digits, spaces, '.', '_' or '-' (default: default)"


def command(
    group: Commands,
    name: str,
    handler: Handler,
    help_text: str,
    *,
    start_up: bool = True,
    uses_model: bool = False,
    log_level: str = "WARNING",
) -> argparse.ArgumentParser:
    """Add a command.

    `start_up` says whether start-up (upgrade, seeding, closing abandoned runs) comes first; `uses_model` whether it
    may call the model (only then is the offline-model note shown); `log_level` is its level when neither -v nor
    NIGHTWATCH_LOG_LEVEL sets one.
    """
    parser = group.add_parser(name, help=help_text, description=help_text)
    parser.set_defaults(handler=handler, start_up=start_up, uses_model=uses_model, default_log_level=log_level)
    return parser


def memory_command(
    group: Commands, name: str, handler: Handler, help_text: str, *, uses_model: bool = False
) -> argparse.ArgumentParser:
    """Add a command about one persona's memory of a project: PERSONA [--project P]."""
    parser = command(group, name, handler, help_text, uses_model=uses_model)
    persona_argument(parser, "persona")
    project_option(parser)
    return parser


def persona_argument(command: argparse.ArgumentParser, name: str) -> None:
    command.add_argument(name, type=validate_persona_name, help=f"persona name or slug ({NAME_RULE})")


def project_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--project", type=project_slug, default="default", help=PROJECT_HELP)
