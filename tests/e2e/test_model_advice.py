"""A model's curation advice is checked before it is followed: a careless model (random verdicts, through the real
anthropic client and the fake server) does no worse than the rules alone by more than 0.05 on any figure."""

from __future__ import annotations

import json
from pathlib import Path

from bench.model_advice import careful, careless, with_model
from bench.vectors import CachedEncoder
from bench.write_path import measure

LESSONS = [
    ("m1", "Rotate the API keys every 90 days."),
    ("m2", "The Android app bundle must stay under 40 MB."),
    ("m3", "We decided to keep the monolith for the billing code."),
    ("m4", "The mobile team owns the push gateway on-call."),
    ("m5", "Use a one day TTL for cached exchange rates."),
    ("m6", "API keys should be rotated every ninety days."),
    ("m7", "The iOS app bundle must stay under 120 MB."),
    ("m8", "We reversed the decision to keep billing in the monolith: it becomes its own service."),
    ("m9", "The platform team took over the push gateway on-call from the mobile team."),
    ("m10", "Cached exchange rates expire after 24 hours."),
    ("m11", "Rotate API keys every 30 days now, not 90."),
]
CASE = {
    "id": "hand-written",
    "persona": "Maya",
    "project": "advice",
    "split": "tune",
    "memories": [
        {"id": mid, "text": text, "created_at": f"2026-0{1 + n // 3}-{10 + n:02d}T10:00:00Z"}
        for n, (mid, text) in enumerate(LESSONS)
    ],
    "queries": [
        {
            "id": "q1",
            "text": "How often do we rotate API keys?",
            "relevant": ["m11"],
            "kind": "update",
            "stale": ["m1"],
        },
        {
            "id": "q2",
            "text": "Is billing staying in the monolith?",
            "relevant": ["m8"],
            "kind": "update",
            "stale": ["m3"],
        },
        {"id": "q3", "text": "Who is on call for push?", "relevant": ["m9"], "kind": "update", "stale": ["m4"]},
        {"id": "q4", "text": "How big may the Android bundle be?", "relevant": ["m2"], "kind": "lexical"},
    ],
    "duplicates": [["m1", "m6"], ["m5", "m10"]],
    "not_duplicates": [["m2", "m7"]],
}
FIGURES = ("duplicates_merged", "not_duplicates_kept", "stale_left_out", "block_recall")


def test_a_careless_model_is_no_worse_than_the_rules_and_a_careful_one_no_worse_either(tmp_path: Path) -> None:
    data = tmp_path / "hand.jsonl"
    data.write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    encoder = CachedEncoder(tmp_path / "vectors")
    rules = measure(str(data), encoder=encoder)
    for seed in (1, 2, 3):
        sloppy = with_model(str(data), careless(seed), None, encoder)
        for name in FIGURES:
            assert sloppy[name] >= rules[name] - 0.05, (seed, name, sloppy, rules)
    good = with_model(str(data), careful(str(data)), None, encoder)
    assert all(good[name] >= rules[name] - 0.05 for name in FIGURES)
