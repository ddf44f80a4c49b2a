"""The running process: clock, scheduler, ticker, file watch, hot reload and liveness."""

from nightwatch.adapters.runtime.clock import SystemClock
from nightwatch.adapters.runtime.hot_reload import HotReload, report_persona_files
from nightwatch.adapters.runtime.liveness import ProcessLiveness
from nightwatch.adapters.runtime.scheduler import DEFAULT_TICK_SECONDS, ProactiveScheduler
from nightwatch.adapters.runtime.ticker import Ticker
from nightwatch.adapters.runtime.watch import FileWatch

__all__ = [
    "DEFAULT_TICK_SECONDS",
    "FileWatch",
    "HotReload",
    "ProactiveScheduler",
    "ProcessLiveness",
    "SystemClock",
    "Ticker",
    "report_persona_files",
]
