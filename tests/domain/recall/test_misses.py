"""bench.misses: its findings are exactly what the write path's figures count, each says how it went wrong, and the
blind set is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import misses, write_path
from bench.vectors import CachedEncoder
from nightwatch.adapters.encoder import embeddings

pytestmark = pytest.mark.skipif(not embeddings.available(), reason="the all-MiniLM-L6-v2 package is not installed")


def memory(id: str, text: str, day: int) -> dict[str, str]:
    return {"id": id, "text": text, "created_at": f"2026-03-{day:02d}T10:00:00Z"}


CASE = {
    "id": "tiny",
    "persona": "p",
    "project": "tiny",
    "memories": [
        memory("m1", "Ledger audit logs are kept for 7 years in the archive bucket.", 1),
        memory("m2", "Deploy logs are kept for 10 days in the build bucket.", 2),
        memory("m3", "Ledger audit logs are now kept 10 years, not 7, since the inspection.", 3),
        memory("m4", "Card numbers never reach the application logs; the tokenizer masks them first.", 4),
        memory("m5", "The staging cluster is rebuilt from scratch every Sunday night.", 5),
    ],
    "queries": [
        # labelled against what curation will do: m1 is retired by m3, so asking for it finds it missing
        {"id": "q1", "text": "How long are ledger audit logs kept?", "relevant": ["m1"], "kind": "lexical"},
        {"id": "q2", "text": "How long are audit logs kept?", "relevant": ["m3"], "kind": "update", "stale": ["m1"]},
        {"id": "q3", "text": "Where do card numbers get masked?", "relevant": ["m4", "m5"], "kind": "lexical"},
        {"id": "q4", "text": "How long are deploy logs kept?", "relevant": ["m5"], "kind": "lexical", "stale": ["m2"]},
    ],
    "duplicates": [],
    "not_duplicates": [["m2", "m3"]],
}


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.jsonl"
    path.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("budget", [1000, 170])  # 170 tokens hold one lesson
def test_the_findings_are_what_the_write_path_counts(dataset: Path, tmp_path: Path, budget: int) -> None:
    encoder = CachedEncoder(tmp_path / "vectors")
    found = misses.listing(str(dataset), budget, encoder)
    figures = write_path.measure(str(dataset), budget, encoder=encoder)
    missing = [(f.query, f.memory) for f in found if f.kind == "missing"]
    asked = [query for query in CASE["queries"] if query["relevant"]]  # type: ignore[attr-defined]
    shares = [1 - sum(q == query["id"] for q, _ in missing) / len(query["relevant"]) for query in asked]
    assert sum(shares) / len(shares) == pytest.approx(figures["block_recall"], abs=1e-4)
    stale_in = sum(f.kind == "stale in" for f in found)
    assert 1 - stale_in / 2 == pytest.approx(figures["stale_left_out"])


def test_each_finding_says_how_it_went_wrong(dataset: Path, tmp_path: Path) -> None:
    found = misses.listing(str(dataset), 1000, CachedEncoder(tmp_path / "vectors"))
    by = {(f.kind, f.query, f.memory): f for f in found}
    retired = by[("missing", "q1", "m1")]
    assert retired.why == f"retired at write by: {CASE['memories'][2]['text']}"  # type: ignore[index]
    stale = by[("stale in", "q4", "m2")]  # its "successor" is another thing: it stays, and says where each ranked
    assert stale.why.startswith("ranked ")
    assert ", its successor m5 " in stale.why
    assert ("missing", "q2", "m3") not in by
    assert ("stale in", "q2", "m1") not in by
    assert all(f.line().startswith(f"[tiny {f.query}".rstrip() + "]") for f in found)
    below = misses.listing(str(dataset), 170, CachedEncoder(tmp_path / "vectors"))
    assert "below the budget (it holds 1)" in {f.memory: f for f in below if f.query == "q3"}["m5"].why


def test_the_blind_set_is_refused(tmp_path: Path) -> None:
    blind = tmp_path / "blind" / "part_x.jsonl"
    blind.parent.mkdir()
    blind.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match="blind set"):
        misses.listing(str(blind))
    with pytest.raises(SystemExit):
        misses.main(["--dataset", str(blind)])
