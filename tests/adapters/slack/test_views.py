"""Block Kit builders and the persona modal: limits, escaping, and the form round trip."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from nightwatch.adapters.slack.blocks import VIEW_BLOCKS
from nightwatch.adapters.slack.persona_modal import FIELDS, Submission, field_errors, persona_modal, to_draft
from nightwatch.adapters.slack.views import (
    ForgetTarget,
    PersonaMemory,
    help_blocks,
    home_view,
    memory_blocks,
    personas_blocks,
)
from nightwatch.domain.models import Lesson, Persona, Soul, Style
from tests import payloads
from tests.fakes import T0

MAYA = Persona(
    name="Maya",
    slug="maya",
    role="Security Reviewer",
    avatar="🔒",
    id=3,
    soul=Soul(
        who_i_am="I review for attacks.",
        worldview=("Inputs are hostile.",),
        opinions={"auth": ("Tokens expire.", "Sessions are revocable.")},
        pet_peeves=("Secrets in logs.",),
    ),
    style=Style(tone="calm", words_used=("blast radius", "threat"), anti_patterns=("Vague warnings.",)),
)


def lesson(number: int, text: str = "") -> Lesson:
    return Lesson(id=f"id{number:04d}", text=text or f"Lesson number {number}", recorded_at=T0 + timedelta(days=number))


def test_the_modal_shows_every_editable_field_with_multiline_inputs_for_long_text() -> None:
    view = persona_modal(MAYA)
    blocks = {b["block_id"]: b for b in view["blocks"]}
    assert set(blocks) == {f.key for f in FIELDS} | {"active"}
    assert blocks["who_i_am"]["element"]["multiline"]
    assert blocks["opinions"]["element"]["multiline"]
    assert not blocks["name"]["element"]["multiline"]
    assert blocks["name"]["element"]["max_length"] == 40
    assert blocks["opinions"]["element"]["initial_value"] == "auth: Tokens expire.\nauth: Sessions are revocable."
    assert view["private_metadata"] == '{"id": 3}'
    assert len(view["title"]["text"]) <= 24


def test_a_submission_round_trips_and_keeps_fields_the_modal_does_not_show() -> None:
    initial = {b["block_id"]: b["element"].get("initial_value", "") for b in persona_modal(MAYA)["blocks"]}
    form = payloads.persona_form(**{k: v for k, v in initial.items() if k != "active"}, active=False)
    submission = Submission.parse(payloads.view_submission(form, persona_id=3)["view"])
    assert submission.persona_id == 3
    assert submission.active is False
    assert field_errors(submission) == {}
    draft = to_draft(submission, MAYA)
    assert draft.soul == MAYA.soul
    assert draft.style == MAYA.style
    assert draft.active is False


def test_words_split_on_commas_and_lines_and_bullets_are_stripped() -> None:
    form = payloads.persona_form(
        name="Rita", role="QA", words_used="ship, rollback\nflag", worldview="- one\n• two\n\n"
    )
    draft = to_draft(Submission.parse(payloads.view_submission(form)["view"]), None)
    assert draft.style is not None
    assert draft.style.words_used == ("ship", "rollback", "flag")
    assert draft.soul is not None
    assert draft.soul.worldview == ("one", "two")


def test_field_errors_name_the_block_of_each_bad_field() -> None:
    form = payloads.persona_form(name="", role="", model="has spaces", avatar="nope")
    errors = field_errors(Submission.parse(payloads.view_submission(form)["view"]))
    assert set(errors) == {"name", "role", "model", "avatar"}


def test_personas_list_respects_the_message_block_limit() -> None:
    many = [replace(MAYA, name=f"P{i}", slug=f"p{i}", id=i) for i in range(40)]
    blocks = personas_blocks(many)
    assert len(blocks) <= 50
    assert "more" in str(blocks[-1])


def test_memory_list_escapes_text_and_encodes_the_forget_target() -> None:
    blocks = memory_blocks(MAYA, "general", [lesson(1, "Never log <!channel> & <@U1> tokens")])
    text = blocks[1]["text"]["text"]
    assert "&lt;!channel&gt; &amp; &lt;@U1&gt;" in text
    target = ForgetTarget.decode(blocks[1]["accessory"]["value"])
    assert target == ForgetTarget("maya", "general", "id0001", "list")


def test_the_home_view_stays_within_the_view_block_limit() -> None:
    personas = [replace(MAYA, name=f"P{i}", slug=f"p{i}", id=i) for i in range(12)]
    entries = [
        PersonaMemory(p, tuple((f"proj{j}", tuple(lesson(k) for k in range(5)), 9) for j in range(3))) for p in personas
    ]
    view = home_view(entries, admin=True)
    assert view["type"] == "home"
    assert len(view["blocks"]) <= VIEW_BLOCKS
    assert "showing 5" in str(view["blocks"])
    assert "More personas than fit" in str(view["blocks"][-1])


def test_help_lists_the_subcommands_and_the_personas() -> None:
    text = str(help_blocks(command="/nightwatch", bot="<@UBOT>", personas=[MAYA, replace(MAYA, name="Carlos")]))
    for sub in (
        "ask",
        "personas",
        "persona new",
        "memory search",
        "remember",
        "forget",
        "context",
        "project",
        "history",
    ):
        assert f"/nightwatch {sub}" in text
    assert "Maya and Carlos" in text


def test_a_lesson_a_person_added_says_who_added_it() -> None:
    by_user = replace(lesson(1), author="U123ABC")
    by_cli = replace(lesson(2), author="cli")
    by_hand = replace(lesson(3), author="ops-bot")
    blocks = memory_blocks(MAYA, "general", [by_user, by_cli, by_hand, lesson(4)])
    lines = [block["text"]["text"].split("\n")[1] for block in blocks[1:]]
    assert lines == [
        "`id0001` · 2026-11-22 · added by <@U123ABC>",
        "`id0002` · 2026-11-23 · added from the CLI",
        "`id0003` · 2026-11-24 · added by ops-bot",
        "`id0004` · 2026-11-25",
    ]


def test_the_home_view_says_who_added_a_lesson() -> None:
    entry = PersonaMemory(MAYA, (("general", (replace(lesson(1), author="U123ABC"),), 1),))
    assert "added by <@U123ABC>" in str(home_view([entry], admin=False))


def test_the_memory_list_shows_unread_lines_under_its_heading_within_the_block_limit() -> None:
    blocks = memory_blocks(MAYA, "general", [lesson(n) for n in range(80)], unread='1 line not understood: line 3 "<-"')
    assert len(blocks) <= 50
    assert blocks[1] == {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": '⚠️ 1 line not understood: line 3 "&lt;-"'}],
    }
    assert "more" in str(blocks[-1])
    empty = memory_blocks(MAYA, "general", [], unread='1 line not understood: line 3 "-"')
    assert "no memory of" in str(empty[0])
    assert "not understood" in str(empty[1])


def test_a_lesson_shows_its_overview_as_a_quote_and_its_category_escaped_and_clipped() -> None:
    structured = replace(lesson(1), category="cases", overview="Fixed by <!channel> & a retry; " + "x" * 900)
    [_, block] = memory_blocks(MAYA, "general", [structured])
    abstract, overview, meta = block["text"]["text"].split("\n")
    assert abstract == "Lesson number 1"
    assert overview.startswith(">Fixed by &lt;!channel&gt; &amp; a retry; xxx")
    assert overview.endswith("…")
    assert (
        len(overview.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")) == 1 + 700
    )  # clipped, then escaped
    assert meta == "`id0001` · 2026-11-22 · cases"
    plain_lesson = memory_blocks(MAYA, "general", [lesson(2)])[1]["text"]["text"]
    assert plain_lesson == "Lesson number 2\n`id0002` · 2026-11-23"  # no overview, no category: as before


def test_the_home_view_shows_a_lessons_overview_and_category() -> None:
    structured = replace(lesson(1), category="events", overview="The canary caught it.")
    view = str(home_view([PersonaMemory(MAYA, (("general", (structured,), 1),))], admin=False))
    assert "Lesson number 1\\n>The canary caught it.\\n`id0001` · 2026-11-22 · events" in view


def test_the_help_says_remember_takes_a_category() -> None:
    text = str(help_blocks(command="/nightwatch", bot="@nw", personas=[MAYA]))
    assert "remember <persona> [category:] <lesson>" in text
    assert "`profile`, `preferences`, `entities`, `events`, `cases`, `patterns`" in text
