"""The parts of a deliberation on their own: participants, reply shaping, verdict parsing, the thread window."""

from __future__ import annotations

import pytest

from nightwatch.domain.deliberation.consensus import (
    ClosingPrompt,
    ConsensusPrompt,
    ConsensusRetryPrompt,
    decide,
    parse_verdict,
)
from nightwatch.domain.deliberation.debrief import DiscussionPrompt
from nightwatch.domain.deliberation.models import Decision
from nightwatch.domain.deliberation.participants import choose_lead, choose_panel, named_in, ranked, relevance
from nightwatch.domain.deliberation.replies import Dropped, cap_length, is_skip, near_duplicate, shape_reply
from nightwatch.domain.deliberation.thread_context import SummaryPrompt, ThreadPrompt, clip_message, window_start
from nightwatch.domain.deliberation.turns import InteractionPrompt, TurnPrompt
from nightwatch.domain.errors import LLMOutputError, NotFoundError
from nightwatch.domain.llm import ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt
from nightwatch.domain.models import ThreadMessage
from nightwatch.prompts import Prompt
from tests.domain.deliberation.cast import CARLOS, DEV, INES, MAYA, PRIYA, TEAM, persona, verdict_json
from tests.fakes import ScriptedLLM

# --- participants ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@Maya what do you think?", ["Maya"]),
        ("maya, dev: thoughts?", ["Maya", "Dev"]),
        ("Dev: and @priya too", ["Dev", "Priya"]),
        ("Mayan calendars and developers", []),
        ("email maya@example.com about it", []),
        ("the dev server is down", []),
        ("Maya and Priya: is this safe to ship?", ["Maya", "Priya"]),
        ("Maya, Priya & Dev, please look", ["Maya", "Priya", "Dev"]),
        ("Maya and the release team: ship it?", []),
        ("dev and ops: who owns the pager?", []),
    ],
)
def test_named_in_finds_addressed_personas_in_order(text: str, expected: list[str]) -> None:
    assert [p.name for p in named_in(text, TEAM)] == expected


def test_names_with_spaces_and_slugs_are_addressed() -> None:
    red = persona("Red Team", "Attacker")
    found = named_in("@red-team and Red Team, please look", [red, MAYA])
    assert [p.name for p in found] == ["Red Team"]


def test_relevance_uses_role_expertise_and_opinions_with_stemming() -> None:
    assert relevance(MAYA, "authenticating users and expiring tokens") > 0
    assert relevance(PRIYA, "our tests are flaky") > relevance(DEV, "our tests are flaky")
    assert relevance(CARLOS, "a poem about the sea") == 0


def test_ranking_is_deterministic_on_ties() -> None:
    twins = [persona("Zed", "Helper"), persona("Abe", "Helper")]
    assert [p.name for _, p in ranked(twins, "nothing relevant")] == ["Abe", "Zed"]
    assert [p.name for _, p in ranked(list(reversed(twins)), "nothing relevant")] == ["Abe", "Zed"]


def test_choose_lead_prefers_configured_then_tech_lead_then_lead_then_architect() -> None:
    lead = persona("Lou", "Team lead")
    arch = persona("Ada", "Architect")
    assert choose_lead(TEAM, "x", "dev") == DEV
    assert choose_lead(TEAM, "x", None) == CARLOS
    assert choose_lead([MAYA, arch, lead], "x", None) == lead
    assert choose_lead([MAYA, arch], "x", None) == arch
    assert choose_lead([MAYA, PRIYA], "flaky tests", None) == PRIYA  # no lead role: the best match
    assert choose_lead(TEAM, "x", "nobody") == CARLOS  # an unknown configured lead falls back


def test_choose_lead_with_no_personas_says_what_to_do() -> None:
    with pytest.raises(NotFoundError, match="personas create"):
        choose_lead([], "x", None)


def test_panel_hears_at_least_two_voices_when_few_match() -> None:
    panel = choose_panel(TEAM, topic="flaky tests", max_contributors=3)
    assert panel.lead == CARLOS
    assert panel.contributors[0] == PRIYA
    assert len(panel.contributors) == 2


