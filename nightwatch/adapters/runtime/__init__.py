"""The running process: clock, scheduler, ticker, file watch, hot reload, liveness, logs, health and metrics."""

from nightwatch.adapters.runtime.clock import SystemClock
from nightwatch.adapters.runtime.health import HealthOptions, HealthServer
from nightwatch.adapters.runtime.hot_reload import HotReload, report_persona_files
from nightwatch.adapters.runtime.liveness import ProcessLiveness
from nightwatch.adapters.runtime.logs import configure_logging, log_context
from nightwatch.adapters.runtime.metrics import MeteredLLM, Metrics, TimedSource
from nightwatch.adapters.runtime.scheduler import DEFAULT_TICK_SECONDS, ProactiveScheduler
from nightwatch.adapters.runtime.ticker import Ticker
from nightwatch.adapters.runtime.watch import FileWatch

__all__ = [
    "DEFAULT_TICK_SECONDS",
    "FileWatch",
    "HealthOptions",
    "HealthServer",
    "HotReload",
    "MeteredLLM",
    "Metrics",
    "ProactiveScheduler",
    "ProcessLiveness",
    "SystemClock",
    "Ticker",
    "TimedSource",
    "configure_logging",
    "log_context",
    "report_persona_files",
]
