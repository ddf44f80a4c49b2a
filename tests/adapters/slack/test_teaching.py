"""Teaching in plain words, dispatched into the real Bolt app (Web API: FakeSlack, model: offline, real memory)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nightwatch.adapters.slack.teaching_views import TeachTarget
from nightwatch.adapters.slack.threads import thread_link
from nightwatch.adapters.slack.views import ForgetTarget
from nightwatch.domain.deliberation.models import Deliberation, Turn
from nightwatch.domain.models import Lesson
from nightwatch.domain.teaching import TAUGHT
from tests import payloads
from tests.adapters.slack.stack import ADMIN, Stack
from tests.fake_slack import FakeSlack

PROJECT = "general"  # the channel's name


def mention(
    stack: Stack, fake: FakeSlack, text: str, *, thread_ts: str | None = None, user: str = "U1", event_id: str = ""
) -> dict[str, Any]:
    """A person mentions the app with `text` in C1 (in the thread `thread_ts`, else top level)."""
    message: dict[str, Any] = {"type": "message", "user": user, "text": f"<@UBOT> {text}"}
    if thread_ts:
        message["thread_ts"] = thread_ts
    stored = fake.workspace.store_message("C1", message)
    event = payloads.app_mention(message["text"], ts=stored["ts"], thread_ts=thread_ts, user=user)
    stack.dispatch(payloads.event_callback(event, event_id=event_id or None))
    return event


def root(event: dict[str, Any]) -> str:
    return str(event.get("thread_ts") or event["ts"])


def app_posts(fake: FakeSlack, thread_ts: str) -> list[dict[str, Any]]:
    return [m for m in fake.messages("C1", thread_ts) if m.get("bot_id") and not m.get("username")]


def wait_for_posts(fake: FakeSlack, thread_ts: str, count: int = 1) -> list[dict[str, Any]]:
    fake.wait_for(lambda: len(app_posts(fake, thread_ts)) >= count)
    return app_posts(fake, thread_ts)


def wait_for_ephemeral(fake: FakeSlack, user: str, count: int = 1) -> str:
    fake.wait_for(lambda: len(fake.ephemerals("C1", user)) >= count)
    return str(fake.ephemerals("C1", user)[count - 1]["text"])


def lessons(stack: Stack, name: str) -> list[Lesson]:
    return stack.memory.lessons(stack.personas.get(name), PROJECT)


def deliberated(stack: Stack, thread_ts: str, *speakers: str) -> None:
    """A deliberation happened in the thread, with these personas taking turns."""
    started = stack.log.start(Deliberation("the deploy plan", PROJECT, f"C1:{thread_ts}"))
    assert started.id is not None
    for name in speakers:
        stack.log.add_turn(started.id, Turn(persona=name, role="r", text="Looks fine.", round=1))


def shown(value: Any) -> str:
    """Blocks (or a whole message) as the text they show, to look for words in."""
    return json.dumps(value, ensure_ascii=False)


def buttons(message: dict[str, Any]) -> dict[str, str]:
    """The action id -> value of every button on a message (in an actions block, or beside a line)."""
    blocks = message.get("blocks", [])
    found = {
        element["action_id"]: element["value"] for b in blocks if b["type"] == "actions" for element in b["elements"]
    }
    found.update({b["accessory"]["action_id"]: b["accessory"]["value"] for b in blocks if "accessory" in b})
    return found


def click(stack: Stack, action: str, value: str, message: dict[str, Any], *, user: str) -> None:
    stack.dispatch(payloads.block_action(action, value, user=user, message_ts=message["ts"]))


def test_a_persona_named_remembers_what_a_person_teaches_and_the_note_says_who(stack: Stack, fake: FakeSlack) -> None:
    event = mention(stack, fake, "Maya, remember that we deploy on Thursdays now")
    [note] = wait_for_posts(fake, root(event))
    assert note["text"] == "★ Maya remembered: We deploy on Thursdays now."
    assert "taught by <@U1>" in shown(note["blocks"])
    [lesson] = lessons(stack, "Maya")
    assert (lesson.text, lesson.author, lesson.kind) == ("We deploy on Thursdays now.", "U1", TAUGHT)
    assert lesson.link == thread_link("C1", root(event))
    assert ForgetTarget.decode(buttons(note)["lesson_forget"]) == ForgetTarget("maya", PROJECT, lesson.id, "note")
    assert lessons(stack, "Carlos") == []
    stack.drain()
    assert stack.log.recent() == []  # a teaching is not a topic: no deliberation


def test_without_a_name_the_personas_of_the_threads_deliberation_learn(stack: Stack, fake: FakeSlack) -> None:
    thread = fake.workspace.store_message("C1", {"type": "message", "user": "U1", "text": "the deploy plan"})
    deliberated(stack, thread["ts"], "Priya", "Carlos")
    mention(stack, fake, "please note that the payments suite is flaky on CI", thread_ts=thread["ts"])
    [note] = wait_for_posts(fake, thread["ts"])  # one lessons message, a line per persona
    assert note["text"].splitlines() == [
        "★ Priya remembered: The payments suite is flaky on CI.",
        "★ Carlos remembered: The payments suite is flaky on CI.",
    ]
    assert [lesson.text for lesson in lessons(stack, "Priya")] == ["The payments suite is flaky on CI."]
    assert lessons(stack, "Maya") == []


def test_in_a_fresh_thread_without_a_name_the_app_asks_which_persona(stack: Stack, fake: FakeSlack) -> None:
    event = mention(stack, fake, "remember that we deploy on Thursdays now")
    [question] = wait_for_posts(fake, root(event))
    assert question["text"].startswith("Which persona should remember this?")
    assert "“@Night Watch Carlos, remember that …”. The personas: Carlos, Dev, Maya and Priya." in question["text"]
    assert all(lessons(stack, name) == [] for name in ("Maya", "Carlos", "Priya", "Dev"))
    stack.drain()
    assert stack.log.recent() == []


def test_teaching_it_again_says_the_persona_already_knew(stack: Stack, fake: FakeSlack) -> None:
    first = mention(stack, fake, "Maya, remember that we deploy on Thursdays now")
    wait_for_posts(fake, root(first))
    mention(stack, fake, "Maya, remember: we deploy on Thursdays now", thread_ts=root(first), user="U3")
    posts = wait_for_posts(fake, root(first), 2)
    assert posts[1]["text"] == "Maya already knew that (We deploy on Thursdays now.); seen 2 times."
    [lesson] = lessons(stack, "Maya")
    assert (lesson.seen, lesson.author) == (2, "U1")


def test_an_update_in_now_wording_replaces_what_it_changes(stack: Stack, fake: FakeSlack) -> None:
    first = mention(stack, fake, "Maya, remember that we deploy on Fridays after the release train")
    wait_for_posts(fake, root(first))
    mention(stack, fake, "Maya, remember that we deploy on Thursdays now", thread_ts=root(first))
    fake.wait_for(lambda: bool(fake.calls_to("chat.update")))  # the thread's lessons message, updated in place
    [note] = app_posts(fake, root(first))
    assert note["text"].splitlines()[1] == "★ Maya remembered: We deploy on Thursdays now."
    assert [lesson.text for lesson in lessons(stack, "Maya")] == ["We deploy on Thursdays now."]
    history = stack.memory.history(stack.personas.get("Maya"), PROJECT)
    assert [lesson.text for lesson in history] == ["We deploy on Fridays after the release train."]


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("Maya, remember that ok", "Not remembered: it is a placeholder"),
        (
            "Bob, remember that we deploy on Thursdays",
            "No persona is called 'Bob'. The personas are: Carlos, Dev, Maya, Priya.",
        ),
        ("remember for Maya and Bob that we deploy on Thursdays", "No persona is called 'Bob'"),
        ("Maya, forget about it", "Tell me what to forget"),
        ("Maya, remember that " + "x" * 400, "shorten it to at most 400"),
    ],
)
def test_a_teaching_that_cannot_be_used_is_answered_privately_and_changes_nothing(
    stack: Stack, fake: FakeSlack, text: str, answer: str
) -> None:
    event = mention(stack, fake, text)
    said = wait_for_ephemeral(fake, "U1")
    assert answer in said
    assert fake.ephemerals("C1", "U1")[0]["thread_ts"] == root(event)
    stack.drain()
    assert app_posts(fake, root(event)) == []
    assert lessons(stack, "Maya") == []
    assert stack.log.recent() == []


def test_a_question_about_remembering_is_a_topic_and_starts_a_deliberation(stack: Stack, fake: FakeSlack) -> None:
    mention(stack, fake, "should we remember to rotate the signing keys?")
    stack.drain()
    [deliberation] = stack.log.recent()
    assert deliberation.topic == "should we remember to rotate the signing keys?"


def test_a_duplicate_delivery_records_the_lesson_once(stack: Stack, fake: FakeSlack) -> None:
    event = mention(stack, fake, "Maya, remember that we deploy on Thursdays now", event_id="EvTEACH1")
    stack.dispatch(payloads.event_callback(event, event_id="EvTEACH1"))  # Slack's retry
    stack.drain()
    [lesson] = lessons(stack, "Maya")
    assert lesson.seen == 1
    assert len(app_posts(fake, root(event))) == 1


def test_a_secret_in_a_teaching_is_never_remembered(stack: Stack, fake: FakeSlack) -> None:
    token = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
    event = mention(stack, fake, f"Maya, remember that the deploy bot uses {token}")
    [note] = wait_for_posts(fake, root(event))
    [lesson] = lessons(stack, "Maya")
    assert lesson.text == "The deploy bot uses [redacted slack token]."
    assert token not in shown(note)


def teach_then_offer(stack: Stack, fake: FakeSlack, *, asker: str = "U3") -> tuple[dict[str, Any], Lesson]:
    """U1 teaches Maya and Carlos a lesson; `asker` asks to forget it in other words; returns the offer posted."""
    first = mention(stack, fake, "Maya and Carlos, remember that sessions are cached in Redis for a day")
    wait_for_posts(fake, root(first), 1)  # one lessons message for both
    mention(stack, fake, "Maya and Carlos, forget that we cache sessions in Redis", thread_ts=root(first), user=asker)
    posts = wait_for_posts(fake, root(first), 2)
    [lesson] = lessons(stack, "Maya")
    return posts[1], lesson


def test_forget_offers_the_closest_lesson_and_only_its_teacher_or_an_admin_may_confirm(
    stack: Stack, fake: FakeSlack
) -> None:
    offer, lesson = teach_then_offer(stack, fake)
    text = shown(offer["blocks"])
    assert "<@U3> asked to forget this lesson of *Maya* and *Carlos*" in text
    assert "Sessions are cached in Redis for a day." in text
    assert "taught by <@U1>" in text
    assert "Only <@U1> (who taught it) or a Night Watch admin can forget it." in text
    value = buttons(offer)["teach_forget"]
    assert TeachTarget.decode(value) == TeachTarget(("maya", "carlos"), PROJECT, lesson.id, "U3")

    click(stack, "teach_forget", value, offer, user="U3")  # asked, but did not teach it (and is no admin)
    assert "Only the person who taught this lesson or a Night Watch admin" in wait_for_ephemeral(fake, "U3")
    assert [len(lessons(stack, name)) for name in ("Maya", "Carlos")] == [1, 1]

    click(stack, "teach_forget", value, offer, user="U1")
    fake.wait_for(lambda: bool(fake.calls_to("chat.update")))
    updated = fake.workspace.find_message("C1", offer["ts"])
    assert updated is not None
    assert "forgotten by <@U1>; Maya and Carlos no longer know it" in shown(updated["blocks"])
    assert "teach_forget" not in shown(updated["blocks"])
    assert lessons(stack, "Maya") == lessons(stack, "Carlos") == []


def test_an_admin_may_forget_a_lesson_the_persona_recorded_itself(stack: Stack, fake: FakeSlack) -> None:
    stack.memory.remember(stack.personas.get("Maya"), PROJECT, "Sessions are cached in Redis for a day.")
    event = mention(stack, fake, "Maya, forget about the Redis session cache")
    [offer] = wait_for_posts(fake, root(event))
    assert "recorded by the persona itself · Only a Night Watch admin can forget it." in shown(offer["blocks"])
    value = buttons(offer)["teach_forget"]
    click(stack, "teach_forget", value, offer, user="U1")
    assert "Only a Night Watch admin can forget this lesson" in wait_for_ephemeral(fake, "U1")
    click(stack, "teach_forget", value, offer, user=ADMIN)
    fake.wait_for(lambda: lessons(stack, "Maya") == [])
    click(stack, "teach_forget", value, offer, user=ADMIN)  # a second click: nothing left to forget
    assert "forgotten already" in wait_for_ephemeral(fake, ADMIN)


def test_keep_it_closes_the_offer_and_the_lesson_stays(stack: Stack, fake: FakeSlack) -> None:
    offer, _ = teach_then_offer(stack, fake, asker="U3")
    value = buttons(offer)["teach_keep"]
    click(stack, "teach_keep", value, offer, user="U4")  # neither asked nor taught, and no admin
    assert "Only the person who asked" in wait_for_ephemeral(fake, "U4")
    click(stack, "teach_keep", value, offer, user="U3")
    fake.wait_for(lambda: bool(fake.calls_to("chat.update")))
    updated = fake.workspace.find_message("C1", offer["ts"])
    assert updated is not None
    assert "kept; <@U3> chose not to forget it" in shown(updated["blocks"])
    assert [lesson.text for lesson in lessons(stack, "Maya")] == ["Sessions are cached in Redis for a day."]


def test_when_nothing_is_close_the_nearest_lessons_are_shown_without_a_button(stack: Stack, fake: FakeSlack) -> None:
    maya = stack.personas.get("Maya")
    stack.memory.remember(maya, PROJECT, "Sessions are cached in Redis for a day.")
    event = mention(stack, fake, "Maya, forget that the Redis cluster, coffee machine and printer need love")
    [answer] = wait_for_posts(fake, root(event))
    text = shown(answer["blocks"])
    assert "Nothing *Maya* remember about *general* is close to" in text
    assert "Sessions are cached in Redis for a day." in text
    assert buttons(answer) == {}
    assert len(lessons(stack, "Maya")) == 1


@pytest.mark.parametrize(
    "value",
    [
        "{not json",
        "[1, 2]",
        '{"p": "maya", "j": "general", "l": "0123abcd", "a": "U1"}',
        '{"p": [], "j": "general", "l": "0123abcd", "a": "U1"}',
        '{"p": ["maya"], "j": 7, "l": "0123abcd", "a": "U1"}',
        '{"p": ["maya"], "j": "general", "l": "0123abcd"}',
    ],
)
def test_a_teaching_button_with_a_malformed_value_gets_a_clear_private_answer(
    stack: Stack, fake: FakeSlack, value: str
) -> None:
    url = f"{fake.http_url}/response/bad"
    stack.dispatch(payloads.block_action("teach_forget", value, user=ADMIN, response_url=url))
    fake.wait_for(lambda: bool(fake.calls_to("response_url")))
    reply = fake.calls_to("response_url")[0].args
    assert "no longer points at a lesson" in reply["text"]
    assert reply["response_type"] == "ephemeral"


def test_the_teacher_may_use_the_notes_forget_button_and_other_members_may_not(stack: Stack, fake: FakeSlack) -> None:
    event = mention(stack, fake, "Maya, remember that we deploy on Thursdays now")
    [note] = wait_for_posts(fake, root(event))
    value = buttons(note)["lesson_forget"]
    click(stack, "lesson_forget", value, note, user="U3")
    assert "Only Night Watch admins can forget lessons" in wait_for_ephemeral(fake, "U3")
    assert lessons(stack, "Maya")
    click(stack, "lesson_forget", value, note, user="U1")
    fake.wait_for(lambda: lessons(stack, "Maya") == [])


def test_a_persona_that_refuses_the_lesson_says_why_in_the_thread_while_the_others_learn(
    stack: Stack, fake: FakeSlack
) -> None:
    carlos = stack.personas.get("Carlos")
    stack.memory.remember(carlos, PROJECT, "The payments suite is flaky on CI runners.")
    stack.memory.remember(carlos, PROJECT, "Rerun the payments suite before blaming a change.")
    event = mention(
        stack,
        fake,
        "Maya and Carlos, remember that the payments suite is flaky on CI runners; "
        "rerun the payments suite before blaming a change",
    )
    refusal, maya = wait_for_posts(fake, root(event), 2)  # the lessons message comes once every persona answered
    assert maya["text"].startswith("★ Maya remembered: The payments suite is flaky on CI runners; rerun")
    assert refusal["text"].startswith("Carlos: Not remembered: it copies lessons already remembered")
    assert len(lessons(stack, "Carlos")) == 2


def test_the_taught_note_says_what_recording_did(stack: Stack, fake: FakeSlack) -> None:
    event = mention(stack, fake, "Maya, remember that we deploy on Thursdays now")
    [note] = wait_for_posts(fake, root(event))
    assert "· created" in shown(note["blocks"])
    stack.drain()
