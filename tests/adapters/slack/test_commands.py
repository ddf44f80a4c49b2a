"""/nightwatch subcommands, dispatched into the real Bolt app; answers arrive through the fake's response_url."""

from __future__ import annotations

import time

import pytest

from nightwatch.adapters.encoder import embeddings
from tests import payloads
from tests.adapters.slack.stack import ADMIN, Stack
from tests.fake_slack import FakeSlack

LESSON = "The login endpoint needs a per-account rate limit, not only per IP."


def text_of(answer: dict[str, object]) -> str:
    return f"{answer.get('text', '')} {answer.get('blocks', '')}"


def test_a_command_is_acked_before_its_work_is_done(stack: Stack, fake: FakeSlack) -> None:
    started = time.monotonic()
    ack = stack.dispatch(payloads.slash_command("history", response_url=f"{fake.http_url}/response/a"))
    assert ack.status == 200
    assert time.monotonic() - started < 0.5


@pytest.mark.parametrize("text", ["help", "", "dance wildly"])
def test_help_and_unknown_subcommands_answer_with_the_help_text(stack: Stack, fake: FakeSlack, text: str) -> None:
    answer = stack.command(fake, text)
    assert answer["response_type"] == "ephemeral"
    assert "/nightwatch ask" in text_of(answer)
    assert "Maya" in text_of(answer)


