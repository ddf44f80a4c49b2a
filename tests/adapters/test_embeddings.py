"""The optional dense encoder: all-MiniLM-L6-v2 loaded offline from its package (skipped without the extra)."""

from __future__ import annotations

import math

import pytest

from nightwatch.adapters import embeddings
from nightwatch.domain.errors import ConfigError

needs_extra = pytest.mark.skipif(not embeddings.available(), reason="the 'semantic' extra is not installed")


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(sum(x * x for x in a) * sum(y * y for y in b))


@pytest.mark.skipif(embeddings.available(), reason="the 'semantic' extra is installed")
def test_without_the_extra_the_error_says_how_to_install_it() -> None:
    with pytest.raises(ConfigError, match=r"nightwatch\[semantic\]"):
        embeddings.MiniLMEmbedder().embed(["anything"])


@needs_extra
def test_loads_offline_and_puts_paraphrases_close(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    encoder = embeddings.MiniLMEmbedder()
    deploy, ship, lunch = encoder.embed(
        ["Never deploy on a Friday afternoon.", "Do not ship releases late on Fridays.", "The cafeteria serves soup."]
    )
    assert len(deploy) == 384
    assert math.isclose(sum(x * x for x in deploy), 1.0, rel_tol=1e-3)
    assert cosine(deploy, ship) > cosine(deploy, lunch) + 0.2


@needs_extra
def test_a_text_is_encoded_once() -> None:
    encoder = embeddings.MiniLMEmbedder(cache_size=2)
    first = encoder.embed(["alpha", "beta", "alpha"])
    assert encoder.encoded == 2
    assert encoder.embed(["beta", "alpha"]) == [first[1], first[0]]
    assert encoder.encoded == 2
    encoder.embed(["gamma"])  # beta, the least recently used, goes to make room
    encoder.embed(["alpha"])
    assert encoder.encoded == 3
    encoder.embed(["beta"])
    assert encoder.encoded == 4
