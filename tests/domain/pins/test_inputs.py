"""What a pin accepts: paths without '..', http(s) URLs without credentials, texts, ids; how it is keyed."""

from __future__ import annotations

import pytest

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.pins import PIN_TEXT_MAX, pin_source, validate_pin_id, validate_pin_path, validate_pin_text
from nightwatch.domain.pins.inputs import pin_key, pin_title
from nightwatch.domain.pins.models import PinKind


@pytest.mark.parametrize(
    ("raw", "kind", "value"),
    [
        ("docs/ARCHITECTURE.md", PinKind.FILE, "docs/ARCHITECTURE.md"),
        ("  /srv/docs/runbook.md ", PinKind.FILE, "/srv/docs/runbook.md"),
        ("./notes/threat model.md", PinKind.FILE, "./notes/threat model.md"),
        ("https://wiki.example.com/a?b=c#d", PinKind.URL, "https://wiki.example.com/a?b=c#d"),
        ("HTTP://Example.com:8080/", PinKind.URL, "HTTP://Example.com:8080/"),
    ],
)
def test_a_source_is_a_page_when_it_is_an_http_url_else_a_file(raw: str, kind: PinKind, value: str) -> None:
    assert pin_source(raw) == (kind, value)


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        ("../../etc/passwd", "climbs up with '..'"),
        ("docs/../../etc/passwd", "climbs up with '..'"),
        ("/srv/docs/..", "climbs up with '..'"),
        ("docs\\..\\secrets", "climbs up with '..'"),
        ("", "Give the file to pin"),
        ("docs/", "names a folder"),
        ("a\x00b", "control character"),
        ("a\x1b[31mb", "control character"),
        ("a\nb", "line break"),
        ("x" * 5000, "at most 4,096"),
        ("ftp://example.com/file", "Only http:// and https://"),
        ("file:///etc/passwd", "Only http:// and https://"),
        ("https://", "names no host"),
        ("https://user:secret@example.com/", "user name or password"),
        ("https://example.com:99999/", "not a usable address"),
        ("https://example.com/a b", "white space"),
    ],
)
def test_unusable_sources_are_refused_saying_why(raw: str, says: str) -> None:
    with pytest.raises(InvalidInputError, match=says):
        pin_source(raw)


def test_paths_are_checked_alone_too() -> None:
    with pytest.raises(InvalidInputError):
        validate_pin_path("../x")
    assert validate_pin_path("..hidden/file..md") == "..hidden/file..md"  # dots in names are fine


def test_a_text_pin_has_1_to_8000_characters_and_no_control_characters() -> None:
    assert (
        validate_pin_text("  Deploys freeze on Fridays.\n\tNo exceptions. ")
        == "Deploys freeze on Fridays.\n\tNo exceptions."
    )
    for bad in ("", "   ", "x" * (PIN_TEXT_MAX + 1), "bell\x07"):
        with pytest.raises(InvalidInputError):
            validate_pin_text(bad)


@pytest.mark.parametrize(("raw", "value"), [("3", 3), ("#12", 12), (" 7 ", 7), (5, 5)])
def test_a_pin_id_is_the_number_pin_list_prints(raw: object, value: int) -> None:
    assert validate_pin_id(raw) == value


@pytest.mark.parametrize("raw", ["0", "-1", "x", "#", "99999999999", "1.5"])
def test_other_ids_are_refused(raw: str) -> None:
    with pytest.raises(InvalidInputError, match="pin list"):
        validate_pin_id(raw)


def test_a_text_pin_is_titled_by_its_first_words() -> None:
    assert pin_title("Deploys freeze\non Fridays.") == "Deploys freeze on Fridays."
    long = pin_title("The release train leaves every Thursday at noon, and nothing merges after ten in the morning.")
    assert long == "The release train leaves every Thursday at noon, and nothing…"


def test_files_and_pages_are_keyed_by_source_and_texts_by_their_whole_text() -> None:
    assert pin_key(PinKind.FILE, "/a", "one") == pin_key(PinKind.FILE, "/a", "two")
    assert pin_key(PinKind.FILE, "/a", "x") != pin_key(PinKind.URL, "/a", "x")
    assert pin_key(PinKind.TEXT, "Same title", "one") != pin_key(PinKind.TEXT, "Same title", "two")
