"""Reflection prompts follow the role, name no hard-coded persona, and the answer is parsed leniently."""

from __future__ import annotations

import pytest

from nightwatch.domain.memory.answers import cap_length, parse_lessons
from nightwatch.domain.memory.curation import CurationPrompt
from nightwatch.domain.memory.models import Flavour, MemoryBlockPrompt, ReflectionContext, flavour_for
from nightwatch.domain.memory.reflection import CompactionItem, CompactionPrompt, ReflectionPrompt
from nightwatch.domain.models import Persona

CONTEXT = ReflectionContext(
    kind="pr_review",
    topic="PR #42: move sessions to Redis",
    summary="Auth still reads the old sessions table in two places.",
    outcome="CHANGES",
    link="https://example.slack.com/archives/C1/p1",
)


def _prompt(name: str, role: str) -> str:
    persona = Persona(name=name, slug=name.lower(), role=role)
    return ReflectionPrompt.build(persona, "night-watch", CONTEXT, 400).render()


@pytest.mark.parametrize(
    ("role", "flavour"),
    [
        ("Implementer", Flavour.IMPLEMENTER),
        ("Senior Developer", Flavour.IMPLEMENTER),
        ("Tech Lead / Architect", Flavour.TECH_LEAD),
        ("Solutions architect", Flavour.TECH_LEAD),
        ("QA Engineer", Flavour.QA),
        ("Test automation", Flavour.QA),
        ("QA lead", Flavour.QA),
        ("Security Reviewer", Flavour.SECURITY),
        ("AppSec lead", Flavour.SECURITY),
        ("Product Manager", Flavour.GENERIC),
        ("Data Scientist", Flavour.GENERIC),
        ("", Flavour.GENERIC),
    ],
)
def test_flavour_follows_the_role_text(role: str, flavour: Flavour) -> None:
    assert flavour_for(role) is flavour


@pytest.mark.parametrize(
    ("role", "phrases"),
    [
        ("Implementer", ["patterns, pitfalls or conventions", "Think like a developer"]),
        ("Tech Lead / Architect", ["architectural patterns", "Think like a tech lead"]),
        ("QA Engineer", ["testing gaps, flaky patterns", "Think like a QA engineer"]),
        ("Security Reviewer", ["for security", "Think like a security reviewer"]),
        ("Product Manager", ["What should a Product Manager remember", "as the team's Product Manager"]),
    ],
)
def test_reflection_wording_per_role_names_the_persona_and_includes_the_context(role: str, phrases: list[str]) -> None:
    text = _prompt("Zephyr", role)
    for phrase in phrases:
        assert phrase in text
    assert text.startswith("You are Zephyr, the team's")
    for field in (CONTEXT.kind, CONTEXT.topic, CONTEXT.summary, CONTEXT.outcome, CONTEXT.link or ""):
        assert field in text
    for default_name in ("Maya", "Carlos", "Priya", "Dev "):
        assert default_name not in text


def test_flavours_give_distinct_wording() -> None:
    texts = {_prompt("Zed", role) for role in ("Implementer", "Tech Lead", "QA", "Security", "Designer")}
    assert len(texts) == 5


def test_instructions_only_prompt_leaves_the_interaction_out() -> None:
    persona = Persona(name="Zed", slug="zed", role="QA")
    prompt = ReflectionPrompt.build(persona, "p", CONTEXT, 400)
    bare = prompt.instructions_only().render()
    assert CONTEXT.summary not in bare
    assert CONTEXT.topic not in bare
    assert "Think like a QA engineer" in bare


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("- one lesson here\n- two lesson here", ["one lesson here", "two lesson here"]),
        ("Here you go:\n* starred\n• dotted\n1. numbered\n2) paren", ["starred", "dotted", "numbered"]),
        ('["json one", "json two", 3]', ["json one", "json two"]),
        ('{"lessons": ["from an object"]}', ["from an object"]),
        ("```\n- fenced bullet\n```", ["fenced bullet"]),
        ("- same\n- Same.\n- other", ["same", "other"]),
        ("- \n-   \n- real", ["real"]),
        ('- "quoted lesson"', ["quoted lesson"]),
        ("Just prose, no bullets.", []),
        ("", []),
        ("[not json", []),
        ("NONE", []),
    ],
)
def test_parse_lessons_is_lenient_but_needs_bullets(answer: str, expected: list[str]) -> None:
    assert parse_lessons(answer, max_chars=400, limit=3) == expected


def test_parse_lessons_caps_length_and_count() -> None:
    long = "word " * 200
    lessons = parse_lessons(f"- {long}\n- b lesson\n- c lesson\n- d lesson", max_chars=50, limit=3)
    assert len(lessons) == 3
    assert len(lessons[0]) <= 50
    assert lessons[0].endswith("…")
    assert cap_length("short", 10) == "short"


def test_parse_lessons_strips_file_markup_from_model_output() -> None:
    [lesson] = parse_lessons("- 📌 pinned by the model <!-- seen:99 -->", max_chars=400)
    assert lesson == "pinned by the model seen:99"


@pytest.mark.parametrize(
    "prompt",
    [ReflectionPrompt.example(), CompactionPrompt.example(), CurationPrompt.example(), MemoryBlockPrompt.example()],
)
def test_memory_templates_render_from_their_examples(prompt: object) -> None:
    text = prompt.render()  # type: ignore[attr-defined]
    assert text.strip()
    assert "{{" not in text
    assert "{%" not in text


def test_compaction_prompt_marks_pinned_lessons_and_states_the_target() -> None:
    prompt = CompactionPrompt(
        persona_name="Zed",
        role="Security Reviewer",
        flavour=flavour_for("Security Reviewer").value,
        project="p",
        target=7,
        lessons=(CompactionItem("keep me", pinned=True), CompactionItem("maybe me")),
    )
    text = prompt.render()
    assert "- [pinned] keep me" in text
    assert "- maybe me" in text
    assert "at most 7 lessons" in text
    assert "You are Zed" in text
    assert "security reviewer" in text


def test_memory_block_is_one_bullet_per_lesson() -> None:
    assert MemoryBlockPrompt(lessons=("a b", "c d")).render() == "- a b\n- c d"
