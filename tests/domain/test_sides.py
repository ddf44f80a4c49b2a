"""Things side by side (staging / production, inbound / outbound): two lessons on two sides are two facts."""

from __future__ import annotations

import pytest

from nightwatch.domain.memory.specifics import agree
from nightwatch.domain.sides import AXES, countries, named, other_sides, other_things, places, quoted, sides


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Smoke tests hit the staging gateway.", "Smoke tests hit the production gateway."),
        ("iOS builds are signed in CI.", "Android builds are signed in CI."),
        ("Tennis in-play odds come from pricer.", "Tennis pre-match odds come from pricer."),
        ("The worker reads from the replica.", "The worker writes to the primary."),
        ("Client-side validation trims emails.", "Server-side validation trims emails."),
        ("Pediatric wards get weight-based dose alerts.", "Adult wards only get max-dose alerts."),
        ("Gold members are upgraded at check-in.", "Platinum members are upgraded at booking."),
        ("Undergraduate appeals go to the dean.", "Postgraduate appeals go to the graduate school."),
        ("Stereo uploads are normalised to -16 LUFS.", "Mono uploads are normalised to -19 LUFS."),
        ("The minimum fee for interstate drops is $60.", "The minimum fee for intra-state drops is $25."),
        ("The North site lab on-call is reached via PagerDuty.", "The South site lab on-call uses PagerDuty."),
        ("Eastbound platforms open at 05:00.", "Westbound platforms open at 05:30."),
        ("Official transcripts are blocked by a hold.", "Unofficial transcripts stay available under a hold."),
    ],
)
def test_two_sides_of_one_axis_are_other_sides(a: str, b: str) -> None:
    assert other_sides(a, b)
    assert other_sides(b, a)
    assert not agree(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Smoke tests hit the staging gateway.", "Staging smoke tests use the test gateway."),  # the same side
        ("Deploys go to staging first.", "Nothing reaches production before staging has it for a day."),  # both
        ("Keep the memory limit at 8 GiB or more.", "Below 8 GiB the solver is killed."),  # bounds are not sides
        ("Alerts page the on-call engineer.", "The on-call engineer gets paged for alerts."),  # no side at all
    ],
)
def test_one_side_both_sides_or_none_are_not_other_sides(a: str, b: str) -> None:
    assert not other_sides(a, b)
    assert not other_sides(b, a)


def test_a_side_is_a_whole_word_and_case_does_not_matter() -> None:
    assert sides("PRODUCTION only") == sides("production only")
    assert not any(sides("The productionised pipeline"))  # not a word of the axis
    assert not any(sides("erx-egress-stg is the proxy"))  # a name is whole, hyphens and all


def test_every_side_names_its_own_words() -> None:
    seen: dict[str, str] = {}
    for axis in AXES:
        for side in axis.split(" | "):
            for word in side.split():
                assert word not in seen, f"{word!r} is on two sides: {seen[word]!r} and {side!r}"
                seen[word] = side


def test_things_side_by_side_are_other_things_and_states_are_not() -> None:
    assert other_things("Inbound transfers are screened.", "Outbound transfers are screened.")
    assert other_sides("The bounty is private.", "The bounty is public.")  # never one lesson ...
    assert not other_things("The bounty is private.", "The bounty is public.")  # ... but the newer may update it
    assert other_things("Mono uploads are normalised.", "Stereo uploads are normalised.")
    assert not other_things("Trucks queue at the north gate.", "Trucks now queue at the south gate.")  # a place moves


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("GET /v2/rooms/status is cached for 30 seconds.", "GET /v2/rooms/{id}/status is never cached."),
        ("POST /handoffs/{id}/ready tells the courier.", "POST /handoffs/{id}/picked is called by the courier."),
        ("PawChart data for UK clinics lives in eu-west-2.", "PawChart data for Irish clinics stays in eu-west-1."),
        ("Exports run in europe-west1.", "Exports run in us-central1 for American tenants."),
    ],
)
def test_two_places_are_other_sides_but_never_stop_an_update(a: str, b: str) -> None:
    assert other_sides(a, b)
    assert other_sides(b, a)
    assert not agree(a, b)  # never merged ...
    assert not other_things(a, b)  # ... but a place may change: the newer may update the older


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Every /checkout call needs an idempotency key.", "Since INC-2231, /checkout calls carry an idempotency key."),
        ("Old vintages stay downloadable under /vintages/.", "Revisions keep the old vintage at /vintages."),
        ("Cart ids are UUIDs, so /cart/{id} cannot be walked.", "Cart ids are random UUIDv4 values."),  # one left out
        ("Trains are tracked at 5 km/h or more, 24/7.", "Tracking covers trains moving at 5 km/h and up, and/or idle."),
    ],
)
def test_the_same_place_one_left_out_or_none_are_not_other_sides(a: str, b: str) -> None:
    assert not other_sides(a, b)
    assert not other_sides(b, a)


