"""The deliberation engine with fakes: participants, rounds and caps, consensus paths, reflection, persistence."""

from __future__ import annotations

import pytest

from nightwatch.domain.deliberation.engine import DeliberationPolicy
from nightwatch.domain.deliberation.models import Decision, DeliberationStatus
from nightwatch.domain.deliberation.turns import turn_tokens
from nightwatch.domain.errors import LessonsPendingError, LLMUnavailableError, NotFoundError, StorageError
from nightwatch.domain.llm import Purpose, Usage
from nightwatch.domain.models import ThreadMessage
from tests.domain.deliberation.cast import (
    CARLOS,
    INES,
    MAYA,
    PRIYA,
    TEAM,
    FakeMemory,
    ask,
    block,
    persona,
    stage,
    verdict_json,
)
from tests.fakes import RecordingPoster, ScriptedLLM


def speakers(poster: RecordingPoster) -> list[str]:
    return [name for name, _ in poster.turns]


def turn_calls(llm: ScriptedLLM) -> list[str]:
    return [r.persona.name for r in llm.calls(Purpose.TURN) if r.persona is not None]


# --- participants ----------------------------------------------------------------------------------------------


def test_personas_named_in_the_topic_speak_and_the_lead_closes() -> None:
    s = stage()
    poster = RecordingPoster()
    result = s.engine.run(ask("@Priya, Dev: what tests do we need for the login flow?"), poster)
    assert speakers(poster) == ["Priya", "Dev", "Carlos"]
    assert poster.verdicts[0][0] == "Carlos"
    assert result.verdict.decision is Decision.APPROVE


def test_personas_named_in_the_request_come_first() -> None:
    s = stage()
    poster = RecordingPoster()
    s.engine.run(ask("Rotate the session secret", personas=("maya", "Priya")), poster)
    assert speakers(poster) == ["Maya", "Priya", "Carlos"]


def test_an_unknown_requested_persona_is_refused_before_anything_starts() -> None:
    s = stage()
    with pytest.raises(NotFoundError, match="nightwatch personas list"):
        s.engine.run(ask("Anything", personas=("nobody",)), RecordingPoster())
    assert s.log.deliberations == {}


def test_without_names_the_most_relevant_personas_are_chosen() -> None:
    s = stage(policy=DeliberationPolicy(max_contributors=1))
    poster = RecordingPoster()
    s.engine.run(ask("Threat model for the new authentication tokens"), poster)
    assert speakers(poster) == ["Maya", "Carlos"]


def test_a_custom_persona_is_chosen_when_the_topic_is_its_field() -> None:
    s = stage(personas=(*TEAM, INES), policy=DeliberationPolicy(max_contributors=1))
    poster = RecordingPoster()
    s.engine.run(ask("Partition the warehouse tables used by the SQL pipelines"), poster)
    assert speakers(poster) == ["Ines", "Carlos"]


def test_at_most_max_contributors_plus_the_lead_speak_per_round() -> None:
    s = stage(personas=(*TEAM, INES), policy=DeliberationPolicy(max_contributors=2, max_rounds=1))
    poster = RecordingPoster()
    s.engine.run(ask("General planning for next quarter"), poster)
    assert len(poster.turns) == 3
    assert speakers(poster)[-1] == "Carlos"


def test_the_lead_is_configurable_by_name_or_slug() -> None:
    s = stage(policy=DeliberationPolicy(lead="priya"))
    poster = RecordingPoster()
    s.engine.run(ask("Maya, Dev: is the release ready?"), poster)
    assert speakers(poster) == ["Maya", "Dev", "Priya"]
    assert poster.verdicts[0][0] == "Priya"
    assert s.llm.calls(Purpose.CONSENSUS)[0].persona.name == "Priya"  # type: ignore[union-attr]


def test_without_a_tech_lead_an_architect_leads() -> None:
    architect = persona("Ada", "Principal architect", ("architecture",))
    s = stage(personas=(MAYA, PRIYA, architect))
    poster = RecordingPoster()
    s.engine.run(ask("Split the monolith?"), poster)
    assert poster.verdicts[0][0] == "Ada"


# --- turns and caps --------------------------------------------------------------------------------------------


