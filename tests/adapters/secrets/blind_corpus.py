"""The blind secrets corpus (tests/data/secrets_blind/): written by someone who had not seen our patterns."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "data" / "secrets_blind" / "corpus.jsonl"


@dataclass(frozen=True)
class Item:
    """A text and what must go (`secrets`) or stay (`keep`) when it is redacted."""

    id: str
    label: str  # the provider, or the look-alike's form
    form: str
    text: str
    secrets: tuple[str, ...] = ()
    keep: tuple[str, ...] = ()


def _load() -> tuple[Item, ...]:
    items = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        label = raw.get("provider") or raw["kind"]
        items.append(
            Item(raw["id"], label, raw["form"], raw["text"], tuple(raw.get("secrets", ())), tuple(raw.get("keep", ())))
        )
    return tuple(items)


ITEMS = _load()
SECRET_ITEMS = tuple(item for item in ITEMS if item.secrets)
HARMLESS_ITEMS = tuple(item for item in ITEMS if item.keep)


def chunks(items: tuple[Item, ...], limit: int, separator: str = "\n\n") -> list[str]:
    """The items' texts joined into as few texts of at most `limit` characters as fit (an item never split)."""
    out: list[str] = []
    for item in items:
        text = item.text.strip()
        if out and len(out[-1]) + len(separator) + len(text) <= limit:
            out[-1] += separator + text
        else:
            out.append(text)
    return out
