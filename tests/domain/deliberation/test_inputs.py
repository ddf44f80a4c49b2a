"""What a deliberation accepts: a topic of printable text, and a short list of persona names."""

from __future__ import annotations

import pytest

from nightwatch.domain.deliberation import (
    TOPIC_MAX,
    validate_optional_topic,
    validate_persona_list,
    validate_topic,
)
from nightwatch.domain.errors import InvalidInputError, InvalidNameError
from tests.domain.deliberation.cast import ask, stage
from tests.fakes import RecordingPoster


def test_a_topic_is_trimmed_and_may_span_lines() -> None:
    assert validate_topic("  Cache the session lookups?\nThey take 40 ms.  ") == (
        "Cache the session lookups?\nThey take 40 ms."
    )
    assert len(validate_topic("x" * TOPIC_MAX)) == TOPIC_MAX


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("", "The topic cannot be empty: give 1-4,000 characters"),
        ("   \n", "The topic cannot be empty"),
        ("x" * (TOPIC_MAX + 1), "The topic is 4,001 characters long; shorten it to at most 4,000."),
        ("rate \x00 limits", "control character '\\x00'"),
        ("\x1b]0;pwned\x07", "control character '\\x1b'"),
    ],
)
def test_a_bad_topic_is_refused_with_what_is_accepted(raw: str, says: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        validate_topic(raw)
    assert says in str(caught.value)


def test_an_optional_topic_may_be_left_out_but_not_be_blank() -> None:
    assert validate_optional_topic("") == ""
    assert validate_optional_topic(None) == ""
    assert validate_optional_topic(" login ") == "login"
    with pytest.raises(InvalidInputError, match="cannot be empty"):
        validate_optional_topic("   ")


def test_a_persona_list_gives_clean_names() -> None:
    assert validate_persona_list(" maya, Carlos ,code-reviewer") == ("maya", "Carlos", "code-reviewer")


@pytest.mark.parametrize("raw", ["", " ", "maya,,carlos", "maya,", ",", ",".join(["maya"] * 11), "m" * 500])
def test_a_malformed_persona_list_says_how_to_write_one(raw: str) -> None:
    with pytest.raises(InvalidInputError, match=r"Name 1-10 personas separated by commas, for example maya,carlos"):
        validate_persona_list(raw)


@pytest.mark.parametrize("raw", ["maya,../../etc", "maya,car\x00los", "\udcff"])
def test_each_name_in_a_persona_list_follows_the_naming_rules(raw: str) -> None:
    with pytest.raises(InvalidNameError, match="use only letters A-Z, digits, spaces, - and _"):
        validate_persona_list(raw)


@pytest.mark.parametrize("topic", ["", "  ", "x" * (TOPIC_MAX + 1), "a\x00b"])
def test_the_engine_refuses_a_bad_topic_before_anything_is_stored_or_posted(topic: str) -> None:
    s = stage()
    poster = RecordingPoster()
    with pytest.raises(InvalidInputError, match="topic"):
        s.engine.run(ask(topic), poster)
    assert s.log.deliberations == {}
    assert poster.turns == []
