"""The health server: /healthz, /readyz with its reason, and /metrics fed by the metered model."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from nightwatch.adapters.offline import OfflineLLM
from nightwatch.adapters.runtime.health import HealthServer
from nightwatch.adapters.runtime.metrics import MeteredLLM, Metrics
from nightwatch.domain.llm import ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt


class Readiness:
    def __init__(self) -> None:
        self.problem: str | None = "Socket Mode is not connected"

    def __call__(self) -> str | None:
        return self.problem


@pytest.fixture
def served() -> Iterator[tuple[str, Metrics, Readiness]]:
    metrics, ready = Metrics(), Readiness()
    server = HealthServer(host="127.0.0.1", port=0, metrics=metrics, not_ready=ready)
    server.start()
    yield f"http://127.0.0.1:{server.port}", metrics, ready
    server.stop()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_healthz_answers_while_serving(served: tuple[str, Metrics, Readiness]) -> None:
    url, _, _ = served
    assert get(f"{url}/healthz") == (200, "ok\n")


def test_readyz_is_503_with_the_reason_until_ready(served: tuple[str, Metrics, Readiness]) -> None:
    url, _, ready = served
    assert get(f"{url}/readyz") == (503, "Socket Mode is not connected\n")
    ready.problem = None
    assert get(f"{url}/readyz") == (200, "ready\n")


def test_metrics_count_model_calls_and_their_tokens(served: tuple[str, Metrics, Readiness]) -> None:
    url, metrics, _ = served
    llm = MeteredLLM(OfflineLLM(), metrics)
    llm.complete(
        LLMRequest(
            purpose=Purpose.TURN,
            system=SystemPrompt((PromptBlock("You are Maya."),)),
            messages=(ChatMessage("user", "hi"),),
        )
    )
    status, text = get(f"{url}/metrics")
    assert status == 200
    assert 'nightwatch_model_calls_total{kind="turn",status="ok"} 1.0' in text
    assert "nightwatch_model_call_seconds_count 1.0" in text
    for name in (
        "nightwatch_deliberations_total",
        "nightwatch_turns_total",
        "nightwatch_model_tokens_total",
        "nightwatch_lessons_total",
        "nightwatch_memory_read_seconds",
        "nightwatch_slack_ack_seconds",
        "nightwatch_busy_total",
        "nightwatch_takeovers_total",
    ):
        assert f"# HELP {name.removesuffix('_total')}" in text or f"# TYPE {name}" in text or name in text
