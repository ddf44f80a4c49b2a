"""Error as input for persona turns: a failed answer is asked for once more with the problem fed back, then skipped."""

from __future__ import annotations

import pytest

from nightwatch.domain.deliberation.answers import TurnRetryPrompt, answer_turn, call_problem
from nightwatch.domain.deliberation.engine import DeliberationPolicy
from nightwatch.domain.deliberation.models import DeliberationStatus
from nightwatch.domain.deliberation.replies import labelled_speakers, reply_problem
from nightwatch.domain.errors import LLMOutputError, LLMUnavailableError
from nightwatch.domain.llm import ChatMessage, LLMRequest, PromptBlock, Purpose, SystemPrompt, Usage
from nightwatch.domain.memory import REMEMBER_TOOL
from tests.domain.deliberation.cast import ask, stage
from tests.fakes import RecordingPoster, ScriptedLLM, calling

TEAM_NAMES = ("Maya", "Carlos", "Priya", "Dev")


def speakers(poster: RecordingPoster) -> list[str]:
    return [name for name, _ in poster.turns]


# --- what counts as a failed answer --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        "Maya: tokens must expire.\nCarlos: agreed, ship it.",
        "- Maya: tokens must expire.\n- Carlos: agreed.",
        "**Maya:** tokens must expire.\n\n**Carlos:** agreed.",
        "Maya (Security reviewer): rotate keys.\nPriya (QA): add a test.",
        "[offline] Maya: rotate keys.\ncarlos: fine by me.",
    ],
)
def test_a_script_that_speaks_for_another_persona_is_a_problem(answer: str) -> None:
    problem = reply_problem(answer, speaker="Maya", others=TEAM_NAMES)
    assert problem is not None
    assert "spoke for" in problem


@pytest.mark.parametrize(
    "answer",
    [
        "Dev: can you add the expiry test?\nPriya: please cover clock skew.",  # addressing others, not speaking
        "Maya: tokens must expire.",  # only its own label
        "Tokens: they must expire. Note: rotate the key.",  # words before a colon that name nobody
        "SKIP",
        "We must rotate the key. " * 200,  # over-long: cut at a sentence, not retried
    ],
)
def test_usable_answers_are_not_problems(answer: str) -> None:
    assert reply_problem(answer, speaker="Maya", others=TEAM_NAMES) is None


@pytest.mark.parametrize("answer", ["", "   \n ", "[offline]", "[offline]   "])
def test_an_empty_answer_or_only_a_tag_is_a_problem(answer: str) -> None:
    assert reply_problem(answer, speaker="Maya", others=TEAM_NAMES) == "the answer was empty"


def test_a_label_is_a_whole_name_at_the_start_of_a_line() -> None:
    assert labelled_speakers("Maya: rotate it.\nI agree with Carlos: ship it.\n> Priya: a quote") == [
        "maya",
        "i agree with carlos",
        "priya",
    ]
    assert reply_problem("Maya: rotate it.\nI agree with Carlos: ship it.", speaker="Maya", others=TEAM_NAMES) is None


def test_a_failed_call_is_told_in_plain_words_with_the_adapters_advice() -> None:
    unavailable = LLMUnavailableError("Anthropic had a server error (500) after 3 retries; try again in a minute.")
    assert call_problem(unavailable) == (
        "the model could not answer (Anthropic had a server error (500) after 3 retries; try again in a minute)"
    )
    assert call_problem(LLMOutputError("no text")).startswith("the model's answer could not be read (no text")


# --- answer_turn on its own ----------------------------------------------------------------------------------------


def request() -> LLMRequest:
    return LLMRequest(
        purpose=Purpose.TURN,
        system=SystemPrompt((PromptBlock("You are Maya."),)),
        messages=(ChatMessage("user", "The thread so far: ..."), ChatMessage("user", "Your turn, Maya.")),
        max_tokens=100,
    )


def test_a_good_first_answer_is_not_retried() -> None:
    llm = ScriptedLLM().script(Purpose.TURN, "Rotate the key.")
    answer = answer_turn(llm.complete, request(), speaker="Maya", others=TEAM_NAMES, words=50)
    assert (answer.text, answer.attempts, answer.problem) == ("Rotate the key.", 1, None)
    assert len(llm.requests) == 1


def test_the_retry_feeds_the_bad_answer_and_the_problem_back() -> None:
    script = "Maya: rotate it.\nCarlos: yes."
    llm = ScriptedLLM().script(Purpose.TURN, script, "Rotate the key today.")
    answer = answer_turn(llm.complete, request(), speaker="Maya", others=TEAM_NAMES, words=50)
    assert (answer.text, answer.attempts, answer.problem) == ("Rotate the key today.", 2, None)
    retry = llm.requests[1].messages
    assert retry[:2] == request().messages
    assert retry[2] == ChatMessage("assistant", script)
    assert retry[3].role == "user"
    assert (
        retry[3].content
        == TurnRetryPrompt(
            name="Maya", problem="the answer also spoke for Carlos, as a script of several voices", words=50
        ).render()
    )
    assert "spoke for Carlos" in retry[3].content
    assert "at most 50 words" in retry[3].content.replace("\n", " ")


def test_a_failed_call_is_retried_once_with_the_error_as_input() -> None:
    llm = ScriptedLLM().script(Purpose.TURN, LLMUnavailableError("Anthropic is overloaded (529)."), "Rotate it.")
    answer = answer_turn(llm.complete, request(), speaker="Maya", others=TEAM_NAMES, words=50)
    assert (answer.text, answer.problem) == ("Rotate it.", None)
    retry = llm.requests[1].messages
    assert retry[2] == ChatMessage("assistant", "(no answer)")
    assert "the model could not answer (Anthropic is overloaded (529))" in retry[3].content


