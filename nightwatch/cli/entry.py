"""The `nightwatch` command's entry point: parse, redact, start up, run one command, answer with an exit code.

A command's handler takes the parsed arguments, the output stream and, keyword-only, the services it uses: this
module resolves those from the container by their annotations (`services_for`) and calls it; no handler sees the
container.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
from collections.abc import Sequence

from injector import Injector
from sqlalchemy import Engine

from nightwatch.adapters.runtime import configure_logging
from nightwatch.adapters.secrets import redact
from nightwatch.cli.arguments import build_parser
from nightwatch.cli.options import Handler
from nightwatch.cli.streams import close_quietly, fit_streams
from nightwatch.config import OFFLINE_NOTICE, Settings
from nightwatch.domain.errors import ConfigError, InvalidInputError, NightWatchError
from nightwatch.startup import StartUp
from nightwatch.wiring import build_injector, services_for


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (0 ok, 1 failed, 2 bad usage, 3 the model never answered, 141
    the output's reader left)."""
    fit_streams()
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()  # a closed pipe shows here (after --help too), not as a traceback at exit
    except BrokenPipeError:  # `nightwatch ... | head`: the reader has what it wanted
        close_quietly()
        return 141


def _run(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        # Our checks raise InvalidInputError from parse_args; argparse's own complaints exit 2.
        args = _without_secrets(parser.parse_args(argv))
        if not hasattr(args, "handler"):
            parser.print_help()
            return 2
        settings = _settings(args)
        configure_logging(_log_level(args, settings), settings.operations.log_format)
        for notice in settings.notices:
            if notice != OFFLINE_NOTICE or args.uses_model:  # the offline note only where a model answers
                print(f"note: {notice}", file=sys.stderr)
        container = build_injector(settings)
        try:
            if args.start_up:
                container.get(StartUp).run()
            handler: Handler = args.handler
            return handler(args, sys.stdout, **services_for(container, handler))
        finally:
            _dispose(container)
    except NightWatchError as exc:
        print(f"error: {redact(str(exc))}", file=sys.stderr)  # a message may quote what was typed
        return 2 if isinstance(exc, InvalidInputError | ConfigError) else 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _log_level(args: argparse.Namespace, settings: Settings) -> str:
    """-v (INFO) or -vv (DEBUG) first, then NIGHTWATCH_LOG_LEVEL, then the command's own level."""
    verbose: int = getattr(args, "verbose", 0)
    if verbose:
        return "DEBUG" if verbose > 1 else "INFO"
    return settings.log_level or str(args.default_log_level)


def _dispose(container: Injector) -> None:
    """Close the database connections rather than drop them at exit; never hide the error that ended the command."""
    try:
        container.get(Engine).dispose()
    except Exception:  # the engine may be what failed to build; the command's own error is the news
        logging.getLogger(__name__).debug("Could not close the database connections", exc_info=True)


def _without_secrets(args: argparse.Namespace) -> argparse.Namespace:
    """Every text argument (a topic, a lesson, a query) with its secrets redacted, where it enters."""
    for name, value in vars(args).items():
        if isinstance(value, str):
            setattr(args, name, redact(value))
    return args


def _settings(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    llm = getattr(args, "llm", None)
    if llm == "anthropic" and not settings.anthropic_api_key:
        raise ConfigError("--llm anthropic needs ANTHROPIC_API_KEY; set it, or use --llm offline.")
    if llm:
        notices = tuple(n for n in settings.notices if n != OFFLINE_NOTICE) if llm == "anthropic" else settings.notices
        settings = dataclasses.replace(settings, llm=llm, notices=notices)
    return settings