def test_places_are_paths_and_regions_read_without_case_or_trailing_punctuation() -> None:
    assert places("Served from /API/V2/Orders/. Replicated to EU-WEST-2.")[:2] == (
        frozenset({"/api/v2/orders"}),
        frozenset({"eu-west-2"}),
    )
    assert places("Speeds in km/h, 24/7, read/write and https://example.test/a paths")[:2] == (frozenset(), frozenset())


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Deploy kennelkit_core before the billing job.", "Deploy kennelkit_billing before the billing job."),
        ("Wakefield is read through gateway gw-wk-01.", "Doncaster is read through gateway gw-dn-01."),
        ("Hammer events go to the topic gavel.hammer.", "Bid events go to the topic gavel.bids."),
        ("Staging lives at tradedesk-stg.example.", "UAT lives at tradedesk-uat.example."),
    ],
)
def test_names_of_one_pattern_with_a_word_exchanged_are_other_things(a: str, b: str) -> None:
    assert named(a)
    assert named(b)
    assert other_sides(a, b)
    assert other_sides(b, a)
    assert not agree(a, b)  # never merged ...
    assert other_things(a, b)  # ... and neither updates the other


def test_names_of_one_pattern_with_a_version_exchanged_may_update_each_other() -> None:
    older, newer = "Production runs the leafseg-v3 model.", "Production is now on leafseg-v4."
    assert other_sides(older, newer)  # never one lesson ...
    assert not other_things(older, newer)  # ... but the newer may be the older's update


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Kennelkit-core is deployed first.", "Kennelkit-core goes out before anything else."),  # the same name
        ("Deploy kennelkit_core and kennelkit_billing together.", "kennelkit_billing ships with core."),  # both named
        ("Offers use a 30-day hold.", "Offers use a 90-day hold."),  # prose, and another amount
        ("Inspectors get read-only accounts.", "Inspectors get view-only accounts."),  # prose, a paraphrase
        ("Use the fhx-sto-01 host.", "Use the fhx-ldn-02 host."),  # two parts exchanged
    ],
)
def test_one_name_prose_or_more_than_one_part_exchanged_are_not_other_names(a: str, b: str) -> None:
    assert not other_sides(a, b)
    assert not other_things(a, b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("shadecheck uses D65 for the UK retail customer.", "For the US department-store customer it uses CWF."),
        ("notifyq sends SMS to Irish numbers via MessageBird.", "notifyq sends SMS to British numbers via Twilio."),
        ("jobticket's 'received' status needs a photo.", "jobticket's 'returned' status needs a photo."),
    ],
)
def test_two_countries_or_two_quoted_words_are_two_places(a: str, b: str) -> None:
    assert other_sides(a, b)
    assert other_sides(b, a)
    assert not agree(a, b)  # never merged ...
    assert not other_things(a, b)  # ... but the newer may update the older


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("British users get the Welsh-language toggle.", "UK users get the Welsh toggle."),  # a people is its country
        ("Slots are kept in UTC and shown in Europe/London.", "Slots are kept in UTC and shown in UK time."),  # a zone
        ("Tap 'Sync' to refresh.", "Tap 'Sync' again to refresh the US list."),  # one quotes what the other does
        ("We polish the glass for US customers.", "Glass gets polished for US buyers."),  # a verb, not Poland
    ],
)
def test_one_country_a_time_zone_or_the_same_quoted_word_are_not_two_places(a: str, b: str) -> None:
    assert not other_sides(a, b)
    assert not other_sides(b, a)


def test_countries_are_read_by_name_or_people_and_quoted_words_without_case() -> None:
    assert countries("Dutch and Belgian rides; the UK and the USA") == frozenset({"nl", "be", "uk", "us"})
    assert countries("tell us in europe/london, we polish") == frozenset()
    assert quoted("the 'Received' and \"DEF\" states, 'not guaranteed' banner, don't") == frozenset({"received", "def"})
    assert places("the 'received' status for UK users")[2:] == (frozenset({"uk"}), frozenset({"received"}))