def test_two_failures_give_up_with_the_last_problem_and_no_third_call() -> None:
    llm = ScriptedLLM().script(Purpose.TURN, LLMOutputError("no text"), "  ", "never asked")
    answer = answer_turn(llm.complete, request(), speaker="Maya", others=TEAM_NAMES, words=50)
    assert (answer.text, answer.attempts, answer.problem) == ("", 2, "the answer was empty")
    assert len(llm.requests) == 2


@pytest.mark.parametrize("retries", [0, 1, 2, 3])
def test_a_failed_answer_is_asked_again_as_many_times_as_the_retries_say(retries: int) -> None:
    llm = ScriptedLLM().script(Purpose.TURN, *([LLMOutputError("no text")] * 5))
    answer = answer_turn(llm.complete, request(), speaker="Maya", others=TEAM_NAMES, words=50, retries=retries)
    assert (answer.attempts, answer.text) == (retries + 1, "")
    assert len(llm.requests) == retries + 1


def test_the_last_of_several_retries_may_succeed() -> None:
    llm = ScriptedLLM().script(Purpose.TURN, "", "", "Rotate the key.")
    answer = answer_turn(llm.complete, request(), speaker="Maya", others=TEAM_NAMES, words=50, retries=2)
    assert (answer.text, answer.attempts, answer.problem) == ("Rotate the key.", 3, None)


# --- in a deliberation ---------------------------------------------------------------------------------------------


def test_an_empty_first_answer_is_retried_and_the_second_is_posted() -> None:
    llm = ScriptedLLM().script(Purpose.TURN, "[offline]", "Rotate the signing key first.")
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=1))
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya: rotate keys?"), poster)
    assert poster.turns[0] == ("Maya", "Rotate the signing key first.")
    assert poster.notices == []
    maya = result.turns[0]
    assert (maya.persona, maya.skipped, maya.usage) == ("Maya", False, Usage(input_tokens=20, output_tokens=10))
    assert "the answer was empty" in s.llm.calls(Purpose.TURN)[1].messages[-1].content


def test_a_persona_that_fails_twice_is_skipped_stored_and_named_in_a_notice() -> None:
    llm = ScriptedLLM().script(Purpose.TURN, "", "Maya: keys.\nDev: I will rotate them.")
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=1))
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya, Dev: rotate keys?"), poster)
    assert speakers(poster) == ["Dev", "Carlos"]
    assert poster.notices == [
        "Maya was skipped this turn, even after a second try: the answer also spoke for Dev, as a script of "
        "several voices. The others carry on."
    ]
    stored = s.log.turn_rows[result.deliberation.id or 0]
    assert [(t.persona, t.skipped) for t in stored] == [("Maya", True), ("Dev", False), ("Carlos", False)]
    assert stored[0].text == "(skipped: the answer also spoke for Dev, as a script of several voices)"
    assert stored[0].usage == Usage(input_tokens=20, output_tokens=10)
    assert result.deliberation.status is DeliberationStatus.DONE
    assert s.log.deliberations[result.deliberation.id or 0].usage.input_tokens >= 20  # counted in the total


def test_a_skipped_turn_does_not_use_up_the_reply_cap() -> None:
    failure = LLMUnavailableError("down")
    llm = ScriptedLLM().script(Purpose.TURN, failure, failure)
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=1, max_replies=2))
    poster = RecordingPoster()
    s.engine.run(ask("Maya, Priya: tests for rotation?"), poster)
    assert speakers(poster) == ["Priya", "Carlos"]


def test_tool_calls_of_a_failed_first_attempt_are_kept_and_counted_after_the_retry() -> None:
    remember = calling((REMEMBER_TOOL, {"lesson": "Keys rotate every 90 days.", "category": "events"}))
    llm = ScriptedLLM().script(Purpose.TURN, remember, "", "Rotate the signing key now.")
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=1))
    poster = RecordingPoster()
    result = s.engine.run(ask("Maya: rotate keys?"), poster)
    assert poster.turns[0] == ("Maya", "Rotate the signing key now.")
    maya = result.turns[0]
    assert [call.name for call in maya.tool_calls] == [REMEMBER_TOOL]  # from the first attempt
    assert maya.usage == Usage(input_tokens=30, output_tokens=15)  # all three model calls of the turn
    assert [item.lesson.text for item in result.remembered][:1] == ["Keys rotate every 90 days."]
    retry = s.llm.calls(Purpose.TURN)[2]
    assert retry.messages[-2] == ChatMessage("assistant", "(no answer)")
    assert "the answer was empty" in retry.messages[-1].content


def test_the_policy_sets_the_retries_and_the_notice_says_how_many_tries() -> None:
    failure = LLMUnavailableError("down")
    llm = ScriptedLLM().script(Purpose.TURN, failure, failure, failure)
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=1, turn_retries=2))
    poster = RecordingPoster()
    s.engine.run(ask("Maya: rotate keys?"), poster)
    assert poster.notices[0].startswith("Maya was skipped this turn, even after a third try: the model could not")


def test_no_retries_skips_a_failed_turn_at_once() -> None:
    llm = ScriptedLLM().script(Purpose.TURN, "", "never asked")
    s = stage(llm=llm, policy=DeliberationPolicy(max_rounds=1, turn_retries=0))
    poster = RecordingPoster()
    s.engine.run(ask("Maya: rotate keys?"), poster)
    assert poster.notices[0] == "Maya was skipped this turn: the answer was empty. The others carry on."
