"""The retrieval benchmark runs end to end on a tiny dataset written here (the real data stays in ../shared)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import retrieval

CASE = {
    "id": "tiny",
    "persona": "p",
    "project": "tiny",
    "extra_field": "ignored",
    "memories": [
        {"id": "m1", "text": "Release train runs on Tuesdays.", "created_at": "2026-01-05T10:00:00Z"},
        {"id": "m2", "text": "Release train runs on Wednesdays now.", "created_at": "2026-03-01T10:00:00Z"},
        {"id": "m3", "text": "Use auth_service.py for token refresh.", "created_at": "2026-02-01T10:00:00Z"},
        {"id": "m4", "text": "Use auth_service.py for token refresh!", "created_at": "2026-02-02T10:00:00Z"},
        {"id": "m5", "text": "Lunch is at noon.", "created_at": "2026-02-03T10:00:00Z", "source": "x"},
    ],
    "queries": [
        {
            "id": "q1",
            "text": "When does the release train run?",
            "relevant": ["m2"],
            "kind": "temporal",
            "stale": ["m1"],
        },
        {"id": "q2", "text": "token refresh in auth_service.py", "relevant": ["m3", "m4"], "kind": "single-hop"},
        {"id": "q3", "text": "Anything about the moon?", "relevant": [], "kind": "single-hop"},
    ],
    "duplicates": [["m3", "m4"]],
    "not_duplicates": [["m1", "m2"]],
}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    return path


def test_every_method_reports_the_figures_the_issue_asks_for(dataset: Path) -> None:
    result = retrieval.evaluate(str(dataset), k=3, budget=30, with_latency=False)
    assert result["dataset"] == str(dataset)
    default = result["methods"]["default"]
    for name in ("recall@3", "recall@5", "recall@10", "budget_recall@30", "budget_recall@1000", "p50_ms", "p95_ms"):
        assert name in default
        assert name in result["methods"]["bm25"]
    assert default["recall@5"] == 1.0
    assert default["queries"] == 2  # the query with nothing relevant counts for no recall figure
    assert set(default["kinds"]) == {"temporal", "single-hop"}
    assert default["stale_ok"] == 1.0
    assert default["dedup_recall"] == 1.0
    assert default["dedup_precision"] == 1.0
    assert "budget_recall@2000" in result["truncation"]
    assert "dense" in result["methods"]


def test_a_tight_budget_finds_less_and_the_block_fits(dataset: Path) -> None:
    result = retrieval.evaluate(str(dataset), budget=12, with_latency=False)
    assert result["methods"]["default"]["budget_recall@12"] < result["methods"]["default"]["budget_recall@1000"]


def test_the_cli_prints_one_json_document(dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert retrieval.main(["--dataset", str(dataset), "--json", "--no-latency"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert {"dataset", "methods", "truncation"} <= set(document)
    assert retrieval.main(["--dataset", str(dataset), "--no-latency"]) == 0
    assert "truncation" in capsys.readouterr().out
