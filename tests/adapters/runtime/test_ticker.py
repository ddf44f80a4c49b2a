"""The background ticker: runs at its interval, survives a failing run, and stops when told."""

from __future__ import annotations

import threading

import pytest

from nightwatch.adapters.runtime.ticker import Ticker


def test_a_failing_run_is_logged_and_the_next_tick_runs(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []
    third = threading.Event()

    def run() -> None:
        calls.append(len(calls))
        if len(calls) == 3:
            third.set()
        if len(calls) == 1:
            raise RuntimeError("boom")

    ticker = Ticker("test-ticker", run, 0.01)
    ticker.start()
    try:
        assert third.wait(5)
    finally:
        ticker.stop()
    assert "test-ticker: a tick failed; the next one tries again" in caplog.text
    assert ticker.stopping


def test_at_start_runs_once_before_the_first_interval() -> None:
    ran = threading.Event()
    ticker = Ticker("test-ticker", ran.set, 3600, at_start=True)
    ticker.start()
    try:
        assert ran.wait(5)  # an interval of an hour: only the start run can have set it
    finally:
        ticker.stop()


def test_without_at_start_nothing_runs_before_the_interval() -> None:
    ran = threading.Event()
    ticker = Ticker("test-ticker", ran.set, 3600)
    ticker.start()
    ticker.stop()
    assert not ran.is_set()
