"""The composition root: builds every object, the Slack app's included. No I/O happens here.

`build_injector(settings, *overrides)` builds the container; a test passes a module of fakes that wins over the
real bindings. Start-up I/O (schema upgrade, seeding) lives in nightwatch/startup.py.
"""

from nightwatch.wiring.services import NightWatchModule, build_injector, deliberation_policy, proactive_policy

__all__ = ["NightWatchModule", "build_injector", "deliberation_policy", "proactive_policy"]
