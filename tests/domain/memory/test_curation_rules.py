"""The curation rules by meaning on hand-written pairs (none from a benchmark file): a restatement may leave out
specifics but not contradict them, a parallel sentence about another thing stays apart, and an update is seen
whether it says so or only states another amount of the same thing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from nightwatch.domain.amounts import replaced
from nightwatch.domain.memory.curation import (
    Curation,
    LessonSuccession,
    Neighbour,
    advice_holds,
    another_subject,
    decide,
    is_duplicate,
    updates,
)
from nightwatch.domain.memory.specifics import changed_amount, names_old_value, only_exchanged
from nightwatch.domain.models import Lesson

T = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "Rotate the API keys every 90 days with rotate_keys.py; the March audit found two keys over a year old.",
            "API keys should be rotated every ninety days.",
        ),
        (
            "Reminder: jwt.decode needs an explicit algorithms=['RS256'] list.",
            "Reminder from the token incident: always pass algorithms=['RS256'] to jwt.decode.",
        ),
        ("Disk alerts warn at 80% and page at 90%.", "We warn at 80 percent disk and page someone at 90 percent."),
        ("Nightly exports finish within 24 hours of the cut-off.", "Nightly exports are done within a day of cut-off."),
        ("Pages escalate to the secondary after 15 minutes.", "After a quarter of an hour a page escalates."),
        ("Training jobs may request at most 4 A100s.", "Cap training jobs at four A100 GPUs."),
    ],
)
def test_a_restatement_that_leaves_out_or_respells_a_specific_merges(older: str, newer: str) -> None:
    assert is_duplicate(older, newer, similarity=0.8)


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "Refunds under 100 EUR can be approved by one support agent.",
            "Chargebacks under 100 EUR can be approved by one support agent.",
        ),
        ("The iOS build must stay under 150 MB.", "The Android build must stay under 150 MB."),
        ("Tickets tagged billing go to the Lisbon queue.", "Tickets tagged shipping go to the Manila queue."),
        (
            "Snapshots of the staging cluster are kept for 7 days.",
            "Snapshots of the production cluster are kept for 30 days.",
        ),
    ],
)
def test_a_parallel_sentence_about_another_thing_stays_apart(older: str, newer: str) -> None:
    assert another_subject(older, newer)
    assert not is_duplicate(older, newer, similarity=0.9)
    existing = [Lesson("a", older, T)]
    assert decide(newer, existing, [Neighbour(existing[0], 0.9)]).action == "create"


@pytest.mark.parametrize(
    ("older", "newer", "similarity"),
    [
        (
            "Session cookies expire after 60 minutes of inactivity.",
            "Idle session timeout was cut from 60 to 15 minutes after the audit.",
            0.5,
        ),
        (
            "We decided not to pin the SDK versions.",
            "We reversed the no-pinning decision: SDK versions are pinned.",
            0.7,
        ),
        ("Rotate API keys every 90 days.", "Rotate API keys every 30 days.", 0.9),
        ("MFA on the VPN is recommended.", "MFA on the VPN has been enforced since April.", 0.7),
    ],
)
def test_an_update_supersedes_whether_it_says_so_or_not(older: str, newer: str, similarity: float) -> None:
    existing = [Lesson("a", older, T)]
    assert decide(newer, existing, [Neighbour(existing[0], similarity)]).action == "supersede"


def test_a_word_exchanged_in_place_merges_only_when_the_meaning_is_all_but_the_same() -> None:
    older = "Ad spend from Meta arrives in account currency; convert it before summing."
    newer = "Ad spend from Meta comes in account currency; convert it before summing."
    assert another_subject(older, newer)  # one word for another, in place
    assert is_duplicate(older, newer, similarity=0.95)  # ... so close in meaning that it is another word for it
    assert not is_duplicate(older, newer, similarity=0.85)  # ... or as close as a look-alike gets


@pytest.mark.parametrize(
    ("older", "newer", "exchanged"),
    [
        ("The exports suite needs its own fixture cleanup.", "The imports suite needs its own fixture cleanup.", True),
        (  # words exchanged in two places, one for one, and nothing else changed
            "EU card data is encrypted with keys held in the Dublin HSM and never leaves the region.",
            "UK card data is encrypted with keys held in the London HSM and never leaves the region.",
            True,
        ),
        (  # ... in three places, one word in each: still at most three in all
            "Gold customers get replies from the senior queue within 2 hours on weekdays.",
            "Silver customers get replies from the standard queue within 2 hours on weekends.",
            True,
        ),
        (  # four words exchanged in all: more than a look-alike's few
            "Gold customers in Europe get replies from the senior queue on weekdays.",
            "Silver customers in Asia get replies from the standard queue on weekends.",
            False,
        ),
        (  # a word added as well: a paraphrase's kind of change
            "EU card data is encrypted with keys held in the Dublin HSM.",
            "UK card data is encrypted with rotating keys held in the London HSM.",
            False,
        ),
        (  # a phrase said another way, not a word for a word
            "The exports suite needs its own fixture cleanup.",
            "The nightly export checks need their own fixture cleanup.",
            False,
        ),
    ],
)
def test_words_exchanged_in_place_and_nothing_else_are_counted_in_all_places(
    older: str, newer: str, exchanged: bool
) -> None:
    assert only_exchanged(older, newer, 3) is exchanged


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The production toxicity model is tox-bert v4.", "tox-bert v6 is the production toxicity model."),
        ("Staging gets refreshed from production every Sunday.", "Staging is refreshed from production daily."),
    ],
)
def test_another_version_or_another_period_is_not_a_restatement(older: str, newer: str) -> None:
    assert not is_duplicate(older, newer, similarity=0.9)
    assert changed_amount(older, newer)


def test_the_issues_three_lessons_merge_then_supersede() -> None:
    first = Lesson("a", "Rotate the API keys every 90 days", T)
    second = "API keys should be rotated every ninety days"
    assert decide(second, [first], [Neighbour(first, 0.86)]).action == "merge"
    third = "Rotate API keys every 30 days now, not 90"
    assert decide(third, [first], [Neighbour(first, 0.8)]).action == "supersede"


def test_a_changed_amount_needs_an_amount_of_the_same_kind() -> None:
    assert changed_amount("Builds time out after 30 minutes.", "Builds time out after 45 minutes.")
    assert not changed_amount("Builds time out after 30 minutes.", "Builds time out after 30 minutes on 4 runners.")
    assert not changed_amount("Builds time out after 30 minutes.", "Builds are capped at 2 GB of cache.")


@pytest.mark.parametrize(
    "newer",
    [
        "The hard limit was lowered from 150% to 125% of the dose; the warning stays at 110%.",
        "The hard limit is 125% of the dose now, down from 150%; the warning stays at 110%.",
        "The hard limit is 125% of the dose instead of 150%, and the warning stays at 110%.",
    ],
)
def test_an_amount_the_newer_names_as_the_old_value_is_not_one_it_states(newer: str) -> None:
    older = "The dose check warns at 110% of the dose and stops at 150%."
    assert replaced(newer) == {"150%"}
    assert changed_amount(older, newer)  # 150% is what it was: the newer states 125% and 110%
    assert not changed_amount(older, "The dose check stops at 150% and warns at 110% of the dose.")


def test_a_negative_old_value_is_named_as_the_old_value_too() -> None:
    older = "Uploads are normalised to -16 LUFS."
    newer = "Uploads are normalised to -19 LUFS now, not -16."
    assert replaced(newer) == {"16"}
    assert changed_amount(older, newer)
    assert replaced("The freezer alarm moved from -18 to -15 degrees.") == {"18"}


def test_reading_ranks_a_newer_amount_first_and_retires_it_when_the_update_is_sure() -> None:
    succession = LessonSuccession()
    older = "Audit logs are retained for 7 years."
    newer = "Audit logs are kept 10 years after the regulator's inspection finding in May."
    assert succession.replaces(older, newer, 0.8)  # another amount of what the older covers: the newer ranks first
    assert not succession.retires(older, newer, 0.8)  # ... but curation's rule sees no update: the older stays
    said = "Audit logs are kept 10 years now, after the regulator's inspection finding in May."
    assert succession.replaces(older, said, 0.8)
    assert succession.retires(older, said, 0.8)
    same = "Audit logs are retained for 7 years in cold storage."
    assert not succession.replaces(older, same, 0.9)
    assert not succession.retires(older, same, 0.9)
    other = "Deploy logs are kept 10 days in the build bucket."
    assert not succession.replaces(older, other, 0.7)
    assert not succession.retires(older, other, 0.7)


def test_reading_leaves_the_older_out_where_it_ranks_below_a_newer_that_ranks_first() -> None:
    succession = LessonSuccession()
    older = "Audit logs are retained for 7 years."
    newer = "Audit logs are kept 10 years after the regulator's inspection finding in May."
    assert succession.retires(older, newer, 0.8, ranked_below=True)
    assert not succession.retires(older, newer, 0.65, ranked_below=True)  # not close enough
    restated = "Audit logs are retained for seven years."
    assert not succession.retires(older, restated, 0.9, ranked_below=True)  # the same point: both may stay
    swapped = "Access logs are retained for 10 years."
    assert not succession.retires(older, swapped, 0.8, ranked_below=True)  # another subject
    same = "Audit logs are retained for 7 years in cold storage."
    assert not succession.retires(older, same, 0.9, ranked_below=True)  # the newer does not rank first
    added = "Audit logs of the payment APIs are also retained for 10 years."
    assert not succession.replaces(older, added, 0.8)  # it adds to the older ("also"): neither ranks first
    assert not succession.retires(older, added, 0.8, ranked_below=True)


def test_of_a_questions_two_best_answers_a_changed_specific_of_the_same_things_retires_the_older() -> None:
    succession = LessonSuccession()
    older = "Claim documents are deleted 5 years after claim closure."
    newer = "Claim documents are kept 7 years after closure; legal flagged the Florida statute."
    assert not succession.retires(older, newer, 0.71)  # no word of change, and not close enough for another amount
    assert succession.retires(older, newer, 0.71, first_two=True)  # ... but both answer the question: newer holds
    assert not succession.retires(older, newer, 0.55, first_two=True)  # not close enough
    swapped = "Claim photos are deleted 7 years after claim closure."
    assert not succession.retires(older, swapped, 0.8, first_two=True)  # another subject
    added = "Exception: claim documents under a litigation hold are kept 10 years after claim closure."
    assert not succession.retires(older, added, 0.8, first_two=True)  # an exception stands beside its rule
    same = "Claim documents are deleted five years after the claim is closed."
    assert not succession.retires(older, same, 0.9, first_two=True)  # no specific changed
    reworded = "We purge closed-claim paperwork after seven years now that legal reviewed it."
    assert succession.retires(older, reworded, 0.62, first_two=True)  # the same thing in other words, another amount
    named = "The claims_vault job deletes claim documents 5 years after closure."
    assert not succession.retires(named, "The payout_ledger job purges records after 7 years.", 0.62, first_two=True)


def test_a_models_advice_where_the_rules_would_create_stands_only_on_the_rules_checks() -> None:
    widget = Lesson("a", "The recommendations widget gets a 150 ms timeout; it must never block the page.", T)
    other = "The reviews widget gets a 300 ms timeout; it must never block the page either."
    assert not advice_holds("supersede", Neighbour(widget, 0.8), other)  # another amount alone: the rules judge
    assert advice_holds("supersede", Neighbour(widget, 0.8), "The recommendations widget now gets 300 ms.")
    assert not advice_holds("supersede", Neighbour(widget, 0.5), "The recommendations widget now gets 300 ms.")
    restated = "Recommendations must never block the page: their widget times out after 150 ms."
    assert advice_holds("merge", Neighbour(widget, 0.75), restated)
    assert not advice_holds("merge", Neighbour(widget, 0.55), restated)  # not close enough to trust a merge
    assert not advice_holds("merge", Neighbour(widget, 0.9), other)  # it would drop an amount


def test_another_month_or_weekday_is_another_date_not_another_subject() -> None:
    older = "Roaming CDRs from TAP files are rated with the March 2026 IOT tariff table."
    newer = "Roaming CDRs are rated with the July 2026 IOT tariff table."
    assert not another_subject(older, newer)
    assert another_subject("Refunds are reviewed on Mondays.", "Credits are reviewed on Mondays.")


def test_a_path_with_a_hyphen_is_a_name_so_another_path_is_another_subject() -> None:
    older = "POST /v1/routes/resolve-partial has a 15-second gateway timeout."
    newer = "POST /v1/routes/solve has a 60-second gateway timeout."
    assert not LessonSuccession().replaces(older, newer, 0.8)
    assert not is_duplicate(older, "POST /v1/routes/solve has a 15-second gateway timeout.", similarity=0.9)


def test_a_decision_flipped_in_the_same_sentence_updates_a_paraphrase_worded_the_other_way_does_not() -> None:
    pinned = Lesson("a", "Always pin the base images by digest in the Dockerfiles.", T)
    flipped = "Never pin the base images by digest in the Dockerfiles."
    assert decide(flipped, [pinned], [Neighbour(pinned, 0.9)]).action == "supersede"
    totals = Lesson("b", "Cart totals are computed by cart-service; the browser's sum is never trusted at checkout.", T)
    reworded = "Totals in the cart are always recalculated by cart-service; checkout ignores what the browser shows."
    assert decide(reworded, [totals], [Neighbour(totals, 0.85)]).action == "create"


def test_of_a_questions_two_best_answers_the_older_ranking_second_is_retired_too() -> None:
    # Ranking below the newer is one more reason to leave the older out, never a reason to keep it.
    succession = LessonSuccession()
    older = "Signed envelopes now expire after 90 days unless the sender sets otherwise."
    newer = "Default expiry for a sent envelope: 60 days."
    assert succession.retires(older, newer, 0.83, first_two=True)
    assert succession.retires(older, newer, 0.83, ranked_below=True, first_two=True)
    assert not succession.retires(older, newer, 0.83, ranked_below=True)  # not the newer's update, nor the best two


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "Inbound card-to-card transfers use a 0.95 decline threshold in riskgate.",
            "Outbound card-to-card transfers now use a stricter 0.75 decline threshold in riskgate.",
        ),
        (
            "Product photos are resized by media-svc to 1600px wide for the web shop.",
            "Product photos are resized by media-svc to 800px wide for the mobile apps.",
        ),
        (
            "The iOS app now requires a passcode after 5 minutes in the background.",
            "The Android app now requires a passcode after 2 minutes in the background.",
        ),
    ],
)
def test_a_lesson_about_another_thing_side_by_side_updates_nothing(older: str, newer: str) -> None:
    kept = Lesson("a", older, T)
    assert decide(newer, [kept], [Neighbour(kept, 0.9)]) == Curation("create")


def test_a_state_that_one_side_replaces_is_still_updated() -> None:
    private = Lesson("a", "The bug bounty is private, with 40 invited researchers.", T)
    newer = "The bug bounty is now public, open to every researcher."
    assert decide(newer, [private], [Neighbour(private, 0.8)]) == Curation("supersede", private.id)


def test_an_update_that_names_the_older_value_as_its_old_one_updates_it() -> None:
    older = "patina-portal sessions time out after 8 hours."
    newer = "After the review, patina-portal sessions expire after 45 minutes idle instead of eight hours."
    assert names_old_value(older, newer)
    assert updates(older, 0.8, newer)
    assert not names_old_value("Deploys stop at 14:00.", "No deploys from 2 PM to 6 PM.")  # a range, a time of day
    assert not names_old_value("Counts are stored as null, never as zero.", "X counts go in as null rather than 0.")