def test_skip_is_stored_but_not_posted() -> None:
    llm = ScriptedLLM().script(Purpose.TURN, "SKIP", "Ship it behind a flag.")
    s = stage(llm=llm)
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya: anything on the README typo?"), poster)
    assert speakers(poster) == ["Carlos"]
    assert [(t.persona, t.skipped) for t in result.turns] == [("Maya", True), ("Carlos", False)]
    assert [t.skipped for t in s.log.turn_rows[result.deliberation.id or 0]] == [True, False]


def test_near_duplicate_replies_are_stored_as_skipped_and_not_posted() -> None:
    said = "We must rotate the signing key before the release ships."
    llm = ScriptedLLM().script(Purpose.TURN, said, "[offline] we must rotate the signing key before the release ships!")
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=1))
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya, Priya: release check"), poster)
    assert speakers(poster) == ["Maya", "Carlos"]
    assert [(t.persona, t.skipped) for t in result.turns] == [("Maya", False), ("Priya", True), ("Carlos", False)]
    assert len(s.llm.calls(Purpose.TURN)) == 3  # a repeat is not retried: the persona had nothing new
    assert poster.notices == []


def test_replies_are_capped_at_a_sentence_boundary() -> None:
    long = "First point is short. " + "This sentence goes on and on about the tokens. " * 10
    llm = ScriptedLLM().script(Purpose.TURN, long)
    s = stage(llm=llm, policy=DeliberationPolicy(reply_chars=120, max_rounds=1))
    poster = RecordingPoster()
    s.engine.run(ask("Maya: tokens?"), poster)
    posted = poster.turns[0][1]
    assert len(posted) <= 120
    assert posted.endswith(". …")  # cut at a sentence, visibly
    assert long.startswith(posted.removesuffix(" …"))
    assert s.log.turns(1)[0].full_text == long.strip()  # the whole answer stays in the log


def test_a_turn_asks_for_turn_words_and_sizes_max_tokens_to_them() -> None:
    long = "One thing matters here. " * 60
    llm = ScriptedLLM().script(Purpose.TURN, long)
    s = stage(llm=llm, policy=DeliberationPolicy(turn_words=40, max_rounds=1))
    poster = RecordingPoster()
    s.engine.run(ask("Maya: tokens?"), poster)
    request = s.llm.calls(Purpose.TURN)[0]
    assert "at most 40 words" in request.messages[-1].content
    assert request.max_tokens == turn_tokens(40) < 120
    posted = poster.turns[0][1]
    assert posted.endswith("here. …")
    assert len(posted.split()) <= 41


def test_rounds_are_capped() -> None:
    llm = ScriptedLLM(default={Purpose.CONSENSUS: verdict_json("CHANGES", "More work.")})
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=3))
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya: audit the login flow"), poster)
    assert len(s.llm.calls(Purpose.CONSENSUS)) == 3
    assert {t.round for t in result.turns} == {1, 2, 3}
    assert result.verdict.decision is Decision.CHANGES


def test_total_replies_are_capped_across_rounds() -> None:
    llm = ScriptedLLM(default={Purpose.CONSENSUS: verdict_json("CHANGES", "More work.")})
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=5, max_replies=5))
    poster = RecordingPoster()
    s.engine.run(ask("Maya, Priya, Dev: the release"), poster)
    assert len(poster.turns) == 5
    # the reply budget ran out in round 2, so round 2's decision was the final one
    assert len(s.llm.calls(Purpose.CONSENSUS)) == 2
    assert "This is the final round." in s.llm.calls(Purpose.CONSENSUS)[-1].messages[-1].content


def test_a_turn_whose_call_fails_twice_is_skipped_with_a_notice_and_the_others_go_on() -> None:
    failure = LLMUnavailableError("overloaded")
    llm = ScriptedLLM().script(Purpose.TURN, failure, failure, "Plan the rollback.")
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=1))
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya: rotate keys?"), poster)
    assert speakers(poster) == ["Carlos"]
    assert poster.notices == [
        "Maya was skipped this turn, even after a second try: the model could not answer (overloaded). "
        "The others carry on."
    ]
    assert result.deliberation.status is DeliberationStatus.DONE


