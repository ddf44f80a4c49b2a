"""The `nightwatch` command: personas, memory, terminal deliberations, and the Slack app.

`entry` runs one command line; `arguments` builds the parser, whose `type` checks are the domain's rules; one module
per command group (`personas`, `memory`, `deliberation`, `database`) holds its handlers: each takes the parsed
arguments, the output stream and, keyword-only, the services it uses (entry.py resolves them), makes its domain calls,
prints, and returns an exit code.
"""

from nightwatch.cli.entry import main

__all__ = ["main"]
