"""The composition root: builds every object, the Slack app's included. No I/O happens here.

Four modules, one per concept: `AdapterModule` binds the settings and every port to its adapter, `ServiceModule`
builds the domain's services from those ports, and `SlackModule` builds the Slack app down to its listeners
(`ReviewModule`, its review of held lessons and who may teach).
`build_injector(settings, *overrides)` builds the container; a test passes a module of fakes that wins over the real
bindings. Start-up I/O (schema upgrade, seeding) is `StartUp.run` (nightwatch/startup.py). This package and the
CLI's entry point are the only ones that import `injector`: everything else receives the services it uses.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable

from injector import Injector, Module

from nightwatch.config import Settings
from nightwatch.wiring.adapters import AdapterModule
from nightwatch.wiring.review import ReviewModule
from nightwatch.wiring.services import ServiceModule, deliberation_policy, proactive_policy
from nightwatch.wiring.slack import SlackModule

__all__ = [
    "AdapterModule",
    "ReviewModule",
    "ServiceModule",
    "SlackModule",
    "build_injector",
    "deliberation_policy",
    "proactive_policy",
    "services_for",
]


def build_injector(settings: Settings, *overrides: Module) -> Injector:
    """Build the container from the real modules; `overrides` (e.g. a module of fakes) win over them."""
    return Injector([AdapterModule(settings), ServiceModule(), SlackModule(), ReviewModule(), *overrides])


def services_for(container: Injector, function: Callable[..., object]) -> dict[str, object]:
    """The services `function` takes, by name: each keyword-only parameter resolved by its annotation."""
    hints = typing.get_type_hints(function)
    parameters = inspect.signature(function).parameters.values()
    return {p.name: container.get(hints[p.name]) for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY}
