"""The offline model: deterministic, labelled, in each persona's own voice, honouring every answer contract."""

from __future__ import annotations

import json
from types import MappingProxyType

import pytest

from nightwatch.adapters.offline_llm import OfflineLLM
from nightwatch.domain.models import (
    ChatMessage,
    LLMRequest,
    Persona,
    PromptBlock,
    Purpose,
    Soul,
    Style,
    SystemPrompt,
)

MARK = "[offline]"
TOPIC = "Store the OAuth refresh tokens in localStorage for the new login flow"

MAYA = Persona(
    name="Maya",
    slug="maya",
    role="Security Reviewer",
    soul=Soul(
        who_i_am="I review changes for security.",
        opinions=MappingProxyType(
            {
                "security": ("Tokens never belong in localStorage.", "Every input is hostile until validated."),
                "authentication": ("Refresh tokens rotate on every use and can be revoked.",),
            }
        ),
        expertise=("threat modeling (STRIDE, attack trees)", "authentication and session handling"),
        pet_peeves=("secrets in logs",),
    ),
    style=Style(
        tone="direct, calm",
        words_used=("blast radius", "least privilege", "token scope"),
        good_examples=("Non-blocking, low: the session cookie lacks HttpOnly. Set it in `auth.py` and move on.",),
    ),
)
CARLOS = Persona(
    name="Carlos",
    slug="carlos",
    role="Tech Lead",
    soul=Soul(
        opinions=MappingProxyType({"architecture": ("Boring technology wins.", "A login flow is a product decision.")}),
        expertise=("architecture", "API design", "decomposition"),
        pet_peeves=("big-bang rewrites",),
    ),
    style=Style(tone="pragmatic, warm", words_used=("trade-off", "reversible")),
)


def request(
    purpose: Purpose,
    *said: str,
    persona: Persona | None = MAYA,
    topic: str = TOPIC,
    system: str = "You are a persona.",
) -> LLMRequest:
    """A request whose messages are `said` (user messages); the last one is the instruction."""
    return LLMRequest(
        purpose=purpose,
        system=SystemPrompt((PromptBlock(system, cache=True), PromptBlock("Project: demo · round 1 of 2"))),
        messages=tuple(ChatMessage("user", text) for text in said),
        persona=persona,
        topic=topic,
    )


def answer(req: LLMRequest) -> str:
    response = OfflineLLM().complete(req)
    assert response.offline
    assert response.model == "offline"
    assert response.usage.input_tokens > 0
    assert response.usage.output_tokens > 0
    return response.text


THREAD = (
    "Dana: please review the login change.",
    "Maya (Security Reviewer): Tokens in localStorage are a risk. We must use HttpOnly cookies.",
    "Priya (QA Engineer): Login flows need tests for expired sessions.",
)
# The same thread the way the deliberation engine lays it out: one message before the instruction.
ENGINE_THREAD = (
    "The thread so far:\n"
    "- Dana (a person): please review the login change.\n"
    "- Maya: [offline] Tokens in localStorage are a risk.\n"
    "  We must use HttpOnly cookies.\n"
    "- Priya: [offline] Login flows need tests for expired sessions.\n"
    "- Carlos: SKIP"
)
CONSENSUS_ASK = (
    "You lead this discussion. Round {n} is over, so decide now from the thread above.\n"
    "- Choose APPROVE when the team agrees.\n"
    "- Choose CHANGES when open concerns must be addressed; this is a risk we must block.\n"
    "- Choose HUMAN when a person must decide.\n"
    "{final}\n"
    'Answer with JSON only: {{"decision": "APPROVE" | "CHANGES" | "HUMAN", "summary": "...", '
    '"reasons": ["..."], "action_items": ["owner: action"]}}'
)


def sentences_in(text: str) -> int:
    return sum(text.count(end) for end in (". ", "? ")) + 1


def test_the_same_request_gives_the_same_answer() -> None:
    req = request(Purpose.TURN, ENGINE_THREAD, "Your turn, Maya (round 2).")

    first = OfflineLLM().complete(req)
    second = OfflineLLM().complete(req)

    assert first == second
    assert first.text.startswith(MARK)


def test_a_turn_is_labelled_short_and_in_the_personas_own_voice() -> None:
    maya = answer(request(Purpose.TURN, "Your turn, Maya (round 1).", persona=MAYA))
    carlos = answer(request(Purpose.TURN, "Your turn, Carlos (round 1).", persona=CARLOS))

    assert maya == (
        f"{MARK} Tokens never belong in localStorage. I need threat modeling covered before this merges. "
        "In a word: token scope."
    )
    assert carlos == (
        f"{MARK} A login flow is a product decision. Let's cover architecture and move on. In a word: trade-off."
    )
    for text in (maya, carlos):
        assert len(text.split()) <= 100
        assert 2 <= sentences_in(text) <= 4


