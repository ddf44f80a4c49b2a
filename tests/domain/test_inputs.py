"""The rules every typed value shares: free text without control characters, whole numbers in a range."""

from __future__ import annotations

import pytest

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.inputs import check_printable, check_text, forbidden_character, shown, whole_number


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("plain words, emoji 🔒 and accents é", None),
        ("tabs\tand\nline\r\nbreaks", None),
        ("nul \x00 inside", "\x00"),
        ("an escape \x1b[31m sequence", "\x1b"),
        ("delete \x7f", "\x7f"),
        ("a C1 control \x9b", "\x9b"),
        ("a stray byte \udcff", "\udcff"),
    ],
)
def test_forbidden_character_finds_controls_and_lone_surrogates_only(text: str, found: str | None) -> None:
    assert forbidden_character(text) == found


def test_check_text_strips_and_keeps_good_text() -> None:
    assert check_text("  Rotate the keys.\nThen tell ops.  ", what="The topic", limit=40, example="x") == (
        "Rotate the keys.\nThen tell ops."
    )


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("", "The note cannot be empty: give 1-10 characters, for example 'hi'."),
        (" \t\n ", "The note cannot be empty"),
        (None, "The note cannot be empty"),
        ("x" * 11, "The note is 11 characters long; shorten it to at most 10."),
        ("a\x00b", "The note contains the control character '\\x00'; use printable text"),
        ("a\udcffb", "The note contains '\\udcff', a stray byte that is not UTF-8 text"),
    ],
)
def test_check_text_says_what_it_accepts(raw: object, says: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_text(raw, what="The note", limit=10, example="'hi'")
    assert says in str(caught.value)


def test_check_printable_returns_the_text_it_accepts() -> None:
    assert check_printable("fine\ttext", what="The note") == "fine\ttext"
    with pytest.raises(InvalidInputError, match="control character"):
        check_printable("bell\a", what="The note")


@pytest.mark.parametrize(("raw", "value"), [("1", 1), (" 200 ", 200), ("+7", 7), (42, 42)])
def test_whole_number_reads_ints_and_their_digits(raw: object, value: int) -> None:
    assert whole_number(raw, what="--limit", low=1, high=200) == value


@pytest.mark.parametrize(
    ("raw", "got"),
    [
        ("-5", "-5"),
        ("0", "0"),
        ("201", "201"),
        ("99999999999999999999", "99999999999999999999"),
        ("9" * 5000, "9" * 37 + "..."),
        ("2.5", "2.5"),
        ("1e3", "1e3"),
        ("٣", "٣"),  # an Arabic-Indic three: int() would take it, a person typing a limit would not mean it
        ("", "''"),
        ("ten", "ten"),
        (True, "True"),
        (None, "None"),
        (-1, "-1"),
    ],
)
def test_whole_number_says_the_range_and_what_it_got(raw: object, got: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        whole_number(raw, what="--limit", low=1, high=200)
    assert str(caught.value) == f"--limit must be a whole number from 1 to 200 (got {got})."


@pytest.mark.parametrize(
    ("raw", "seen"),
    [("maya", "maya"), ("two words", "two words"), ("", "''"), (" padded", "' padded'"), ("nul\x00", "'nul\\x00'")],
)
def test_shown_quotes_only_what_would_be_unclear(raw: str, seen: str) -> None:
    assert shown(raw) == seen