def test_each_turn_reads_memory_and_reports_the_lessons_injected() -> None:
    memory = FakeMemory(blocks={"maya": block("Rotate keys when people leave.", "Never log tokens.")})
    s = stage(memory=memory, policy=DeliberationPolicy(max_rounds=1))
    result = s.engine.run(ask("Maya: rotate keys?"), RecordingPoster())
    assert [(t.persona, t.lessons_injected) for t in result.turns] == [("Maya", 2), ("Carlos", 0)]
    assert memory.reads[0][:3] == ("maya", "night-watch", "Maya: rotate keys?")
    system = s.llm.calls(Purpose.TURN)[0].system.text
    assert "Never log tokens." in system
    assert memory.injected == [("maya", "night-watch", ["l0000000", "l0000001"])]


def test_the_turn_request_carries_persona_model_topic_and_a_short_instruction() -> None:
    from dataclasses import replace

    fast = replace(MAYA, model="claude-haiku-test")
    s = stage(personas=(fast, CARLOS), policy=DeliberationPolicy(max_rounds=1, reply_chars=400))
    s.engine.run(ask("Maya: rotate keys?"), RecordingPoster())
    request = s.llm.calls(Purpose.TURN)[0]
    assert request.model == "claude-haiku-test"
    assert request.persona is not None
    assert request.persona.name == "Maya"
    assert request.topic == "Maya: rotate keys?"
    assert "at most 50 words" in request.messages[-1].content
    assert "SKIP" in request.messages[-1].content


# --- consensus -------------------------------------------------------------------------------------------------


def test_approve_ends_after_one_round_with_a_closing_summary() -> None:
    llm = ScriptedLLM().script(
        Purpose.CONSENSUS, verdict_json("APPROVE", "Ship it.", ["Tests pass."], ["Dev - merge today"])
    )
    s = stage(llm=llm)
    poster = RecordingPoster()
    result = s.engine.run(ask("Dev: merge the fix?"), poster)
    lead, verdict, text = poster.verdicts[0]
    assert (lead, verdict.decision) == ("Carlos", Decision.APPROVE)
    assert "Approved" in text
    assert "Ship it." in text
    assert "Tests pass." in text
    assert "Dev - merge today" in text
    assert {t.round for t in result.turns} == {1}
    stored = s.log.get(result.deliberation.id or 0)
    assert stored is not None
    assert stored.status is DeliberationStatus.DONE
    assert stored.verdict == verdict


def test_changes_opens_one_more_round_that_addresses_them() -> None:
    llm = ScriptedLLM().script(
        Purpose.CONSENSUS,
        verdict_json("CHANGES", "Token expiry is missing.", action_items=["Maya - define the TTL"]),
        verdict_json("APPROVE", "Good now."),
    )
    s = stage(llm=llm)
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya, Dev: session tokens"), poster)
    assert [t.round for t in result.turns] == [1, 1, 1, 2, 2, 2]
    assert result.verdict.decision is Decision.APPROVE
    first = s.llm.calls(Purpose.CONSENSUS)[0].messages[-1].content
    assert "This is the final round." not in first
    round_two = s.llm.calls(Purpose.TURN)[3].messages[-1].content
    assert "Token expiry is missing." in round_two
    assert "Maya - define the TTL" in round_two
    assert poster.round_requests == [("Carlos", "Token expiry is missing.")]  # the lead's own post
    assert not any("one more round" in notice for notice in poster.notices)


def test_changes_when_the_budget_is_spent_is_the_final_verdict() -> None:
    llm = ScriptedLLM().script(
        Purpose.CONSENSUS, verdict_json("CHANGES", "Fix the TTL first.", action_items=["Dev - TTL"])
    )
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=1))
    poster = RecordingPoster()
    result = s.engine.run(ask("Dev: merge?"), poster)
    assert result.verdict.decision is Decision.CHANGES
    assert "This is the final round." in s.llm.calls(Purpose.CONSENSUS)[0].messages[-1].content
    assert "Changes needed" in poster.verdicts[0][2]
    assert "Dev - TTL" in poster.verdicts[0][2]