def test_panel_takes_every_match_up_to_the_cap() -> None:
    topic = "flaky tests in the authentication refactoring of the warehouse"
    panel = choose_panel([*TEAM, INES], topic=topic, max_contributors=3)
    assert {p.name for p in panel.contributors} == {"Priya", "Maya", "Dev", "Ines"} & {
        p.name for p in panel.contributors
    }
    assert len(panel.contributors) == 3
    assert CARLOS not in panel.contributors


def test_naming_only_the_lead_gives_a_panel_of_the_lead_alone() -> None:
    panel = choose_panel(TEAM, topic="Carlos, is this ready?", max_contributors=3)
    assert panel.contributors == ()
    assert panel.lead == CARLOS
    assert panel.everyone == (CARLOS,)


def test_named_personas_are_capped_too() -> None:
    panel = choose_panel(TEAM, topic="x", requested=("maya", "priya", "dev"), max_contributors=2)
    assert panel.contributors == (MAYA, PRIYA)


# --- reply shaping ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["SKIP", "skip", " SKIP. ", "[offline] SKIP", "**SKIP**"])
def test_skip_answers_are_recognised(text: str) -> None:
    assert is_skip(text)
    assert shape_reply(text, earlier=[], limit=100).dropped is Dropped.SKIP


@pytest.mark.parametrize("text", ["Skip the cache here, it's stale.", "SKIP it? No: fix the TTL."])
def test_replies_that_mention_skip_are_not_skips(text: str) -> None:
    assert not is_skip(text)


def test_empty_replies_are_dropped() -> None:
    assert shape_reply("  ", earlier=[], limit=100).dropped is Dropped.EMPTY
    assert shape_reply("[offline]  ", earlier=[], limit=100).dropped is Dropped.EMPTY


def test_near_duplicates_are_detected_and_distinct_replies_are_not() -> None:
    said = "Rotate the signing key before we ship the release."
    assert near_duplicate("[offline] Rotate the signing key before we ship the release!", said)
    assert near_duplicate("Before we ship the release, rotate the signing key.", said)
    assert not near_duplicate("Add an expiry test before we ship the release.", said)
    assert not near_duplicate("Yes.", "Yes, but later.")
    assert shape_reply("rotate the signing key before we ship the release", earlier=[said], limit=200).dropped is (
        Dropped.DUPLICATE
    )


def test_cap_length_cuts_at_a_sentence_or_a_word() -> None:
    text = "One. Two is a longer sentence that keeps going. Three never fits in the limit at all."
    assert cap_length(text, 200) == text
    assert cap_length(text, 60) == "One. Two is a longer sentence that keeps going."
    no_stops = "word " * 40
    capped = cap_length(no_stops, 50)
    assert len(capped) <= 50
    assert capped.endswith("…")
    assert not capped.endswith(" …")


# --- verdict parsing and retries -------------------------------------------------------------------------------


def test_parse_verdict_reads_the_json_shape() -> None:
    verdict = parse_verdict(
        '```json\n{"decision": "changes", "summary": " Add a TTL. ", "reasons": ["No expiry."],'
        ' "action_items": "Dev - add TTL"}\n```'
    )
    assert verdict.decision is Decision.CHANGES
    assert verdict.summary == "Add a TTL."
    assert verdict.reasons == ("No expiry.",)
    assert verdict.action_items == ("Dev - add TTL",)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ("Approve it.", "no JSON object"),
        ('{"decision": "APPROVE", "summary": }', "did not parse"),
        ('{"decision": "MAYBE", "summary": "x"}', "must be one of APPROVE, CHANGES, HUMAN"),
        ('{"decision": "APPROVE"}', '"summary" must be'),
        ('{"decision": "APPROVE", "summary": "x", "reasons": [1, 2]}', '"reasons" must be a list of strings'),
        ('{"decision": "APPROVE", "summary": "a"} and {"b": 1}', "did not parse"),
    ],
)
def test_parse_verdict_says_what_is_wrong(answer: str, problem: str) -> None:
    with pytest.raises(LLMOutputError, match=problem.replace('"', ".")):
        parse_verdict(answer)


