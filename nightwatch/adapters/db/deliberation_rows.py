"""Rows of the deliberation log and the domain's values, both ways: deliberations, turns, verdicts, usage.

Every text written is redacted first (a backstop: secrets are redacted where they enter and where the model answers).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import RowMapping

from nightwatch.adapters.db.schema import utc
from nightwatch.adapters.secrets import redact_backstop
from nightwatch.domain.deliberation.models import (
    ChangesRequest,
    Decision,
    Deliberation,
    DeliberationStatus,
    Turn,
    Verdict,
)
from nightwatch.domain.llm import Usage

USAGE_COLUMNS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")


def clean(text: str) -> str:
    """`text` with any secret redacted, as the deliberation log stores it."""
    return redact_backstop(text, "the deliberation log")


def usage_values(usage: Usage) -> dict[str, int]:
    return {name: getattr(usage, name) for name in USAGE_COLUMNS}


def usage_from_row(row: RowMapping) -> Usage:
    return Usage(*(int(row[name] or 0) for name in USAGE_COLUMNS))


def verdict_json(verdict: Verdict | None) -> dict[str, Any] | None:
    if verdict is None:
        return None
    return {
        "decision": verdict.decision.value,
        "summary": clean(verdict.summary),
        "reasons": [clean(reason) for reason in verdict.reasons],
        "action_items": [clean(item) for item in verdict.action_items],
    }


def verdict_from_json(data: Any) -> Verdict | None:
    if not isinstance(data, dict) or data.get("decision") not in Decision.__members__:
        return None
    return Verdict(
        decision=Decision(data["decision"]),
        summary=str(data.get("summary", "")),
        reasons=tuple(str(r) for r in data.get("reasons", ())),
        action_items=tuple(str(a) for a in data.get("action_items", ())),
    )


def changes_json(changes: ChangesRequest) -> dict[str, Any]:
    """The lead's request for one more round as stored: its verdict's JSON and the round it opened."""
    return {"round": changes.round, **(verdict_json(changes.verdict) or {})}


def changes_from_json(data: Any) -> ChangesRequest | None:
    """The stored request for one more round; None when there is none (or it cannot be read: the turns go without)."""
    found = verdict_from_json(data)
    if found is None or not isinstance(data.get("round"), int):
        return None
    return ChangesRequest(round=int(data["round"]), verdict=found)


def deliberation_from_row(row: RowMapping) -> Deliberation:
    return Deliberation(
        topic=row["topic"],
        project=row["project"],
        thread=row["thread"],
        status=DeliberationStatus(row["status"]),
        started_at=utc(row["started_at"]),
        finished_at=utc(row["finished_at"]),
        verdict=verdict_from_json(row["verdict"]),
        usage=usage_from_row(row),
        id=int(row["id"]),
        owner=row["owner"],
        heartbeat_at=utc(row["heartbeat_at"]),
        takeovers=int(row["takeovers"] or 0),
        changes=changes_from_json(row["changes"]),
    )


def turn_from_row(row: RowMapping) -> Turn:
    return Turn(
        persona=row["persona"],
        role=row["role"],
        text=row["text"],
        round=int(row["round"]),
        lessons_injected=int(row["lessons_injected"]),
        skipped=bool(row["skipped"]),
        usage=usage_from_row(row),
        created_at=utc(row["created_at"]),
    )
