"""With a model's advice the write path is no worse than the rule alone.

The real anthropic client talks to the fake Anthropic server, which answers curation prompts as a careful model
would: it knows, from the data set's labels, which lesson a candidate restates or updates, and says so only when
that lesson is among the neighbours it was shown (neighbours by meaning, so a paraphrase reaches it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench import write_path
from bench.retrieval import PERSONA_SET
from bench.vectors import CachedEncoder
from nightwatch.adapters.anthropic_llm import AnthropicLLM
from nightwatch.adapters.encoder import embeddings
from tests.fake_anthropic import FakeAnthropic, default_responder, request_text

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not embeddings.available(), reason="the all-MiniLM-L6-v2 package is not installed"),
]
CASES = ("maya-payments", "carlos-storefront")
RELATED = re.compile(r"^- \[([0-9a-f]{8})\] (.*)$", re.MULTILINE)


def labelled_cases() -> list[dict[str, Any]]:
    lines = PERSONA_SET.read_text(encoding="utf-8").splitlines()
    return [case for case in map(json.loads, lines) if case["id"] in CASES]


class CarefulModel:
    """Answers curation from the labels: merge a labelled restatement, supersede a labelled update, else create."""

    def __init__(self, cases: list[dict[str, Any]]) -> None:
        self.restates: dict[str, set[str]] = {}
        self.updates: dict[str, set[str]] = {}
        self.asked = 0
        for case in cases:
            text = {memory["id"]: memory["text"] for memory in case["memories"]}
            date = {memory["id"]: memory["created_at"] for memory in case["memories"]}
            for older, newer in case["duplicates"]:
                self.restates.setdefault(text[newer], set()).add(text[older])
            for query in case["queries"]:
                # Each version of a fact updates every older one: 8 hours -> 30 minutes -> 15 minutes.
                chain = [*sorted(query.get("stale", []), key=date.__getitem__), *query["relevant"]]
                for at, newer in enumerate(chain):
                    self.updates.setdefault(text[newer], set()).update(text[old] for old in chain[:at])

    def __call__(self, body: dict[str, Any]) -> str:
        system, _ = request_text(body)
        if "New lesson:" not in system:
            return default_responder(body)
        self.asked += 1
        block = system.split("New lesson:", 1)[1].split("<memory>", 1)[1]
        candidate = block.split("</memory>", 1)[0].strip()
        shown = {text.strip(): lesson_id for lesson_id, text in RELATED.findall(system)}
        for action, labels in (("merge", self.restates), ("supersede", self.updates)):
            target = next((shown[text] for text in labels.get(candidate, ()) if text in shown), None)
            if target is not None:
                return json.dumps({"action": action, "target": target})
        return json.dumps({"action": "create", "target": None})


@pytest.fixture
def subset(tmp_path: Path) -> tuple[Path, CarefulModel]:
    cases = labelled_cases()
    path = tmp_path / "subset.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")
    return path, CarefulModel(cases)


@pytest.fixture
def advised(subset: tuple[Path, CarefulModel]) -> Iterator[tuple[AnthropicLLM, CarefulModel]]:
    _, model = subset
    with FakeAnthropic(responder=model) as fake:
        llm = AnthropicLLM(api_key="sk-ant-test", default_model="claude-test", base_url=fake.url, timeout=5.0)
        try:
            yield llm, model
        finally:
            llm.close()


def test_the_models_advice_makes_the_write_path_no_worse(
    subset: tuple[Path, CarefulModel], advised: tuple[AnthropicLLM, CarefulModel], tmp_path: Path
) -> None:
    path, _ = subset
    llm, model = advised
    encoder = CachedEncoder(tmp_path / "vectors")
    alone = write_path.measure(str(path), budget=1000, encoder=encoder)
    helped = write_path.measure(str(path), budget=1000, llm=llm, encoder=encoder)
    assert model.asked > 0
    assert helped["model"] == "advice"
    for figure in ("duplicates_merged", "not_duplicates_kept", "stale_left_out", "block_recall"):
        assert helped[figure] >= alone[figure], (figure, alone, helped)
    assert helped["duplicates_merged"] + helped["stale_left_out"] > alone["duplicates_merged"] + alone["stale_left_out"]