def test_parse_verdict_bounds_long_answers() -> None:
    verdict = parse_verdict(verdict_json("APPROVE", "s" * 2000, ["r" * 900] * 9, ["a"] * 9))
    assert len(verdict.summary) <= 600
    assert len(verdict.reasons) == 5
    assert all(len(r) <= 300 for r in verdict.reasons)
    assert len(verdict.action_items) == 5


def _consensus_request() -> LLMRequest:
    return LLMRequest(
        purpose=Purpose.CONSENSUS,
        system=SystemPrompt((PromptBlock("You lead."),)),
        messages=(ChatMessage("user", "Decide."),),
    )


def test_decide_stops_after_the_retries_and_counts_usage() -> None:
    llm = ScriptedLLM(default={Purpose.CONSENSUS: "no"})
    decided = decide(llm, _consensus_request(), retries=1, final_round=True)
    assert decided.verdict.decision is Decision.HUMAN
    assert decided.attempts == 2
    assert decided.usage.input_tokens == 20
    assert len(llm.requests) == 2
    assert "This is the final round." in llm.requests[1].messages[-1].content


def test_decide_treats_an_output_error_from_the_model_as_a_retryable_answer() -> None:
    llm = ScriptedLLM().script(Purpose.CONSENSUS, LLMOutputError("empty answer"), verdict_json("APPROVE"))
    decided = decide(llm, _consensus_request(), retries=2, final_round=False)
    assert decided.verdict.decision is Decision.APPROVE
    assert decided.attempts == 2
    assert "empty answer" in llm.requests[1].messages[-1].content


# --- the thread window -----------------------------------------------------------------------------------------


def _messages(n: int, text: str = "a short message") -> list[ThreadMessage]:
    return [ThreadMessage(author="alice", text=f"{text} {i}") for i in range(n)]


def test_window_start_respects_the_message_count_and_the_token_budget() -> None:
    assert window_start(_messages(3), context_tokens=1000, recent_messages=12) == 0
    assert window_start(_messages(20), context_tokens=1000, recent_messages=12) == 8
    assert window_start(_messages(20), context_tokens=30, recent_messages=12) > 8
    assert window_start([], context_tokens=30, recent_messages=12) == 0


def test_the_newest_message_always_fits_but_is_clipped() -> None:
    huge = [ThreadMessage(author="alice", text="x " * 5000)]
    assert window_start(huge, context_tokens=100, recent_messages=12) == 0
    assert len(clip_message(huge[0], 100).text) < 400


# --- templates -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "context",
    [
        TurnPrompt,
        InteractionPrompt,
        ThreadPrompt,
        SummaryPrompt,
        ConsensusPrompt,
        ConsensusRetryPrompt,
        ClosingPrompt,
        DiscussionPrompt,
    ],
)
def test_every_deliberation_template_renders_from_its_typed_context(context: type[Prompt]) -> None:
    assert Prompt.registry[context.template] is context
    text = context.example().render()  # type: ignore[attr-defined]
    assert text.strip()
    assert "Undefined" not in text


def test_the_final_round_is_announced_only_when_final() -> None:
    assert "This is the final round." in ConsensusPrompt("deliberation", 2, True).render()
    assert "final round" not in ConsensusPrompt("deliberation", 1, False).render()
    assert "This is the final round." in ConsensusRetryPrompt("bad", True).render()


def test_the_thread_marks_people_and_says_when_it_is_empty() -> None:
    text = ThreadPrompt(
        summary="", messages=(ThreadMessage("alice", "hi"), ThreadMessage("Maya", "yo", "Maya"))
    ).render()
    assert "- alice (a person): hi" in text
    assert "- Maya: yo" in text
    assert "nothing yet" in ThreadPrompt(summary="", messages=()).render()
