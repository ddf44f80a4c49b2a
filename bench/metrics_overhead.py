"""What the metrics cost a turn: the metered model call, the timed memory read and the turn's share of the counts.

    python -m bench.metrics_overhead [--turns 20000]

Each measured turn does what `nightwatch run` records for one: a model call through `MeteredLLM` (to a model that
answers instantly, so only the recording is timed, less the same call unmetered), a memory read through
`TimedSource`, and the end-of-deliberation counts for one turn. It prints p50 and p95 in microseconds; the target is
p95 < 1 ms.
"""

from __future__ import annotations

import argparse
import statistics
import time

from nightwatch.adapters.runtime import MeteredLLM, Metrics, TimedSource
from nightwatch.domain.context import ContextAsk, ContextPart
from nightwatch.domain.llm import ChatMessage, LLMRequest, LLMResponse, PromptBlock, Purpose, SystemPrompt, Usage


class InstantModel:
    def complete(self, request: LLMRequest) -> LLMResponse:
        return LLMResponse("ok", Usage(1200, 150, 900, 0))


class NothingKnown:
    name = "memory"

    def read(self, ask: ContextAsk) -> ContextPart:
        raise NotImplementedError  # never called: the timer's own cost is measured around a no-op below


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000)
    turns = parser.parse_args().turns
    metrics = Metrics()
    bare, metered = InstantModel(), MeteredLLM(InstantModel(), metrics)
    TimedSource(NothingKnown(), metrics)  # built as the wiring builds it
    request = LLMRequest(
        purpose=Purpose.TURN,
        system=SystemPrompt((PromptBlock("You are Maya."),)),
        messages=(ChatMessage("user", "hi"),),
    )
    costs: list[float] = []
    for _ in range(turns):
        started = time.perf_counter()
        bare.complete(request)
        plain = time.perf_counter() - started
        started = time.perf_counter()
        metered.complete(request)
        with metrics.memory_read_seconds.time():
            pass
        metrics.turns.labels("posted").inc()
        metrics.deliberations.labels("approve").inc()
        costs.append(max(0.0, time.perf_counter() - started - plain))
    costs.sort()
    p50, p95 = statistics.median(costs) * 1e6, costs[int(len(costs) * 0.95)] * 1e6
    print(f"metrics overhead per turn over {turns} turns: p50 {p50:.1f} µs, p95 {p95:.1f} µs (target p95 < 1000 µs)")


if __name__ == "__main__":
    main()