def test_a_later_round_picks_up_someone_elses_point_and_adds_a_new_one() -> None:
    first = answer(request(Purpose.TURN, "Your turn, Maya (round 1).", persona=MAYA))
    later = answer(request(Purpose.TURN, ENGINE_THREAD, "Your turn, Maya (round 2).", persona=MAYA))

    assert later.startswith(f"{MARK} On Priya's point about login: fine by me, as long as")
    assert "Refresh tokens rotate on every use and can be revoked." in later
    assert "Tokens never belong in localStorage" in first
    assert "Tokens never belong in localStorage" not in later


def test_a_persona_with_nothing_relevant_skips_after_the_first_round() -> None:
    unrelated = "Rename the billing cron job"

    later = answer(request(Purpose.TURN, ENGINE_THREAD, "Your turn (round 2).", persona=CARLOS, topic=unrelated))
    first = answer(request(Purpose.TURN, "Your turn (round 1).", persona=CARLOS, topic=unrelated))

    assert later == "SKIP"
    assert first.startswith(f"{MARK} Nothing in “Rename the billing cron job” touches my area as Tech Lead directly.")


def test_a_turn_recalls_a_remembered_lesson_on_the_topic() -> None:
    memory = (
        "You are Maya.\n\n## What you remember from earlier work on this project\nLessons you recorded.\n\n"
        "- The billing export needs a retention limit.\n- 📌 The login flow shares its session store with admin."
    )

    text = answer(request(Purpose.TURN, "Your turn, Maya (round 1).", system=memory))

    assert "From memory: the login flow shares its session store with admin." in text


@pytest.mark.parametrize(
    ("said", "final", "decision", "items"),
    [
        (("Priya: looks fine to me.", "Maya: ship it, the tests are green."), "", "APPROVE", 0),
        (THREAD, "", "CHANGES", 2),
        ((ENGINE_THREAD,), "", "CHANGES", 2),
        ((ENGINE_THREAD,), "This is the final round.", "APPROVE", 2),
        (("Maya: this vulnerability blocks the release today.",), "This is the final round.", "HUMAN", 1),
        (("Maya: this vulnerability blocks the release today.",), "This is not the final round.", "CHANGES", 1),
    ],
    ids=["no-concerns", "concerns", "engine-layout", "final-soft-concerns", "final-blocker", "not-final"],
)
def test_consensus_is_a_valid_verdict(said: tuple[str, ...], final: str, decision: str, items: int) -> None:
    text = answer(request(Purpose.CONSENSUS, *said, CONSENSUS_ASK.format(n=1, final=final), persona=CARLOS))

    verdict = json.loads(text)
    assert set(verdict) == {"decision", "summary", "reasons", "action_items"}
    assert verdict["decision"] == decision
    assert len(verdict["action_items"]) == items
    assert verdict["reasons"]
    assert all(t.startswith(MARK) for t in [verdict["summary"], *verdict["reasons"], *verdict["action_items"]])


def test_changes_name_each_concern_with_its_owner() -> None:
    verdict = json.loads(answer(request(Purpose.CONSENSUS, ENGINE_THREAD, CONSENSUS_ASK.format(n=1, final=""))))

    assert verdict["action_items"] == [
        f"{MARK} Maya: address “Tokens in localStorage are a risk”",
        f"{MARK} Maya: address “We must use HttpOnly cookies”",
    ]
    assert verdict["summary"].startswith(f"{MARK} CHANGES: 2 concern(s) from Maya on “Store the OAuth")


def test_reflections_are_one_to_three_labelled_lessons_distinct_per_persona() -> None:
    prompt = "You are {name}. Reflect.\n\n## What happened\nTopic: " + TOPIC + "\nOutcome: CHANGES: fix the tokens."
    maya = answer(request(Purpose.REFLECTION, "Answer now.", persona=MAYA, system=prompt.format(name="Maya")))
    carlos = answer(request(Purpose.REFLECTION, "Answer now.", persona=CARLOS, system=prompt.format(name="Carlos")))

    for lessons in (maya.splitlines(), carlos.splitlines()):
        assert 1 <= len(lessons) <= 3
        assert all(line.startswith(f"- {MARK} ") for line in lessons)
        assert lessons[-1].startswith(f"- {MARK} CHANGES last time on")
    assert not set(maya.splitlines()) & set(carlos.splitlines())
    assert f"- {MARK} Tokens never belong in localStorage — it held for tokens and localStorage." in maya


