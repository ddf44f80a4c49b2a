"""The offline model: deterministic, labelled, in each persona's own voice, honouring every answer contract."""

from __future__ import annotations

import json
import re
from types import MappingProxyType

import pytest

from nightwatch.adapters.offline.consensus import read_concerns
from nightwatch.adapters.offline.llm import OfflineLLM
from nightwatch.adapters.offline.text import ThreadLine, keywords, sentences, unmark
from nightwatch.adapters.offline.topic import topic_phrase
from nightwatch.adapters.persona_files import load_default_personas
from nightwatch.domain.deliberation.engine import (
    DeliberationEngine,
    DeliberationPolicy,
    DeliberationRequest,
    DeliberationResult,
)
from nightwatch.domain.deliberation.models import Decision
from nightwatch.domain.llm import ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt
from nightwatch.domain.memory import MemoryPolicy, MemoryService, memory_section
from nightwatch.domain.memory.models import MemoryBlock
from nightwatch.domain.memory.reflection import ExtractionPrompt
from nightwatch.domain.models import Lesson, Persona, Skill, Soul, Style, ThreadMessage
from nightwatch.domain.personas import soul_for_role
from nightwatch.domain.recall.ranking import Recall
from nightwatch.domain.soul import SoulCompiler
from nightwatch.domain.teaching import Intent, Teaching, TeachingService
from tests.domain.knowing import reading
from tests.fakes import (
    T0,
    FakeClock,
    InMemoryDeliberationLog,
    InMemoryMemoryStore,
    InMemoryPersonaRepository,
    RecordingPoster,
)

MARK = "[offline]"
RATE_LIMITING = "Should we add rate limiting to the login endpoint?"
MIGRATION = "Migrate the sessions table to PostgreSQL 16"
FLAKY = "Flaky checkout test in CI"
UPGRADE = "Upgrade requests to 2.32 after CVE-2024-35195"
RENAME = "Rename the billing service"
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
CHECK_ASKED = (
    "Maya (Security Reviewer): Lockouts matter here. Before this goes further, I'd check how lockouts reset. "
    "Blocking until that is answered."
)
CHECK_TAKEN = "Maya: On my item: I'll check how lockouts reset, then post what I find here. Non-blocking now."
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
    return len(sentences(text))


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
        f"{MARK} Tokens never belong in localStorage. "
        "Before this merges, we need to walk the attack path for this change and confirm it fails closed."
    )
    assert carlos == (
        f"{MARK} A login flow is a product decision. "
        "Let's write down whether this change is a one-way door first, then ship."
    )
    for text in (maya, carlos):
        assert len(text.split()) <= 100
        assert 2 <= sentences_in(text) <= 4
        assert "In a word" not in text


def test_a_later_round_picks_up_someone_elses_point_and_adds_a_new_one() -> None:
    first = answer(request(Purpose.TURN, "Your turn, Maya (round 1).", persona=MAYA))
    later = answer(request(Purpose.TURN, ENGINE_THREAD, "Your turn, Maya (round 2).", persona=MAYA))

    assert later == (
        f"{MARK} On Priya's point about login: agreed, as long as it fails closed. "
        "Refresh tokens rotate on every use and can be revoked."
    )
    assert "Tokens never belong in localStorage" in first
    assert "Tokens never belong in localStorage" not in later


def test_the_owner_of_an_action_item_says_how_it_will_close_it() -> None:
    ask = (
        "Your turn, Maya (round 2).\n"
        "Carlos asked for another round, because [offline] Maya asks for a check first.\n"
        "1. [offline] Maya - walk the attack path for this change and confirm it fails closed\n"
        "2. [offline] Priya - add a regression test\n"
        "Answer what concerns your role, and do not repeat earlier points."
    )

    text = answer(request(Purpose.TURN, ENGINE_THREAD, ask, persona=MAYA))

    assert text == (
        f"{MARK} On my item: I'll walk the attack path for this change and confirm it fails closed, "
        "then post what I find here. It no longer holds us up."
    )
    assert not read_concerns([ThreadLine("Maya", unmark(text))])  # an answered item raises nothing new


ROLE_ONLY = {
    "security": Persona(name="Sam", slug="sam", role="Security Reviewer"),
    "qa": Persona(name="Quinn", slug="quinn", role="QA Engineer"),
    "implementer": Persona(
        name="Ira",
        slug="ira",
        role="Implementer",
        skill=Skill(additional_instructions=("Defer to Maya on security and Priya on test strategy, and say so.",)),
    ),
    "tech lead": Persona(name="Lee", slug="lee", role="Tech Lead"),
}


