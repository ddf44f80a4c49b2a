"""What an operator counts: the Prometheus metrics of one process, and the model decorator that feeds most of them.

Each `Metrics` has a registry of its own (tests and several apps in one process do not share counters); the health
server (health.py) serves it at /metrics. Recording is a counter or histogram update: a few microseconds, well under
the 1 ms per turn the benchmark holds it to (bench/metrics_overhead.py).
"""

from __future__ import annotations

import time
from typing import get_args

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from nightwatch.domain.context import ContextAsk, ContextPart, ContextSource
from nightwatch.domain.deliberation.models import DeliberationResult
from nightwatch.domain.llm import LLM, LLMRequest, LLMResponse
from nightwatch.domain.memory.ports import LessonOutcome

_SECONDS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_MODEL_SECONDS = (0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0)


class Metrics:
    """The process's counters and histograms (names as in docs/operations.md#health-and-metrics)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.deliberations = Counter(
            "nightwatch_deliberations", "Deliberations ended, by outcome", ["outcome"], registry=r
        )
        self.turns = Counter(
            "nightwatch_turns", "Persona turns, by status (posted, skipped, failed)", ["status"], registry=r
        )
        self.model_calls = Counter(
            "nightwatch_model_calls",
            "Model calls, by kind (purpose) and status (ok, error)",
            ["kind", "status"],
            registry=r,
        )
        self.model_seconds = Histogram(
            "nightwatch_model_call_seconds", "Time of one model call", buckets=_MODEL_SECONDS, registry=r
        )
        self.model_tokens = Counter(
            "nightwatch_model_tokens",
            "Model tokens, by kind (input, output, cache_read, cache_write)",
            ["kind"],
            registry=r,
        )
        self.lessons = Counter(
            "nightwatch_lessons", "Lessons, by outcome (created, merged, superseded, refused)", ["outcome"], registry=r
        )
        for outcome in get_args(LessonOutcome):  # each outcome shown from the start, at 0
            self.lessons.labels(outcome)
        self.memory_read_seconds = Histogram(
            "nightwatch_memory_read_seconds",
            "Time to read what a persona knows for a turn",
            buckets=_SECONDS,
            registry=r,
        )
        self.slack_ack_seconds = Histogram(
            "nightwatch_slack_ack_seconds", "Time from a Slack event's arrival to its ack", buckets=_SECONDS, registry=r
        )
        self.busy = Counter("nightwatch_busy", "Deliberations refused because every worker was busy", registry=r)
        self.takeovers = Counter("nightwatch_takeovers", "Deliberations taken over from another replica", registry=r)

    def exposition(self) -> bytes:
        """The metrics in the Prometheus text format."""
        return generate_latest(self.registry)

    def deliberation_ended(self, result: DeliberationResult) -> None:
        """Count a finished deliberation and its turns."""
        self.deliberations.labels(result.verdict.decision.value.lower()).inc()
        for turn in result.turns:
            status = "failed" if turn.failed else "skipped" if turn.skipped else "posted"
            self.turns.labels(status).inc()

    def lessons_counted(self, outcome: LessonOutcome, count: int) -> None:
        """Count lessons by what recording made of them (the LessonTally port: the memory service reports each)."""
        self.lessons.labels(outcome).inc(count)

    def model_call(self, kind: str, seconds: float, response: LLMResponse | None) -> None:
        """Count one model call (None: it failed) with its time and tokens."""
        self.model_calls.labels(kind, "ok" if response is not None else "error").inc()
        self.model_seconds.observe(seconds)
        if response is not None:
            usage = response.usage
            for kind_of_token, count in (
                ("input", usage.input_tokens),
                ("output", usage.output_tokens),
                ("cache_read", usage.cache_read_tokens),
                ("cache_write", usage.cache_write_tokens),
            ):
                if count:
                    self.model_tokens.labels(kind_of_token).inc(count)


class TimedSource:
    """A context source whose reads are timed into `nightwatch_memory_read_seconds`; otherwise the source itself."""

    def __init__(self, inner: ContextSource, metrics: Metrics) -> None:
        self.inner = inner
        self._metrics = metrics

    @property
    def name(self) -> str:
        return self.inner.name

    def read(self, ask: ContextAsk) -> ContextPart:
        with self._metrics.memory_read_seconds.time():
            return self.inner.read(ask)


class MeteredLLM:
    """An LLM that counts each call, its time and its tokens in `metrics`, and otherwise changes nothing."""

    def __init__(self, inner: LLM, metrics: Metrics) -> None:
        self.inner = inner
        self._metrics = metrics

    def complete(self, request: LLMRequest) -> LLMResponse:
        started = time.perf_counter()
        response: LLMResponse | None = None
        try:
            response = self.inner.complete(request)
            return response
        finally:
            self._metrics.model_call(request.purpose.value, time.perf_counter() - started, response)