def test_human_hands_the_decision_to_a_person() -> None:
    llm = ScriptedLLM().script(Purpose.CONSENSUS, verdict_json("HUMAN", "Budget call above us."))
    s = stage(llm=llm)
    poster = RecordingPoster()
    result = s.engine.run(ask("Dev: buy or build?"), poster)
    assert result.verdict.decision is Decision.HUMAN
    assert len(s.llm.calls(Purpose.CONSENSUS)) == 1
    assert "A person needs to decide" in poster.verdicts[0][2]


def test_an_unparseable_decision_is_retried_with_the_error_fed_back() -> None:
    llm = ScriptedLLM().script(Purpose.CONSENSUS, "I think we should approve.", verdict_json("APPROVE", "Fine."))
    s = stage(llm=llm)
    result = s.engine.run(ask("Dev: merge?"), RecordingPoster())
    assert result.verdict.decision is Decision.APPROVE
    first, retry = s.llm.calls(Purpose.CONSENSUS)
    assert retry.messages[: len(first.messages)] == first.messages
    assert retry.messages[-2].role == "assistant"
    assert retry.messages[-2].content == "I think we should approve."
    assert retry.messages[-1].role == "user"
    assert "no JSON object" in retry.messages[-1].content


def test_three_unparseable_decisions_become_human() -> None:
    llm = ScriptedLLM(default={Purpose.CONSENSUS: '{"decision": "MAYBE", "summary": "x"}'})
    s = stage(llm=llm)
    poster = RecordingPoster()
    result = s.engine.run(ask("Dev: merge?"), poster)
    assert len(s.llm.calls(Purpose.CONSENSUS)) == 3  # the first try and 2 retries
    assert result.verdict.decision is Decision.HUMAN
    assert "MAYBE" in result.verdict.reasons[0]
    assert poster.verdicts[0][1] == result.verdict


def test_an_unavailable_model_for_the_decision_becomes_human() -> None:
    llm = ScriptedLLM().script(Purpose.CONSENSUS, LLMUnavailableError("timed out"))
    s = stage(llm=llm)
    result = s.engine.run(ask("Dev: merge?"), RecordingPoster())
    assert result.verdict.decision is Decision.HUMAN
    assert len(s.llm.calls(Purpose.CONSENSUS)) == 1
    assert result.deliberation.status is DeliberationStatus.DONE


def test_the_lead_decides_with_the_same_system_prompt_as_its_turn() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))
    s.engine.run(ask("Dev: merge?"), RecordingPoster())
    lead_turn = s.llm.calls(Purpose.TURN)[-1]
    decision = s.llm.calls(Purpose.CONSENSUS)[0]
    assert decision.persona is not None
    assert decision.persona.name == CARLOS.name
    assert decision.system.blocks[0] == lead_turn.system.blocks[0]


# --- reflection ------------------------------------------------------------------------------------------------


def test_each_participant_reflects_and_its_lessons_are_reported() -> None:
    memory = FakeMemory(lessons={"maya": ["Expire tokens hourly."], "carlos": ["Flag risky launches."]})
    s = stage(memory=memory)
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya, Dev: token expiry", link="https://example.com/pr/7"), poster)
    assert [slug for slug, _, _ in memory.reflections] == ["maya", "dev", "carlos"]
    context = memory.reflections[0][2]
    assert context.kind == "deliberation"
    assert context.topic == "Maya, Dev: token expiry"
    assert context.link == "https://example.com/pr/7"
    assert context.outcome.startswith("APPROVE")
    assert "Tokens must expire hourly." in context.summary
    assert poster.lessons == [
        ("Maya", "night-watch", "may00000", "Expire tokens hourly."),
        ("Carlos", "night-watch", "car00000", "Flag risky launches."),
    ]
    assert [(r.persona, r.lesson.text) for r in result.remembered] == [
        ("Maya", "Expire tokens hourly."),
        ("Carlos", "Flag risky launches."),
    ]


def test_a_failing_reflection_never_breaks_the_deliberation(caplog: pytest.LogCaptureFixture) -> None:
    memory = FakeMemory(lessons={"carlos": ["Flag risky launches."]}, failing={"maya"})
    s = stage(memory=memory)
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya: token expiry"), poster)
    assert result.deliberation.status is DeliberationStatus.DONE
    assert [lesson[0] for lesson in poster.lessons] == ["Carlos"]
    assert "Maya's reflection failed" in caplog.text