@pytest.mark.parametrize(
    ("role", "angle"),
    [
        ("security", "Security isn't really at stake in renaming the billing cron job: no trust boundary moves"),
        ("qa", "What I'd test for renaming the billing cron job: the happy path end to end and one failure path."),
        ("implementer", "Smallest change for renaming the billing cron job: one focused PR, with the test next to"),
        ("tech lead", "Is this a one-way door? Yes: renaming the billing cron job is hard to undo"),
    ],
)
def test_a_persona_the_topic_does_not_touch_gives_its_roles_angle_then_skips(role: str, angle: str) -> None:
    persona, topic = ROLE_ONLY[role], "Rename the billing cron job"

    first = answer(request(Purpose.TURN, ENGINE_THREAD, "Your turn (round 1).", persona=persona, topic=topic))
    later = answer(request(Purpose.TURN, ENGINE_THREAD, "Your turn (round 2).", persona=persona, topic=topic))

    assert first.startswith(f"{MARK} {angle}")
    assert "Nothing in" not in first
    assert "touches my area" not in first
    assert 2 <= sentences_in(first) <= 4
    assert not read_concerns([ThreadLine(persona.name, unmark(first))], topic)  # an angle is not a condition
    assert later == "SKIP"


def test_an_implementer_defers_to_whoever_spoke_on_their_area() -> None:
    text = answer(request(Purpose.TURN, ENGINE_THREAD, "Your turn (round 1).", persona=ROLE_ONLY["implementer"]))

    assert text.endswith("I'll defer to Maya on security.")


def test_any_other_role_says_where_its_own_side_stands_in_round_1_and_skips_later() -> None:
    nova = Persona(name="Nova", slug="nova", role="Data  Engineer")  # no soul, a role no code names

    first = answer(request(Purpose.TURN, ENGINE_THREAD, "Your turn, Nova (round 1).", persona=nova))
    later = answer(request(Purpose.TURN, ENGINE_THREAD, "Your turn, Nova (round 2).", persona=nova))

    assert first.startswith(f"{MARK} From the data engineer side, nothing in ")
    assert not read_concerns([ThreadLine(nova.name, unmark(first))], TOPIC)  # where it stands is not a condition
    assert later == "SKIP"


def test_a_persona_created_from_a_role_alone_asks_its_role_s_check_on_a_topic_in_its_role() -> None:
    rita = Persona(name="Rita", slug="rita", role="Release Manager", soul=soul_for_role("Rita", "Release Manager"))
    topic = "Should we cut the release on Friday?"

    said = answer(request(Purpose.TURN, "Your turn, Rita (round 1).", persona=rita, topic=topic))

    assert said.startswith(MARK)
    assert "cutting the release on Friday" in said
    assert [concern.owner for concern in read_concerns([ThreadLine("Rita", unmark(said))], topic)] == ["Rita"]


def test_a_turn_recalls_a_remembered_lesson_on_the_topic() -> None:
    memory = (
        "You are Maya.\n\n## What you remember from earlier work on this project\nLessons you recorded.\n\n"
        "- The billing export needs a retention limit.\n- 📌 The login flow shares its session store with admin."
    )

    text = answer(request(Purpose.TURN, "Your turn, Maya (round 1).", system=memory))

    assert text.endswith("From memory: the login flow shares its session store with admin.")


def test_a_turn_reads_lessons_only_inside_the_compiled_memory_block() -> None:
    block = MemoryBlock(
        lessons=(Lesson(id="a", text="The login flow shares its session store with admin.", recorded_at=T0),),
        text="- The login flow shares its session store with admin.",
    )
    memory = memory_section(block)
    system = f"You are Maya.\n\n{memory}\n- The login endpoint stores tokens in localStorage."

    text = answer(request(Purpose.TURN, "Your turn, Maya (round 1).", system=system))

    assert text.endswith("From memory: the login flow shares its session store with admin.")
    assert "localStorage." not in text.split("From memory:")[1]


