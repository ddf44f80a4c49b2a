"""Slack load: ack latency under a burst of mentions, and 20 concurrent deliberations against one alone.

    python -m bench.slack_load [--delay 1.0] [--burst 50] [--concurrent 20]

The real app runs as `nightwatch run` runs it (`run_socket_mode`, the real SocketModeHandler and WebClient) against
tests/fake_slack.py, on SQLite and memory files in a temporary NIGHTWATCH_HOME, with the offline model wrapped so
that every call answers after `--delay` seconds. It prints:

- ack latency p50 and p99 for `--burst` mentions sent at once (from the fake sending each envelope to receiving its
  ack); target p99 < 100 ms;
- the wall time of one deliberation alone and of `--concurrent` started at once (mention sent -> every worker idle);
  target: concurrent within 1.5x of one alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from injector import Module, provider, singleton

from nightwatch.adapters.offline import OfflineLLM
from nightwatch.domain.llm import LLM, LLMRequest, LLMResponse
from tests import payloads
from tests.e2e.slack_live import LiveApp, live_app
from tests.fake_slack import FakeSlack

ACK_P99_TARGET_MS = 100.0
CONCURRENCY_TARGET = 1.5


class SlowLLM:
    """The offline model, answering every call after a fixed delay (a stand-in for a remote model's latency)."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.inner = OfflineLLM()

    def complete(self, request: LLMRequest) -> LLMResponse:
        time.sleep(self.delay)
        return self.inner.complete(request)


def slow_model(delay: float) -> Module:
    class Slow(Module):
        @singleton
        @provider
        def llm(self) -> LLM:
            return SlowLLM(delay)

    return Slow()


def mention(fake: FakeSlack, number: int) -> str:
    """Store a person's mention in C1 and deliver its app_mention event; returns the envelope id."""
    text = f"<@UBOT> topic {number}: should we cache the session lookups in service {number}?"
    stored = fake.workspace.store_message("C1", {"type": "message", "user": "U1", "text": text})
    return fake.send_event(payloads.app_mention(text, ts=stored["ts"]))


def wait_until_done(live: LiveApp, deliberations: int, timeout: float) -> None:
    """Wait until `deliberations` were started in all and every worker is idle again."""
    live.fake.wait_for(
        lambda: len(live.stack.log.recent(deliberations + 100)) >= deliberations and live.stack.slack.pool.running == 0,
        timeout,
    )


def ack_latencies(live: LiveApp, burst: int) -> list[float]:
    envelopes = [mention(live.fake, n) for n in range(burst)]
    for envelope in envelopes:
        live.fake.ack_for(envelope, timeout=10)
    return [live.fake.ack_times[e] * 1000 for e in envelopes]


def wall_time(live: LiveApp, count: int, started_before: int, timeout: float) -> float:
    begin = time.monotonic()
    for n in range(count):
        mention(live.fake, 1000 + started_before + n)
    wait_until_done(live, started_before + count, timeout)
    return time.monotonic() - begin


def percentile(values: list[float], pct: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1]


def run(delay: float, burst: int, concurrent: int) -> bool:
    with tempfile.TemporaryDirectory() as tmp, FakeSlack() as fake:
        workers = max(24, concurrent)
        with live_app(Path(tmp) / "home", fake, overrides=(slow_model(delay),), workers=workers) as live:
            fake.send_event(payloads.app_home_opened("U1"))  # warm-up: auth.test and the first Home tab
            fake.wait_for(lambda: fake.home_view("U1") is not None, 10)

            latencies = ack_latencies(live, burst)
            started = min(burst, workers)
            wait_until_done(live, started, timeout=300)
            busy = sum("busy" in str(m.get("text")) for m in fake.messages("C1"))

            alone = wall_time(live, 1, started, timeout=300)
            together = wall_time(live, concurrent, started + 1, timeout=300)
            live.stop()

    p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
    ratio = together / alone
    print(f"model delay per call: {delay:.1f} s; workers: {workers}")
    print(
        f"ack latency, {burst} mentions at once: p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(latencies):.1f} ms "
        f"(target p99 < {ACK_P99_TARGET_MS:.0f} ms); {started} deliberations started, {busy} told 'busy'"
    )
    print(
        f"one deliberation alone: {alone:.2f} s; {concurrent} concurrent: {together:.2f} s; "
        f"ratio {ratio:.2f} (target <= {CONCURRENCY_TARGET})"
    )
    ok = p99 < ACK_P99_TARGET_MS and ratio <= CONCURRENCY_TARGET
    print("targets met" if ok else "TARGETS MISSED")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.slack_load", description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=1.0, help="seconds every model call takes (default 1.0)")
    parser.add_argument("--burst", type=int, default=50, help="mentions sent at once for the ack latency")
    parser.add_argument("--concurrent", type=int, default=20, help="deliberations started together")
    args = parser.parse_args(argv)
    return 0 if run(args.delay, args.burst, args.concurrent) else 1


if __name__ == "__main__":
    sys.exit(main())