def test_lessons_storage_refused_are_told_in_the_thread_and_in_the_result() -> None:
    kept = LessonsPendingError(
        "Maya's lessons could not be saved (agents/maya/memories/night-watch/main.md is a folder); "
        "they are kept and will be retried: `nightwatch memory retry`",
        persona="Maya",
        project="night-watch",
        count=2,
    )
    memory = FakeMemory(lessons={"carlos": ["Flag risky launches."]}, refusing={"maya": kept})
    s = stage(memory=memory)
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya: token expiry"), poster)
    assert result.deliberation.status is DeliberationStatus.DONE
    assert result.unsaved == (str(kept),)
    assert str(kept) in poster.notices
    assert [lesson[0] for lesson in poster.lessons] == ["Carlos"]


def test_a_thread_that_cannot_be_told_still_leaves_the_storage_fault_in_the_result() -> None:
    class NoNotices(RecordingPoster):
        def post_notice(self, text: str) -> None:
            raise ConnectionError("Slack is down")

    memory = FakeMemory(refusing={"maya": StorageError("The database could not keep lessons for a retry.")})
    result = stage(memory=memory).engine.run(ask("Maya: token expiry"), NoNotices())
    assert result.unsaved == ("The database could not keep lessons for a retry.",)


# --- the thread ------------------------------------------------------------------------------------------------


class InterruptingPoster(RecordingPoster):
    """A thread where a person replies right after the first persona's turn."""

    def __init__(self, reply: str) -> None:
        super().__init__()
        self.reply = reply

    def post_turn(self, persona, text):  # type: ignore[no-untyped-def]
        super().post_turn(persona, text)
        if len(self.turns) == 1:
            self.thread.append(ThreadMessage(author="alice", text=self.reply))


def test_a_human_reply_is_seen_by_the_next_turn() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))
    s.engine.run(ask("Maya, Dev: session storage"), InterruptingPoster("What about Redis memory limits?"))
    first, second = s.llm.calls(Purpose.TURN)[:2]
    assert "Redis memory limits" not in " ".join(m.content for m in first.messages)
    assert "- alice (a person): What about Redis memory limits?" in second.messages[0].content


def test_a_persona_named_in_a_human_reply_answers_before_the_lead_decides() -> None:
    llm = ScriptedLLM().script(Purpose.CONSENSUS, verdict_json("CHANGES", "Need more."), verdict_json("APPROVE"))
    s = stage(llm=llm)
    poster = InterruptingPoster("Priya, can you check the rollback test?")
    result = s.engine.run(ask("Maya, Dev: session storage"), poster)
    assert [(t.persona, t.round) for t in result.turns] == [
        ("Maya", 1),
        ("Dev", 1),
        ("Priya", 1),
        ("Carlos", 1),
        ("Maya", 2),
        ("Dev", 2),
        ("Carlos", 2),
    ]
    priya = next(r for r in s.llm.calls(Purpose.TURN) if r.persona is not None and r.persona.name == PRIYA.name)
    assert "addressed you directly" in priya.messages[-1].content
    assert [slug for slug, _, _ in s.memory.reflections] == ["maya", "dev", "priya", "carlos"]


def test_a_named_persona_answers_even_when_the_lead_approves_in_the_only_round() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))
    result = s.engine.run(ask("Maya, Dev: session storage"), InterruptingPoster("@Priya what would you test?"))
    assert [t.persona for t in result.turns] == ["Maya", "Dev", "Priya", "Carlos"]


def test_a_persona_named_twice_in_one_round_answers_once() -> None:
    class Nagging(RecordingPoster):
        def post_turn(self, persona, text):  # type: ignore[no-untyped-def]
            super().post_turn(persona, text)
            self.thread.append(ThreadMessage(author="alice", text="Priya, again?"))

    s = stage(policy=DeliberationPolicy(max_rounds=1))
    result = s.engine.run(ask("Maya, Dev: session storage"), Nagging())
    assert [t.persona for t in result.turns] == ["Maya", "Dev", "Priya", "Carlos"]