@pytest.mark.parametrize(
    ("topic", "phrase", "subject"),
    [
        (RATE_LIMITING, "rate limiting on the login endpoint", "the login endpoint"),
        (MIGRATION, "migrating the sessions table to PostgreSQL 16", "the sessions table"),
        (FLAKY, "the flaky checkout test in CI", "the flaky checkout test"),
        (UPGRADE, "upgrading requests to 2.32 after CVE-2024-35195", "requests"),
        ("Maya: rotate the signing key?", "rotating the signing key", "the signing key"),
        ("Maya and Priya: rotate the signing key?", "rotating the signing key", "the signing key"),
        ("Maya, Priya & Dev, rotate the signing key?", "rotating the signing key", "the signing key"),
        ("Redis for sessions?", "Redis for sessions", "Redis"),
        ("CI is slow", "CI being slow", "CI"),
        ("Is the login endpoint safe?", "this proposal", "this area"),
    ],
)
def test_a_topic_reads_as_its_own_phrase(topic: str, phrase: str, subject: str) -> None:
    read = topic_phrase(topic)

    assert (read.phrase, read.subject) == (phrase, subject)


@pytest.mark.parametrize(
    ("said", "final", "decision", "items"),
    [
        (("Priya: looks fine to me.", "Maya: ship it, the tests are green."), "", "APPROVE", 0),
        (THREAD, "", "CHANGES", 1),
        ((ENGINE_THREAD,), "", "CHANGES", 1),
        ((ENGINE_THREAD,), "This is the final round.", "APPROVE", 1),
        (("Maya: this vulnerability blocks the release today.",), "This is the final round.", "HUMAN", 1),
        (("Maya: this vulnerability blocks the release today.",), "This is not the final round.", "CHANGES", 1),
        ((CHECK_ASKED,), "", "CHANGES", 1),
        ((CHECK_ASKED,), "This is the final round.", "HUMAN", 1),
        ((CHECK_ASKED, CHECK_TAKEN), "This is the final round.", "APPROVE", 1),
        (("Dev: Smallest change for the flaky checkout test in CI: one focused PR.",), "", "APPROVE", 0),
    ],
    ids=[
        "no-concerns",
        "concerns",
        "engine-layout",
        "final-soft-concerns",
        "final-blocker",
        "not-final",
        "check-asked",
        "check-still-blocking",
        "check-taken",
        "topic-word-only",
    ],
)
def test_consensus_is_a_valid_verdict(said: tuple[str, ...], final: str, decision: str, items: int) -> None:
    topic = FLAKY if "flaky" in said[0] else TOPIC
    text = answer(
        request(Purpose.CONSENSUS, *said, CONSENSUS_ASK.format(n=1, final=final), persona=CARLOS, topic=topic)
    )

    verdict = json.loads(text)
    assert set(verdict) == {"decision", "summary", "reasons", "action_items"}
    assert verdict["decision"] == decision
    assert len(verdict["action_items"]) == items
    assert verdict["reasons"]
    assert all(t.startswith(MARK) for t in [verdict["summary"], *verdict["reasons"], *verdict["action_items"]])


def test_a_check_asked_for_becomes_the_action_item_of_who_asked() -> None:
    verdict = json.loads(answer(request(Purpose.CONSENSUS, CHECK_ASKED, CONSENSUS_ASK.format(n=1, final=""))))

    assert verdict["decision"] == "CHANGES"
    assert verdict["action_items"] == [f"{MARK} Maya - check how lockouts reset"]
    assert verdict["summary"] == (
        f"{MARK} Maya asks for a check before storing the OAuth refresh tokens in localStorage for the new login "
        "flow goes ahead."
    )
    assert verdict["reasons"] == [f"{MARK} Maya asked for a check before going ahead, and it blocks until answered."]


def test_changes_name_each_concern_with_its_owner() -> None:
    verdict = json.loads(answer(request(Purpose.CONSENSUS, ENGINE_THREAD, CONSENSUS_ASK.format(n=1, final=""))))

    assert verdict["action_items"] == [f"{MARK} Maya - follow up on: tokens in localStorage are a risk"]
    assert verdict["summary"].startswith(f"{MARK} Maya has a concern to settle before storing the OAuth")


@pytest.mark.parametrize(
    ("said", "recap", "decision"),
    [
        (("Priya: looks fine to me.",), "Nothing here needs another round, so I'd go ahead with", "APPROVE"),
        ((CHECK_ASKED,), "Open before I decide: Maya to check how lockouts reset.", "CHANGES"),
    ],
)
def test_the_leads_turn_says_what_its_decision_then_does(said: tuple[str, ...], recap: str, decision: str) -> None:
    lead_ask = "Your turn, Carlos (round 1). You lead this discussion. Weigh what was said."

    turn = answer(request(Purpose.TURN, *said, lead_ask, persona=CARLOS))
    verdict = json.loads(answer(request(Purpose.CONSENSUS, *said, CONSENSUS_ASK.format(n=1, final=""))))

    assert recap in turn
    assert verdict["decision"] == decision