def test_personas_lists_each_with_edit_and_delete_buttons(stack: Stack, fake: FakeSlack) -> None:
    blocks = stack.command(fake, "personas")["blocks"]
    assert isinstance(blocks, list)
    buttons = [e["action_id"] for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert buttons.count("persona_edit") == 4
    assert buttons.count("persona_delete") == 4


def test_an_admin_opens_the_persona_modal_with_the_trigger_id(stack: Stack, fake: FakeSlack) -> None:
    trigger = fake.new_trigger_id()
    stack.dispatch(
        payloads.slash_command(
            "persona new", user=ADMIN, trigger_id=trigger, response_url=f"{fake.http_url}/response/b"
        )
    )
    fake.wait_for(lambda: bool(fake.calls_to("views.open")))
    call = fake.calls_to("views.open")[0]
    assert call.args["trigger_id"] == trigger
    assert call.args["view"]["callback_id"] == "persona_save"


def test_a_member_is_refused_the_persona_modal(stack: Stack, fake: FakeSlack) -> None:
    answer = stack.command(fake, "persona new", user="U1")
    assert "Only Night Watch admins can create personas" in text_of(answer)
    assert fake.calls_to("views.open") == []


def test_a_workspace_owner_counts_as_an_admin(stack: Stack, fake: FakeSlack) -> None:
    stack.dispatch(
        payloads.slash_command(
            "persona edit Maya", user="U2", trigger_id=fake.new_trigger_id(), response_url=f"{fake.http_url}/response/c"
        )
    )
    fake.wait_for(lambda: bool(fake.calls_to("views.open")))
    view = fake.calls_to("views.open")[0].args["view"]
    assert '"id": ' in view["private_metadata"]
    assert "Edit persona" in str(view["title"])


def test_remember_then_memory_lists_the_lesson_with_a_forget_button(stack: Stack, fake: FakeSlack) -> None:
    answer = stack.command(fake, f"remember Maya {LESSON}")
    assert "Maya remembers" in text_of(answer)
    fake.wait_for(lambda: fake.home_view("U1") is not None)  # the Home tab is refreshed for the user
    listed = stack.command(fake, "memory maya")
    assert LESSON in text_of(listed)
    assert "lesson_forget" in text_of(listed)
    assert "general" in text_of(listed)
    other = stack.command(fake, "memory Maya other-project")
    assert "no memory of *other-project*" in text_of(other)


def test_a_lesson_remembered_in_slack_is_filed_and_listed_under_who_added_it(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, f"remember Maya {LESSON}", user="U1")
    [lesson] = stack.memory.lessons(stack.personas.get("Maya"), "general")
    assert lesson.author == "U1"
    assert "added by <@U1>" in text_of(stack.command(fake, "memory maya"))
    fake.wait_for(lambda: "added by <@U1>" in str(fake.home_view("U1")))


def test_remember_takes_an_optional_category_and_the_list_shows_it_with_the_overview(
    stack: Stack, fake: FakeSlack
) -> None:
    answer = stack.command(fake, "remember Maya Events: the 2026-03-02 deploy leaked a key into the CI log.")
    assert "(events) for general: the 2026-03-02 deploy leaked a key into the CI log." in text_of(answer)
    stack.command(fake, "remember Maya Staging: wiped every Monday at 06:00.")  # not a category: all lesson
    maya = stack.personas.get("Maya")
    leak, staging = stack.memory.lessons(maya, "general")
    assert (leak.category, staging.category, staging.text) == ("events", None, "Staging: wiped every Monday at 06:00.")
    file = stack.settings.home / "agents" / "maya" / "memories" / "general" / "main.md"
    file.write_text(file.read_text().replace("cat:events by:U1 -->\n", "cat:events by:U1 -->\n  > Masked since.\n"))
    listed = text_of(stack.command(fake, "memory maya"))
    assert "the 2026-03-02 deploy leaked a key into the CI log.\\n>Masked since.\\n`" in listed  # a quote
    assert " · events · added by <@U1>" in listed
    found = text_of(stack.command(fake, "memory search Maya deploy key leak"))
    assert ">Masked since." in found


def test_the_memory_list_reports_lines_of_the_file_it_could_not_read(stack: Stack, fake: FakeSlack) -> None:
    file = stack.settings.home / "agents" / "maya" / "memories" / "general" / "main.md"
    file.parent.mkdir(parents=True)
    file.write_text(f"## 2026-11-20 · manual\n* {LESSON}\n- <!channel> <!-- seen:x -->\n")
    listed = text_of(stack.command(fake, "memory maya"))
    assert LESSON in listed
    assert '1 line not understood: line 3 "- &lt;!channel&gt; &lt;!-- seen:x --&gt;"' in listed


def test_memory_search_finds_matching_lessons(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, f"remember Maya {LESSON}")
    stack.command(fake, "remember Maya Backups are restored and checked every quarter.")
    found = text_of(stack.command(fake, "memory search Maya rate limit"))
    assert LESSON in found
    assert "Backups" not in found


def test_memory_and_memory_search_filter_by_category(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, "remember Maya events: the 2026-03-02 deploy leaked a key into the CI log.")
    stack.command(fake, "remember Maya patterns: a leaked key is rotated the same day.")
    listed = text_of(stack.command(fake, "memory maya category:events"))
    assert "remembers 1 lessons in events about *general*" in listed
    assert "deploy leaked a key" in listed
    assert "rotated the same day" not in listed
    found = text_of(stack.command(fake, "memory search Maya category:patterns leaked key"))
    assert "rotated the same day" in found
    assert "deploy leaked a key" not in found
    refused = text_of(stack.command(fake, "memory maya category:gossip"))
    assert "gossip" in refused
    assert "events" in refused


@pytest.mark.skipif(not embeddings.available(), reason="the all-MiniLM-L6-v2 package is not installed")
def test_memory_search_finds_a_lesson_worded_differently(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, "remember Maya Rotate the signing keys after every incident.")
    stack.command(fake, "remember Maya Backups are restored and checked every quarter.")
    found = text_of(stack.command(fake, "memory search Maya replace the secrets when something goes wrong"))
    assert "signing keys" in found
    assert "Backups" not in found


def test_forget_is_for_admins_only(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, f"remember Carlos {LESSON}")
    [lesson] = stack.memory.lessons(stack.personas.get("Carlos"), "general")
    refused = stack.command(fake, f"forget Carlos {lesson.id}", user="U1")
    assert "Only Night Watch admins can forget lessons" in text_of(refused)
    assert stack.memory.lessons(stack.personas.get("Carlos"), "general")
    done = stack.command(fake, f"forget Carlos {lesson.id}", user=ADMIN)
    assert f"forgot `{lesson.id}`" in text_of(done)
    assert stack.memory.lessons(stack.personas.get("Carlos"), "general") == []


def test_context_full_lists_the_lessons_that_went_into_the_prompt(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, f"remember Maya events: {LESSON}")
    report = text_of(stack.command(fake, "context Maya full"))
    assert "Injected lessons (1):" in report
    assert f"[events] {LESSON}" in report
    assert "Pinned documents (0):" in report
    assert "Injected lessons" not in text_of(stack.command(fake, "context Maya"))
    assert "add `full` to list what went in" in text_of(stack.command(fake, "context Maya everything"))


def test_domain_errors_come_back_as_their_message(stack: Stack, fake: FakeSlack) -> None:
    answer = stack.command(fake, "memory Nobody")
    assert "No persona is called 'Nobody'" in text_of(answer)
    assert "Traceback" not in text_of(answer)
    assert "not usable" in text_of(stack.command(fake, "project ../../etc"))


def test_project_maps_the_channel_and_context_reports_the_budget(stack: Stack, fake: FakeSlack) -> None:
    assert "uses the project *general*" in text_of(stack.command(fake, "project"))
    assert "maps to the project *night-watch*" in text_of(stack.command(fake, "project Night Watch", user=ADMIN))
    assert stack.state.project_for("C1") == "night-watch"
    report = text_of(stack.command(fake, "context Maya"))
    assert "night-watch" in report
    assert "0 of 0 lessons injected" in report
    assert "remaining" in report


def test_only_an_admin_re_points_a_channel_to_another_project(stack: Stack, fake: FakeSlack) -> None:
    refused = text_of(stack.command(fake, "project elsewhere", user="U3"))
    assert "Only Night Watch admins can change a channel's project" in refused
    assert stack.state.project_for("C1") is None  # still the channel's name
    assert "uses the project *general*" in text_of(stack.command(fake, "project", user="U3"))  # anyone may look
    assert "maps to the project *elsewhere*" in text_of(stack.command(fake, "project elsewhere", user="U2"))
    assert stack.state.project_for("C1") == "elsewhere"


def test_ask_posts_the_topic_and_deliberates_in_its_thread_then_history_shows_it(stack: Stack, fake: FakeSlack) -> None:
    stack.dispatch(
        payloads.slash_command("ask Should we cache session lookups?", response_url=f"{fake.http_url}/response/d")
    )
    fake.wait_for(lambda: any(d.status.value == "done" for d in stack.log.recent()), timeout=10)
    root = fake.messages("C1")[0]
    assert root["text"] == "<@U1> asked: Should we cache session lookups?"
    assert any(m.get("username") for m in fake.messages("C1", root["ts"]))
    history = text_of(stack.command(fake, "history"))
    assert "Should we cache session lookups?" in history
    assert "general" in history


def test_ask_repeats_the_topic_without_letting_it_ping_the_channel(stack: Stack, fake: FakeSlack) -> None:
    topic = "ask <!channel> <!subteam^S1|@oncall> ＠here should <@U7> review the <https://evil.example|runbook>?"
    stack.dispatch(payloads.slash_command(topic, response_url=f"{fake.http_url}/response/d"))
    fake.wait_for(lambda: any(d.status.value == "done" for d in stack.log.recent()), timeout=10)
    root = fake.messages("C1")[0]["text"]
    assert root.startswith("<@U1> asked: ")
    assert "<!" not in root  # no broadcast or group token
    assert "＠" not in root  # no look-alike
    assert "<@U7>" in root  # the asker's own mention of a person stays
    assert "<https://evil.example>" in root


def test_remember_says_whether_it_created_the_lesson_or_merged_it_into_one_kept(stack: Stack, fake: FakeSlack) -> None:
    first = text_of(stack.command(fake, "remember Maya The release train runs on Tuesdays."))
    [lesson] = stack.memory.lessons(stack.personas.get("Maya"), "general")
    assert f"`{lesson.id}`" in first
    assert "· created" in first
    again = text_of(stack.command(fake, "remember Maya the release train runs on tuesdays"))
    assert f"· merged into {lesson.id}" in again
