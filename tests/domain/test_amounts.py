"""Amounts in prose made one: the same amount spelled two ways is one value, and words that only look like an
amount ("as", "ones", "a second approver") are none."""

from __future__ import annotations

import pytest

from nightwatch.domain.amounts import amounts, dimension


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("every 90 days", "every ninety days"),
        ("within a day", "within 24 hours"),
        ("after half an hour", "after 30 minutes"),
        ("within a quarter of an hour", "within 15 minutes"),
        ("refunds over 500 EUR", "refunds above five hundred euros"),
        ("refunds over $500", "refunds over 500 dollars"),
        ("two thousand entries a batch", "2000 entries a batch"),
        ("blocked for 10+ seconds", "blocked for 10 seconds"),
        ("a 300ms budget", "a 300 ms budget"),
        ("starts at 2am UTC", "starts at 02:00 UTC"),
        ("refreshed daily", "refreshed every day"),
        ("released weekly", "released every Tuesday"),
        ("reports attach within a quarter hour", "reports attach within 15 minutes"),
        ("a quarter-hour soak", "a 15 minute soak"),
        ("every night at 3 a.m. school time", "nightly at 03:00 local time"),
        ("closes at 5 p.m.", "closes at 17:00"),
        ("attachments up to ten megabytes", "attachments up to 10 MB"),
        ("traffic peaks at 12x normal", "traffic peaks at twelve times normal"),
        ("training is required twice a year", "training is required two times per year"),
        ("the import runs four times a day", "the import runs 4 times each day"),
        ("node pools are upgraded per quarter", "node pools are upgraded quarterly"),
        ("training once a year", "training annually"),
        ("checks give up after a minute and a half", "checks time out after 90 seconds"),
        ("an hour and a half on the phone", "90 minutes on the phone"),
        ("a soak of two and a half hours", "a soak of 150 minutes"),
        ("twelve and a half percent off", "12.5% off"),
        ("logs are kept a full year", "logs are kept for one year"),
        ("two whole days of buffer", "48 hours of buffer"),
        ("the scheduler ticks every minute", "the scheduler ticks every 60 seconds"),
        ("KYC is refreshed every 24 months", "KYC is refreshed every two years"),
        ("12 months of exchange statements", "a year of exchange statements"),
        ("keys rotate every six months", "keys rotate twice a year"),
        ("a contract of 18 months", "a contract of a year and a half"),
        ("audits every half a year", "audits every 6 months"),
        ("three quarters of an hour of preheat", "45 minutes of preheat"),
        ("parked trucks report once per quarter hour", "parked trucks report every 15 minutes"),
        ("the night plan is recomputed half-hourly", "the night plan is recomputed every 30 minutes"),
        ("the six-monthly LOLER inspection", "a LOLER inspection every 6 months"),
        ("under-16s may rent sails", "riders under 16 may rent sails"),
        ("about 400 weekly bookings per studio", "about 400 bookings per studio every week"),
        ("members book sixteen days out", "members book 16 days out"),
        ("fourteen languages besides English", "14 languages besides English"),
        ("a nineteen-hour window", "a 19 hour window"),
        ("moving boats report every minute and a half", "moving boats report every 90 seconds"),
        ("tiers of a hundred thousand pageviews", "tiers of 100k pageviews"),
        ("past a hundred and eighty thousand pairs", "past 180k pairs"),
        ("a session of one hundred and twenty people", "a session of 120 people"),
        ("an essay of six hundred fifty words", "an essay of 650 words"),
        ("one million credits per request", "1M credits per request"),
        ("a cap of 2.5M events", "a cap of 2,500,000 events"),
    ],
)
def test_one_amount_spelled_two_ways_is_one_value(one: str, other: str) -> None:
    assert amounts(one) == amounts(other) != frozenset()


@pytest.mark.parametrize(
    "text",
    [
        "Suffixes such as Apt 4B are accepted",  # "as" is not "a s"
        "even read-only ones",  # nor "ones" "one s"
        "any refund over the limit needs a second approver",  # an ordinal, not a duration
        "the one dashboard finance reads",  # "the one" is prose
        "a team and a half of contractors",  # "and a half" of something that is not a unit
        "one of the approvers signs off",  # "one of": which, not how many
        "no one approves their own change",
        "at one point the queue stalled",
        "a 5m cable run to the cabinet",  # a lower-case "m" is metres or minutes, never a million
    ],
)
def test_words_that_only_look_like_an_amount_are_none(text: str) -> None:
    assert not {amount for amount in amounts(text) if dimension(amount) in ("s", "")}


def test_one_of_a_thing_is_a_number_another_count_can_change() -> None:
    assert amounts("Code review needs one approval") == {"1"}
    assert amounts("Code review needs one approval") != amounts("Code review needs two approvals")


def test_versions_are_amounts_of_their_own_kind_and_how_often_is_the_time_between() -> None:
    assert amounts("tox-bert v4 is the production model") == {"v4"}
    assert dimension("v4") == dimension("v6.1") == "v"
    daily, weekly = amounts("Staging is refreshed daily"), amounts("Staging is refreshed every Sunday")
    assert daily != weekly
    assert {dimension(a) for a in daily} == {dimension(a) for a in weekly} == {"s"}
    assert daily == amounts("Staging is refreshed every 24 hours")
    assert amounts("every 15 seconds") == amounts("four times a minute") != frozenset()
    assert amounts("every 15 minutes") == amounts("every quarter hour") == amounts("four times an hour") != frozenset()
    assert amounts("keys are rotated quarterly") == amounts("keys are rotated every 90 days")
    assert amounts("required twice a year") != amounts("required once a year")  # how often, each its own period