def test_reflections_are_one_to_three_labelled_lessons_distinct_per_persona() -> None:
    prompt = (
        "You are {name}. Reflect.\n\n## What happened\nTopic: " + TOPIC + "\nOutcome: CHANGES\nSummary:\n"
        "- Maya: [offline] Before this merges, we need to walk the attack path for this change.\n"
        "- Carlos: [offline] Open before I decide: Maya to walk the attack path."
    )
    maya = answer(request(Purpose.REFLECTION, "Answer now.", persona=MAYA, system=prompt.format(name="Maya")))
    carlos = answer(request(Purpose.REFLECTION, "Answer now.", persona=CARLOS, system=prompt.format(name="Carlos")))

    for lessons in (bullets(maya), bullets(carlos)):
        assert 1 <= len(lessons) <= 3
        assert all(line.startswith(f"- [patterns] {MARK} ") for line in lessons)
        assert not any("CHANGES" in line for line in lessons)  # a lesson, not the verdict again
    assert not set(bullets(maya)) & set(bullets(carlos))
    assert maya.splitlines() == [
        f"- [patterns] {MARK} Before a change to the OAuth refresh tokens merges, walk the attack path for it and "
        "confirm it fails closed.",
        f"  > {MARK} Learned in a discussion on the OAuth refresh tokens, which ended CHANGES: the check a Security "
        "Reviewer makes.",
        f"- [patterns] {MARK} Tokens never belong in localStorage — it held for the OAuth refresh tokens.",
        f"  > {MARK} Learned in a discussion on the OAuth refresh tokens, which ended CHANGES: a view of Maya's own "
        "that held.",
        f"- [patterns] {MARK} Rate each finding on the OAuth refresh tokens and say whether it blocks, with the "
        "one-line fix next to it; that turns it into an owned follow-up instead of another round.",
        f"  > {MARK} Learned in a discussion on the OAuth refresh tokens, which ended CHANGES: Maya raised a concern.",
    ]


def test_a_persona_the_topic_did_not_touch_reflects_in_one_line() -> None:
    asked = "You are Carlos. Reflect.\n\n## What happened\nKind: pr_review\nTopic: Rotate the TLS certificates"
    text = answer(
        request(Purpose.REFLECTION, "Answer now.", persona=CARLOS, topic="Rotate the TLS certificates", system=asked)
    )

    assert text == (
        f"- [patterns] {MARK} A reversible change to the TLS certificates is decided fast, in one small PR with an "
        f"owner.\n  > {MARK} Learned in the pr_review on the TLS certificates: it touched little a Tech Lead guards."
    )


def bullets(answer_text: str) -> list[str]:
    """The lesson lines of a structured answer (its overview lines left out)."""
    return [line for line in answer_text.splitlines() if line.startswith("- ")]


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


def offline_engine(personas: list[Persona], *, rounds: int = 2, lead: str | None = None) -> DeliberationEngine:
    clock, llm = FakeClock(), OfflineLLM()
    memory = MemoryService(store=InMemoryMemoryStore(), llm=llm, clock=clock, recall=Recall(), policy=MemoryPolicy())
    return DeliberationEngine(
        personas=InMemoryPersonaRepository(personas),
        memory=memory,
        compiler=SoulCompiler(),
        llm=llm,
        log=InMemoryDeliberationLog(),
        clock=clock,
        policy=DeliberationPolicy(lead=lead, max_rounds=rounds),
        context=reading(memory),
    )


def deliberate(topic: str, *, rounds: int = 2) -> tuple[DeliberationResult, RecordingPoster]:
    poster = RecordingPoster()
    result = offline_engine(load_default_personas(), rounds=rounds).run(
        DeliberationRequest(topic=topic, project="demo", thread="terminal:1"), poster
    )
    return result, poster


def test_a_check_raised_in_round_one_leads_to_changes_then_a_final_decision_with_it_as_an_item() -> None:
    result, poster = deliberate(RATE_LIMITING)

    said = {(turn.round, turn.persona): turn.text for turn in result.turns}
    assert (
        "Before this goes further, I'd walk the attack path for rate limiting on the login endpoint"
        in said[(1, "Maya")]
    )
    assert "Open before I decide: Maya to walk the attack path." in said[(1, "Carlos")]
    assert poster.notices == []  # the request for one more round is the lead's own, not a notice
    assert poster.round_requests == [
        ("Carlos", "[offline] Maya asks for a check before rate limiting on the login endpoint goes ahead.")
    ]
    assert said[(2, "Maya")].startswith(f"{MARK} On my item: I'll walk the attack path")
    assert result.verdict.decision is Decision.APPROVE
    assert result.verdict.action_items == (
        f"{MARK} Maya - walk the attack path for rate limiting on the login endpoint and confirm it fails closed",
    )
    assert "My call: go ahead; Maya owns the follow-up." in said[(2, "Carlos")]


