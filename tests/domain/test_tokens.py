from __future__ import annotations

from nightwatch.domain.tokens import estimate_tokens


def test_empty_text_costs_nothing() -> None:
    assert estimate_tokens("") == 0


def test_the_estimate_errs_high_against_a_words_per_token_rule() -> None:
    text = "The auth module couples to the session store; review changes to both together."
    assert estimate_tokens(text) >= len(text.split())


def test_long_identifiers_and_numbers_cost_more_than_one_token() -> None:
    assert estimate_tokens("internationalization") > estimate_tokens("word")
    assert estimate_tokens("1234567890") >= 4


def test_non_ascii_text_is_not_undercounted() -> None:
    assert estimate_tokens("東京都") >= 6


def test_estimate_is_never_below_chars_over_four() -> None:
    samples = ["a" * 400, "lorem ipsum dolor sit amet " * 20, "x=1; y=2; z=3;" * 30, "🚀" * 50]
    for text in samples:
        assert estimate_tokens(text) >= len(text) / 4