def test_older_messages_are_summarised_once_and_the_summary_reused() -> None:
    history = [ThreadMessage(author="alice", text=f"Earlier message number {i} about caching.") for i in range(6)]
    s = stage(policy=DeliberationPolicy(max_rounds=1, recent_messages=4))
    poster = RecordingPoster(history)
    s.engine.run(ask("Maya, Priya, Dev: caching"), poster)
    summaries = s.llm.calls(Purpose.SUMMARY)
    # 6 messages, a window of 4: the first summary covers 4 messages and is reused while two more posts arrive;
    # after the third post the window has slid past it, so one more summary folds the stored one and 3 messages in.
    assert len(summaries) == 2
    assert "Earlier message number 0" in summaries[0].messages[0].content
    assert "Earlier message number 3" in summaries[0].messages[0].content
    assert "Earlier message number 4" not in summaries[0].messages[0].content
    assert "Earlier, the team discussed the basics." in summaries[1].messages[0].content
    covered, text = s.log.summaries["C1:1700000000.000100"]
    assert covered == 7
    assert text == "Earlier, the team discussed the basics."
    for request in s.llm.calls(Purpose.TURN):
        assert "Earlier message number 0" not in request.messages[0].content
        assert "Earlier, the team discussed the basics." in request.messages[0].content


def test_a_stored_summary_from_an_earlier_deliberation_is_reused() -> None:
    history = [ThreadMessage(author="alice", text=f"Old message {i}.") for i in range(6)]
    s = stage(policy=DeliberationPolicy(max_rounds=1, recent_messages=4))
    s.log.save_summary("C1:1700000000.000100", 4, "Stored summary of the first four.")
    s.engine.run(ask("Maya: caching"), RecordingPoster(history))
    assert s.llm.calls(Purpose.SUMMARY) == []
    assert "Stored summary of the first four." in s.llm.calls(Purpose.TURN)[0].messages[0].content


# --- persistence -----------------------------------------------------------------------------------------------


def test_usage_is_summed_per_deliberation() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))
    result = s.engine.run(ask("Maya, Dev: merge?"), RecordingPoster())
    calls = len(s.llm.requests)  # 3 turns and 1 decision; ScriptedLLM spends (10 in, 5 out) per call
    assert calls == 4
    assert result.usage == Usage(input_tokens=10 * calls, output_tokens=5 * calls)
    stored = s.log.get(result.deliberation.id or 0)
    assert stored is not None
    assert stored.usage == result.usage
    assert sum((t.usage for t in result.turns), Usage()) == Usage(30, 15)


def test_turns_are_stored_as_they_happen() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))
    result = s.engine.run(ask("Maya, Dev: merge?"), RecordingPoster())
    stored = s.log.turns(result.deliberation.id or 0)
    assert stored == list(result.turns)
    assert all(t.created_at is not None for t in stored)


def test_should_stop_finishes_the_deliberation_as_interrupted() -> None:
    checks = iter([False, False, True])
    s = stage()
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya, Priya, Dev: merge?"), poster, should_stop=lambda: next(checks, True))
    assert result.deliberation.status is DeliberationStatus.INTERRUPTED
    assert speakers(poster) == ["Maya", "Priya"]
    assert poster.verdicts == []
    assert s.llm.calls(Purpose.CONSENSUS) == []
    assert s.memory.reflections == []
    stored = s.log.get(result.deliberation.id or 0)
    assert stored is not None
    assert stored.status is DeliberationStatus.INTERRUPTED
    assert stored.finished_at is not None
    assert len(s.log.turns(stored.id or 0)) == 2
    assert any("stopped before a decision" in n for n in poster.notices)


def test_a_deliberation_is_stored_with_this_process_as_its_owner() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))
    result = s.engine.run(ask("Dev: merge?"), RecordingPoster())
    assert result.deliberation.owner == s.liveness.me
    assert s.log.get(result.deliberation.id or 0).owner == s.liveness.me  # type: ignore[union-attr]