def test_a_blocker_left_open_in_the_only_round_goes_to_a_person() -> None:
    result, _ = deliberate(RATE_LIMITING, rounds=1)

    assert result.verdict.decision is Decision.HUMAN
    assert "Maya" in result.verdict.summary
    assert "a person's call" in next(t.text for t in result.turns if t.persona == "Carlos")


@pytest.mark.parametrize("topic", [RATE_LIMITING, MIGRATION, FLAKY, UPGRADE, RENAME])
def test_an_offline_deliberation_reads_as_a_short_coherent_discussion(topic: str) -> None:
    result, poster = deliberate(topic)
    again, _ = deliberate(topic)

    spoken = [turn.text for turn in result.turns if not turn.skipped]
    assert spoken == [turn.text for turn in again.turns if not turn.skipped]  # deterministic
    assert len(set(spoken)) == len(spoken)
    for text in spoken:
        assert text.startswith(MARK)
        assert 2 <= sentences_in(unmark(text)) <= 4, text
        assert len(text.split()) <= 100
        assert "Nothing in" not in text
        assert "In a word" not in text
    assert len(poster.round_requests) == 1
    assert not poster.notices
    assert result.verdict.decision is Decision.APPROVE
    assert result.verdict.action_items


@pytest.mark.parametrize("topic", [RATE_LIMITING, MIGRATION, FLAKY, UPGRADE, RENAME])
def test_lessons_are_role_flavoured_sentences_without_keyword_lists(topic: str) -> None:
    result, _ = deliberate(topic)

    words = "|".join(re.escape(word) for word in keywords(topic).values())
    by_persona: dict[str, list[str]] = {}
    for item in result.remembered:
        by_persona.setdefault(item.persona, []).append(item.lesson.text)
    assert by_persona
    for lessons in by_persona.values():
        assert 1 <= len(lessons) <= 3
        for lesson in lessons:
            assert lesson.startswith(f"{MARK} ")
            assert not re.search(rf"\b({words}), ({words})\b", lesson, re.IGNORECASE), lesson
            assert not re.search(r"\b(APPROVE|CHANGES|HUMAN)\b", lesson)
            assert "“" not in lesson  # the topic's phrase, not a quoted title
    assert len({lesson for lessons in by_persona.values() for lesson in lessons}) == len(result.remembered)


def test_a_whole_deliberation_runs_on_the_offline_model_and_remembers() -> None:
    engine = offline_engine([MAYA, CARLOS], lead="carlos")

    first = engine.run(DeliberationRequest(topic=TOPIC, project="demo", thread="terminal:1"), RecordingPoster())
    second = engine.run(DeliberationRequest(topic=TOPIC, project="demo", thread="terminal:2"), RecordingPoster())

    assert first.turns
    assert all(turn.text.startswith(MARK) for turn in first.turns if not turn.skipped)
    assert first.verdict.summary.startswith(MARK)
    assert first.remembered
    assert all(item.lesson.text.startswith(MARK) for item in first.remembered)
    assert {turn.persona for turn in first.turns} == {"Maya", "Carlos"}
    assert any(turn.lessons_injected > 0 for turn in second.turns)
    assert [t.text for t in first.turns][:2] != [t.text for t in second.turns][:2]  # memory shows in the answers


