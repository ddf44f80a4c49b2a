"""The retrieval benchmark runs end to end on a tiny dataset written here (the real data stays in ../shared)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bench import point_map, retrieval, retrieval_data, write_path
from bench.vectors import CachedEncoder
from nightwatch.adapters.encoder import embeddings
from nightwatch.domain.memory.ports import READING

pytestmark = pytest.mark.skipif(not embeddings.available(), reason="the all-MiniLM-L6-v2 package is not installed")

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
        {"id": "m6", "text": "The hotfix train runs on Mondays.", "created_at": "2026-03-02T10:00:00Z"},
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
    "not_duplicates": [["m2", "m6"]],
}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def encoder(tmp_path: Path) -> CachedEncoder:
    return CachedEncoder(tmp_path / "vectors")


def test_every_method_reports_the_figures_the_issue_asks_for(dataset: Path, encoder: CachedEncoder) -> None:
    result = retrieval.evaluate(str(dataset), k=3, budget=30, with_latency=False, encoder=encoder)
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
    assert default["not_duplicates_kept"] == 1.0
    assert "budget_recall@2000" in result["truncation"]
    assert {"bm25", "dense", "keywords", "default"} <= set(result["methods"])
    assert set(default["halves"]) == {"tune"}  # one case: the first half


def test_a_tight_budget_finds_less_and_the_block_fits(dataset: Path, encoder: CachedEncoder) -> None:
    result = retrieval.evaluate(str(dataset), budget=12, with_latency=False, encoder=encoder)
    assert result["methods"]["default"]["budget_recall@12"] < result["methods"]["default"]["budget_recall@1000"]


def test_the_write_path_merges_restatements_and_retires_updates(dataset: Path, encoder: CachedEncoder) -> None:
    result = write_path.measure(str(dataset), budget=1000, encoder=encoder)
    assert result["duplicates_merged"] == 1.0  # m4 restates m3
    assert result["not_duplicates_kept"] == 1.0  # another train, another day: two lessons
    assert result["stale_left_out"] == 1.0  # m2 ("now") retires m1 from the block
    assert result["block_recall"] == 1.0
    assert "duplicates merged 1.0000 of 1" in write_path.summary(result)


def test_held_out_files_are_pooled_under_the_map_given(dataset: Path, encoder: CachedEncoder) -> None:
    """`python -m bench.point_map --write-path` sums each file's counts, read under the map it is given."""
    once = write_path.tally(str(dataset), encoder=encoder)
    twice = point_map.write_path([dataset, dataset], np.eye(384), encoder)
    assert (twice.duplicates, twice.stale, twice.queries) == (2 * once.duplicates, 2 * once.stale, 2 * once.queries)
    assert (twice.merged, twice.stale_out, twice.found) == (2 * once.merged, 2 * once.stale_out, 2 * once.found)
    assert twice.report()["stale_left_out"] == once.report()["stale_left_out"] == 1.0
    assert point_map.figures(twice).startswith("1.000 / 1.000 / 1.000 / 1.0000 (of 2 restatements")


def test_the_write_path_can_give_each_memory_the_offline_models_category(dataset: Path, encoder: CachedEncoder) -> None:
    result = write_path.measure(str(dataset), budget=1000, encoder=encoder, categories=True)
    assert result["model"] == "offline rule, categories inferred"
    # These memories read as patterns (no date, fix, preference, owner or version): the meaning rule, as before.
    assert (result["duplicates_merged"], result["stale_left_out"]) == (1.0, 1.0)


def test_no_pairs_read_give_no_rows_of_the_readings_width(encoder: CachedEncoder) -> None:
    assert encoder.alignment([]).shape == (0, READING)


@pytest.mark.slow
def test_the_read_path_benchmark_runs_on_a_small_file() -> None:
    from bench import read_latency

    result = read_latency.measure(lessons=60, reads=3)
    assert result["lessons"] == 60
    assert result["injected"] > 0
    assert result["cold_ms"] > 0
    assert result["cold_changed_ms"] > 0
    assert result["cold_unindexed_ms"] > 0
    assert result["index_bytes"] > 0
    assert result["score_ms"] > 0
    assert "first read in a new process" in read_latency.summary(result)


def test_the_memory_store_benchmark_runs_on_a_small_memory() -> None:
    from bench import memory_store

    result = memory_store.run(lessons=40, rounds=2, database_url=None)
    assert set(result) == {"lessons", "rounds", "files", "sqlite"}
    for store in ("files", "sqlite"):
        assert set(result[store]) == {"read", "read_vectors", "update", "save_vectors", "service_read"}
        assert all(timing["p95_ms"] >= timing["p50_ms"] > 0 for timing in result[store].values())
    assert "sqlite: read " in memory_store.summary(result)


def test_the_side_by_side_table_gives_each_pair_figure_its_interval() -> None:
    assert retrieval_data.wilson(0.5, 100) == pytest.approx((0.404, 0.596), abs=0.001)
    assert retrieval_data.wilson(1.0, 10) == pytest.approx((0.722, 1.0), abs=0.001)
    pairs = {"duplicates": 80, "not_duplicates": 81, "stale": 0}
    wrote = {"dataset": "part_b.jsonl", "pairs": pairs, "duplicates_merged": 0.725, "not_duplicates_kept": 0.963,
             "stale_left_out": None, "block_recall": 0.97}  # fmt: skip
    found = {"methods": {"default": {"stale_ok": 0.89}}}
    table = retrieval.side_by_side([wrote], [{"newest_recall": 0.95, "lost": 0}], [found])
    assert table.splitlines()[-1].split() == ["part_b.jsonl", "0.62-0.81", "0.90-0.99", "-"]