def test_close_abandoned_closes_only_running_deliberations_whose_owner_is_gone() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))
    done = s.engine.run(ask("Dev: merge?"), RecordingPoster()).deliberation
    from nightwatch.domain.deliberation.models import Deliberation

    stuck = s.log.start(Deliberation("Left running", "night-watch", "C1:2", started_at=s.clock.now(), owner="gone/7/1"))
    live = s.log.start(Deliberation("Still going", "night-watch", "C1:3", started_at=s.clock.now(), owner="there/8/1"))
    s.liveness.exited.add("gone/7/1")
    s.clock.advance(minutes=5)
    closed = s.engine.close_abandoned()
    assert [d.id for d in closed] == [stuck.id]
    assert closed[0].status is DeliberationStatus.INTERRUPTED
    assert s.log.get(stuck.id or 0).status is DeliberationStatus.INTERRUPTED  # type: ignore[union-attr]
    assert s.log.get(stuck.id or 0).finished_at == s.clock.now()  # type: ignore[union-attr]
    assert s.log.get(live.id or 0).status is DeliberationStatus.RUNNING  # type: ignore[union-attr]
    assert s.log.get(done.id or 0).status is DeliberationStatus.DONE  # type: ignore[union-attr]
    assert s.engine.close_abandoned() == []


def test_an_unexpected_failure_marks_the_deliberation_failed() -> None:
    class BrokenPoster(RecordingPoster):
        def post_turn(self, persona, text):  # type: ignore[no-untyped-def]
            raise OSError("terminal closed")

    s = stage()
    with pytest.raises(OSError, match="terminal closed"):
        s.engine.run(ask("Dev: merge?"), BrokenPoster())
    (stored,) = s.log.deliberations.values()
    assert stored.status is DeliberationStatus.FAILED


def test_a_verdict_that_cannot_be_posted_leaves_nothing_running() -> None:
    class NoVerdictPoster(RecordingPoster):
        def post_verdict(self, lead, verdict, text):  # type: ignore[no-untyped-def]
            raise ConnectionError("Slack is down")

    s = stage(policy=DeliberationPolicy(max_rounds=1))
    with pytest.raises(ConnectionError):
        s.engine.run(ask("Dev: merge?"), NoVerdictPoster())
    assert s.log.running() == []
    (stored,) = s.log.deliberations.values()
    assert stored.status is DeliberationStatus.FAILED
    assert stored.usage == Usage(30, 15)  # two turns and the decision: what was spent is still recorded


def test_the_project_is_stored_as_a_slug() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))
    result = s.engine.run(ask("Dev: merge?", project="Night Watch"), RecordingPoster())
    assert result.deliberation.project == "night-watch"
    assert s.memory.reads[0][1] == "night-watch"


def test_context_budget_uses_the_projects_latest_deliberation() -> None:
    memory = FakeMemory(blocks={"maya": block("Never log tokens.")})
    s = stage(memory=memory, policy=DeliberationPolicy(max_rounds=1, model_window=50_000))
    s.engine.run(ask("Maya, Dev: logging tokens"), RecordingPoster())
    budget = s.engine.context_budget("MAYA", "night-watch")
    assert budget.persona == "Maya"
    assert budget.memory_lessons == 1
    assert budget.thread_tokens > 0
    assert budget.window == 50_000
    assert budget.remaining == 50_000 - budget.total_tokens
    assert memory.reads[-1][2] == "Maya, Dev: logging tokens"  # the latest topic when none is given
    with pytest.raises(NotFoundError):
        s.engine.context_budget("nobody", "night-watch")


def test_close_abandoned_closes_a_deliberation_silent_for_too_long_but_not_a_live_one() -> None:
    from nightwatch.domain.deliberation.models import Deliberation

    s = stage(policy=DeliberationPolicy(max_rounds=1))
    old = s.log.start(Deliberation("Cut off", "night-watch", "C1:1", started_at=s.clock.now(), owner="far/1/1"))
    s.clock.advance(minutes=20)
    live = s.log.start(Deliberation("Running elsewhere", "night-watch", "C1:2", started_at=s.clock.now()))
    s.clock.advance(minutes=1)
    closed = s.engine.close_abandoned()
    assert [d.id for d in closed] == [old.id]
    assert s.log.get(live.id or 0).status is DeliberationStatus.RUNNING  # type: ignore[union-attr]


def test_an_interrupt_mid_call_closes_the_record_as_interrupted() -> None:
    s = stage(policy=DeliberationPolicy(max_rounds=1))
    s.llm.script(Purpose.TURN, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        s.engine.run(ask("Dev: merge?"), RecordingPoster())
    [stored] = s.log.deliberations.values()
    assert stored.status is DeliberationStatus.INTERRUPTED
    assert s.log.running() == []