def test_extraction_keeps_the_sentences_that_decide_fix_or_prefer_the_personas_own_first() -> None:
    prompt = ExtractionPrompt(
        persona_name="Maya",
        role="Security Reviewer",
        flavour="security",
        project="demo",
        kind="deliberation",
        topic=TOPIC,
        messages=(
            ThreadMessage("alice", "Morning all. Is the doc up to date?"),
            ThreadMessage("bob", "We decided to keep refresh tokens in HttpOnly cookies after the 2026-03-02 leak."),
            ThreadMessage(
                "Maya", "[offline] Tokens never belong in localStorage. Keys must rotate every hour.", "Maya"
            ),
        ),
        max_chars=400,
    ).render()

    text = answer(request(Purpose.EXTRACTION, "Answer now, in the form asked for.", system=prompt))

    assert text.splitlines() == [
        f"- [events] {MARK} From the thread on the OAuth refresh tokens: We decided to keep refresh tokens in HttpOnly "
        "cookies after the 2026-03-02 leak.",
        f"  > {MARK} bob said so before the thread was summarised: “We decided to keep refresh tokens in HttpOnly "
        "cookies after the 2026-03-02 leak.”",
        f"- [patterns] {MARK} From the thread on the OAuth refresh tokens: Tokens never belong in localStorage.",
        f"  > {MARK} Maya said so before the thread was summarised: “Tokens never belong in localStorage. Keys must "
        "rotate every hour.”",
        f"- [patterns] {MARK} From the thread on the OAuth refresh tokens: Keys must rotate every hour.",
        f"  > {MARK} Maya said so before the thread was summarised: “Tokens never belong in localStorage. Keys must "
        "rotate every hour.”",
    ]


def test_extraction_from_small_talk_is_none() -> None:
    prompt = ExtractionPrompt(
        persona_name="Maya",
        role="Security Reviewer",
        flavour="security",
        project="demo",
        kind="deliberation",
        topic=TOPIC,
        messages=(ThreadMessage("alice", "Morning all, coffee first?"),),
        max_chars=400,
    ).render()

    assert answer(request(Purpose.EXTRACTION, "Answer now.", system=prompt)) == "NONE"


def test_a_long_thread_on_the_offline_model_remembers_what_its_summary_drops() -> None:
    store, clock, llm = InMemoryMemoryStore(), FakeClock(), OfflineLLM()
    memory = MemoryService(store=store, llm=llm, clock=clock, recall=Recall(), policy=MemoryPolicy())
    engine = DeliberationEngine(
        personas=InMemoryPersonaRepository([MAYA, CARLOS]),
        memory=memory,
        compiler=SoulCompiler(),
        llm=llm,
        log=InMemoryDeliberationLog(),
        clock=clock,
        policy=DeliberationPolicy(lead="carlos", max_rounds=1, recent_messages=4),
        context=reading(memory),
    )
    said = [
        ThreadMessage("dana", "We decided to pin the auth library to 4.2 because 4.3 broke refresh."),
        ThreadMessage("erin", "Thanks, sounds good."),
        ThreadMessage("dana", "Staging runs the old token service until Friday."),
        ThreadMessage("erin", "Who reviews?"),
        ThreadMessage("dana", "Maya does."),
    ]
    poster = RecordingPoster(said)

    result = engine.run(DeliberationRequest(topic=TOPIC, project="demo", thread="C1:1"), poster)

    extracted = [item for item in result.remembered if "From the thread on" in item.lesson.text]
    assert extracted, result.remembered
    [pinned] = [item for item in extracted if "4.2" in item.lesson.text]
    assert pinned.persona == "Carlos"  # only people wrote what was summarised: the lead learns
    assert pinned.lesson.category == "events"  # "we decided": a decision taken, which wins over the fix it names
    assert pinned.lesson.overview is not None
    assert "dana said so" in pinned.lesson.overview
    assert ("Carlos", "demo", pinned.lesson.id, pinned.lesson.text) in poster.lessons
    assert re.search(
        r"4\.2 because 4\.3 broke refresh\. <!-- cat:events [^>]*-->\n  > \[offline\] dana said so",
        store.read("carlos", "demo"),
    )


def test_a_teaching_is_answered_with_the_phrase_rules_as_the_json_the_prompt_asks_for() -> None:
    service = TeachingService(memory=None, log=InMemoryDeliberationLog(), llm=OfflineLLM())  # type: ignore[arg-type]
    message = "Maya, remember that we deploy on Thursdays now"
    assert service.understand(message, [MAYA]) == Teaching(Intent.REMEMBER, ("Maya",), "We deploy on Thursdays now.")
    assert service.understand("should we remember to rotate keys?", [MAYA]) == Teaching.none()
    raw = OfflineLLM().complete(
        LLMRequest(
            purpose=Purpose.TEACHING,
            system=SystemPrompt((PromptBlock("the teaching prompt"),)),
            messages=(ChatMessage(role="user", content="Answer now."),),
            topic="forget that we use Redis",
        )
    )
    assert json.loads(raw.text) == {"intent": "forget", "personas": [], "text": "we use Redis"}
    assert MARK not in raw.text  # a person's own words, not the model's
