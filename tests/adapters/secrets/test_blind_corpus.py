"""The blind corpus: every secret its author wrote is redacted, every look-alike is left as it was.

Scoring as its README suggests: a secret item passes when none of its secrets survives; a harmless item when all of
its `keep` substrings do.
"""

from __future__ import annotations

import pytest

from nightwatch.adapters.secrets.redaction import redact
from tests.adapters.secrets.blind_corpus import HARMLESS_ITEMS, ITEMS, SECRET_ITEMS, Item


def test_the_corpus_is_what_its_readme_says() -> None:
    assert (len(SECRET_ITEMS), len(HARMLESS_ITEMS)) == (284, 148)
    assert len({item.label for item in SECRET_ITEMS}) == 127
    assert all(part in item.text for item in ITEMS for part in (*item.secrets, *item.keep))


@pytest.mark.parametrize("item", SECRET_ITEMS, ids=lambda item: f"{item.id}-{item.label}-{item.form}")
def test_every_secret_of_the_blind_corpus_is_redacted(item: Item) -> None:
    redacted = redact(item.text)
    assert [secret for secret in item.secrets if secret in redacted] == [], redacted
    assert redact(redacted) == redacted


@pytest.mark.parametrize("item", HARMLESS_ITEMS, ids=lambda item: f"{item.id}-{item.form}")
def test_every_look_alike_of_the_blind_corpus_is_left_alone(item: Item) -> None:
    redacted = redact(item.text)
    assert [kept for kept in item.keep if kept not in redacted] == [], redacted
