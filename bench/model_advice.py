"""Curation with a model's advice: the write path with the fake Anthropic server as a careful and a careless model.

    python -m bench.model_advice [--dataset FILE.jsonl] [--split tune|report] [--seeds 1,2,3,7]

The real `anthropic` client talks to tests/fake_anthropic.py. The careful model answers from the data set's labels
(a restatement merges into the lesson it restates, a successor supersedes its stale lesson, else create); the
careless one answers at random (create, merge, supersede or skip, with a random shown lesson; seeded). Advice is
checked against the curation rules before it is followed (curation.advice_holds), so the careless model may not make
any figure worse than the rules alone by more than 0.05.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Callable
from typing import Any

from bench.retrieval_data import load
from bench.vectors import CachedEncoder
from bench.write_path import measure, summary
from nightwatch.adapters.anthropic_llm import AnthropicLLM
from nightwatch.domain.memory import lesson_id
from tests.fake_anthropic import FakeAnthropic, request_text

_SHOWN = re.compile(r"^- \[([0-9a-f]{6,})\]", re.MULTILINE)
_CANDIDATE = re.compile(r"New lesson[^\n]*\n<memory>\n(.*?)\n</memory>", re.DOTALL)
Responder = Callable[[dict[str, Any]], str]


def careless(seed: int = 7) -> Responder:
    rng = random.Random(seed)

    def answer(body: dict[str, Any]) -> str:
        system, instruction = request_text(body)
        shown = _SHOWN.findall(f"{system}\n{instruction}")
        action = rng.choice(["create", "merge", "supersede", "skip"])
        target = rng.choice(shown) if shown and action in ("merge", "supersede") else None
        return json.dumps({"action": action, "target": target})

    return answer


def careful(path: str) -> Responder:
    """Answers from the labels: which shown lesson the candidate restates or replaces."""
    relation: dict[tuple[str, str], str] = {}
    for case in load(path):
        text = {memory.id: memory.text for memory in case.memories}
        for a, b in case.duplicates:
            relation[(lesson_id(text[b]), lesson_id(text[a]))] = "merge"
        for query in case.queries:
            for stale in query.stale:
                for newer in query.relevant:
                    relation[(lesson_id(text[newer]), lesson_id(text[stale]))] = "supersede"

    def answer(body: dict[str, Any]) -> str:
        system, instruction = request_text(body)
        prompt = f"{system}\n{instruction}"
        found = _CANDIDATE.search(prompt)
        candidate = lesson_id(found.group(1).strip()) if found else ""
        for shown in _SHOWN.findall(prompt):
            action = relation.get((candidate, shown))
            if action:
                return json.dumps({"action": action, "target": shown})
        return json.dumps({"action": "create", "target": None})

    return answer


def with_model(path: str, responder: Responder, split: str | None, encoder: CachedEncoder) -> dict[str, Any]:
    with FakeAnthropic(responder) as fake:
        llm = AnthropicLLM(api_key="sk-ant-bench", default_model="claude-fake", base_url=fake.url, max_retries=0)
        return measure(path, llm=llm, encoder=encoder, split=split)


FIGURES = ("duplicates_merged", "not_duplicates_kept", "stale_left_out", "block_recall")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write path with a careful and a careless model's advice.")
    parser.add_argument("--dataset", default="bench/data/persona_lessons.jsonl")
    parser.add_argument("--split", choices=("tune", "report"))
    parser.add_argument("--seeds", default="1,2,3,7", help="the careless model's seeds, comma-separated")
    args = parser.parse_args(argv)
    encoder = CachedEncoder()
    rules = measure(args.dataset, encoder=encoder, split=args.split)
    results = {"rules": rules, "careful": with_model(args.dataset, careful(args.dataset), args.split, encoder)}
    seeds = [int(seed) for seed in args.seeds.split(",")]
    results |= {f"careless {seed}": with_model(args.dataset, careless(seed), args.split, encoder) for seed in seeds}
    for name, result in results.items():
        print(f"{name}: {summary(result)}")
    worst = {
        name: min((r[name] or 0.0) - (rules[name] or 0.0) for key, r in results.items() if key.startswith("careless"))
        for name in FIGURES
    }
    print("careless, worst change from the rules alone (at most -0.05 allowed): " + ", ".join(
        f"{name} {change:+.3f}" for name, change in worst.items()))  # fmt: skip
    return 1 if any(change < -0.05 for change in worst.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())