def test_a_persona_the_topic_did_not_touch_reflects_in_one_line() -> None:
    text = answer(request(Purpose.REFLECTION, "Answer now.", persona=CARLOS, topic="Rotate the TLS certificates"))

    assert text == (
        f"- {MARK} “Rotate the TLS certificates” did not touch architecture; no Tech Lead follow-up was needed."
    )


def test_compaction_keeps_pinned_lessons_then_the_others_in_order_up_to_the_limit() -> None:
    prompt = (
        "Condense it to at most 3 lessons.\n\nRules:\n- Keep the most useful lessons.\n- At most 3 lessons.\n\n"
        "Your current lessons:\n- first\n- [pinned] pinned one\n- second\n- 📌 pinned two\n- third"
    )

    text = answer(request(Purpose.COMPACTION, "Answer now, in the form asked for.", system=prompt))

    assert text.splitlines() == ["- pinned one", "- 📌 pinned two", "- first"]


def test_a_summary_compresses_who_said_what() -> None:
    prompt = (
        'Summarise this Slack thread about "login".\n\nSummary so far:\nMaya worried about tokens.\n\n'
        "Messages to fold in:\n- Dana: please review the login change.\n- Priya: Login flows need tests.\n"
        "  Expired sessions first."
    )

    text = answer(request(Purpose.SUMMARY, prompt, persona=None))

    assert text == (
        f"{MARK} Summary of 3 messages: Maya worried about tokens; Dana: please review the login change; "
        "Priya: Login flows need tests."
    )


def test_a_proactive_note_comes_from_memory_not_repeated_or_is_skipped() -> None:
    memory = (
        "You are Maya.\n\n## What you remember from earlier work on this project\n"
        "- 📌 Never log tokens.\n- Login tests flaked last week."
    )
    ask = (
        "Post one observation.\n"
        "- You already flagged these here recently:\n"
        "  - [offline] From memory: Never log tokens."
    )

    noted = answer(request(Purpose.PROACTIVE, ask, topic="what is worth flagging now in demo", system=memory))
    silent = answer(request(Purpose.PROACTIVE, "Post one observation.", topic="", system="You are Maya."))

    assert noted == f"{MARK} From memory: Login tests flaked last week. Worth a check before the next change lands."
    assert silent == "SKIP"


def test_curation_creates() -> None:
    assert json.loads(answer(request(Purpose.CURATION, "Create, merge, skip or supersede?"))) == {
        "action": "create",
        "target": None,
    }


def test_a_whole_deliberation_runs_on_the_offline_model_and_remembers() -> None:
    from nightwatch.domain.deliberation import DeliberationEngine, DeliberationPolicy, DeliberationRequest
    from nightwatch.domain.memory import MemoryPolicy, MemoryService
    from nightwatch.domain.recall import Recall
    from nightwatch.domain.soul import SoulCompiler
    from tests.fakes import (
        FakeClock,
        InMemoryDeliberationLog,
        InMemoryMemoryStore,
        InMemoryPersonaRepository,
        RecordingPoster,
    )

    clock, llm, store = FakeClock(), OfflineLLM(), InMemoryMemoryStore()
    memory = MemoryService(store=store, llm=llm, clock=clock, recall=Recall(), policy=MemoryPolicy())
    engine = DeliberationEngine(
        personas=InMemoryPersonaRepository([MAYA, CARLOS]),
        memory=memory,
        compiler=SoulCompiler(),
        llm=llm,
        log=InMemoryDeliberationLog(),
        clock=clock,
        policy=DeliberationPolicy(lead="carlos"),
    )
    ask = DeliberationRequest(topic=TOPIC, project="demo", thread="terminal:1")

    first = engine.run(ask, RecordingPoster())
    clock.advance(hours=1)
    second = engine.run(DeliberationRequest(topic=TOPIC, project="demo", thread="terminal:2"), RecordingPoster())

    assert first.turns
    assert all(turn.text.startswith(MARK) for turn in first.turns if not turn.skipped)
    assert first.verdict.summary.startswith(MARK)
    assert first.remembered
    assert all(item.lesson.text.startswith(MARK) for item in first.remembered)
    assert {turn.persona for turn in first.turns} == {"Maya", "Carlos"}
    assert any(turn.lessons_injected > 0 for turn in second.turns)
    assert [t.text for t in first.turns][:2] != [t.text for t in second.turns][:2]  # memory shows in the answers
