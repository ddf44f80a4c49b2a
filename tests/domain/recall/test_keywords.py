"""Text analysis for recall: identifiers kept whole and split, stop words dropped, English words stemmed."""

from __future__ import annotations

import pytest

from nightwatch.domain.recall.keywords import STOP_WORDS, terms, terms_of
from nightwatch.domain.recall.stemmer import stem


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("auth_service.py", ["auth_service.py", "auth", "servic", "py"]),
        ("v2.3.1", ["v2.3.1", "2.3.1", "2", "3", "1"]),
        ("1.2.0", ["1.2.0", "1", "2", "0"]),
        ("CVE-2024-3094", ["cve-2024-3094", "cve", "2024", "3094"]),
        ("AuthService", ["authservice", "auth", "servic"]),
        ("HTTPServer", ["httpserver", "http", "server"]),
        ("src/api/users.ts", ["src/api/users.ts", "src", "api", "user", "ts"]),
    ],
)
def test_identifiers_are_kept_whole_and_split_into_parts(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


def test_stop_words_and_lone_letters_are_dropped_and_case_is_folded() -> None:
    assert terms("What is THE state of the Deploys? I'm not sure it's a-ok") == [
        "state",
        "deploi",
        "sure",
        "a-ok",
        "ok",
    ]
    assert {"the", "what", "dont", "im"} <= STOP_WORDS


def test_possessives_and_curly_apostrophes_fold_to_the_same_term() -> None:
    assert terms("Carlos's review") == terms("Carlos’s reviews") == terms("carlos review")


def test_words_of_other_scripts_are_kept_whole() -> None:
    assert terms("Größe café 日本語") == ["größe", "café", "日本語"]


def test_repeats_are_kept_for_term_frequency() -> None:
    assert terms("cache cache caching") == ["cach", "cach", "cach"]


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("migrations", "migrat"),
        ("migration", "migrat"),
        ("migrating", "migrat"),
        ("caresses", "caress"),
        ("ponies", "poni"),
        ("hopping", "hop"),
        ("relational", "relat"),
        ("generalizations", "gener"),
        ("adjustment", "adjust"),
        ("controll", "control"),
        ("sky", "sky"),
        ("is", "is"),
        ("v2", "v2"),
    ],
)
def test_the_porter_stemmer_matches_the_published_examples(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_many_texts_at_once_give_each_texts_own_terms() -> None:
    texts = ["Don't log Maya's tokens\nin auth_service.py", "", "v2.3.1 broke CVE-2024-1234", "it's fixed"]
    assert terms_of(texts) == [terms(text) for text in texts]
    assert terms_of([]) == []
