"""The phrase rules read teachings both ways: what must be a teaching is one, and an ordinary topic never is."""

from __future__ import annotations

import pytest

from nightwatch.domain.teaching import Intent, may_teach, parse_teaching

REMEMBER = Intent.REMEMBER
FORGET = Intent.FORGET

TEACHINGS = [
    ("remember that we deploy on Thursdays now", REMEMBER, (), "We deploy on Thursdays now."),
    ("remember: staging is wiped every Monday", REMEMBER, (), "Staging is wiped every Monday."),
    ("Remember, the CDN caches for 5 minutes", REMEMBER, (), "The CDN caches for 5 minutes."),
    ("note that the payments suite is flaky", REMEMBER, (), "The payments suite is flaky."),
    ("Note: the payments suite is flaky", REMEMBER, (), "The payments suite is flaky."),
    ("please remember that we deploy on Thursdays", REMEMBER, (), "We deploy on Thursdays."),
    ("Please remember to rotate the signing keys monthly", REMEMBER, (), "Rotate the signing keys monthly."),
    ("Maya, remember that tokens expire after 15 minutes", REMEMBER, ("Maya",), "Tokens expire after 15 minutes."),
    ("Maya: remember that tokens expire after 15 minutes", REMEMBER, ("Maya",), "Tokens expire after 15 minutes."),
    ("@Maya remember that tokens expire after 15 minutes", REMEMBER, ("Maya",), "Tokens expire after 15 minutes."),
    ("maya remember that tokens expire", REMEMBER, ("maya",), "Tokens expire."),
    ("Hey Maya, please remember that tokens expire", REMEMBER, ("Maya",), "Tokens expire."),
    ("Maya and Priya, remember that tokens expire", REMEMBER, ("Maya", "Priya"), "Tokens expire."),
    ("Code Reviewer, remember that PRs need two approvals", REMEMBER, ("Code Reviewer",), "PRs need two approvals."),
    ("remember for Priya that the search suite is flaky", REMEMBER, ("Priya",), "The search suite is flaky."),
    ("remember for priya and Dev that it is flaky", REMEMBER, ("priya", "Dev"), "It is flaky."),
    ("remember for next time that the search suite is flaky", REMEMBER, (), "The search suite is flaky."),
    ("Don't forget that staging is wiped on Mondays", REMEMBER, (), "Staging is wiped on Mondays."),
    ("never forget to run the migrations first", REMEMBER, (), "Run the migrations first."),
    ("keep in mind that the API is rate limited", REMEMBER, (), "The API is rate limited."),
    ('remember that "the CDN caches for 5 minutes", thanks!', REMEMBER, (), "The CDN caches for 5 minutes."),
    ("remember that", REMEMBER, (), ""),
    ("forget that we deploy on Fridays", FORGET, (), "we deploy on Fridays"),
    ("forget that, we moved off Redis", FORGET, (), "we moved off Redis"),
    ("forget about the Redis cache", FORGET, (), "the Redis cache"),
    ("Maya, forget that we use Redis", FORGET, ("Maya",), "we use Redis"),
    ("forget for Carlos that we use Redis", FORGET, ("Carlos",), "we use Redis"),
    ("forget about it", FORGET, (), ""),
    ("that's no longer true: we deploy on Fridays", FORGET, (), "we deploy on Fridays"),
    ("That is not true anymore: staging is wiped on Mondays", FORGET, (), "staging is wiped on Mondays"),
    ("that isn't true any more, we moved to Valkey", FORGET, (), "we moved to Valkey"),
    ("That's no longer true", FORGET, (), ""),
    ("we no longer use Redis for sessions", FORGET, (), "We use Redis for sessions"),
    ("Priya, we no longer run the nightly suite", FORGET, ("Priya",), "We run the nightly suite"),
]

TOPICS = [
    "should we remember to rotate keys?",
    "do you remember when we broke prod?",
    "remember when we broke prod",
    "Remember that time we broke prod",
    "I remember that the cache was slow, what should we do",
    "we should note the latency regression in the report",
    "Note the API is slow",
    "the release notes need updating",
    "should we cache session lookups",
    "forget the tests, what about the docs?",
    "Maya, what could go wrong here?",
    "that's true: we deploy on Fridays",
    "is it true that we no longer use Redis?",
    "Our logs say we no longer retry failed webhooks",
    "",
]


@pytest.mark.parametrize(("message", "intent", "personas", "text"), TEACHINGS)
def test_a_teaching_is_read_with_its_personas_and_text(
    message: str, intent: Intent, personas: tuple[str, ...], text: str
) -> None:
    taught = parse_teaching(message)
    assert (taught.intent, taught.personas, taught.text) == (intent, personas, text)


@pytest.mark.parametrize("message", TOPICS)
def test_a_topic_is_not_a_teaching(message: str) -> None:
    assert parse_teaching(message).intent is Intent.NONE


@pytest.mark.parametrize("message", [message for message, *_ in TEACHINGS])
def test_every_teaching_passes_the_gate_that_decides_whether_to_ask_a_model(message: str) -> None:
    assert may_teach(message)


@pytest.mark.parametrize("message", ["should we cache session lookups", "Maya, what could go wrong here?", ""])
def test_a_message_without_a_teaching_word_never_reaches_a_model(message: str) -> None:
    assert not may_teach(message)


def test_white_space_and_line_breaks_read_as_single_spaces() -> None:
    taught = parse_teaching("  remember\nthat   we deploy\ton Thursdays  ")
    assert taught.text == "We deploy on Thursdays."
