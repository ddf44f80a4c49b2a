"""Slack: a Bolt app in Socket Mode, its listeners, commands, modals and Home tab, and the poster.

`SlackApp` wires the listeners to the domain services; `run_socket_mode` connects and shuts down cleanly.
"""

from nightwatch.adapters.slack.app import SlackApp, run_socket_mode

__all__ = ["SlackApp", "run_socket_mode"]
