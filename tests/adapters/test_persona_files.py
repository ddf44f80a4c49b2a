"""The default persona YAML files: they load, they are rich and distinct, and they ship with the package."""

from __future__ import annotations

import dataclasses
import itertools
import tomllib
from pathlib import Path

import pytest

from nightwatch.adapters.persona_files import default_persona_dir, load_default_personas
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.models import Persona

ROOT = Path(__file__).resolve().parents[2]
REQUIRED_MODES = {"deliberation", "pr_review", "incident", "proactive"}


@pytest.fixture(scope="module")
def defaults() -> dict[str, Persona]:
    return {persona.slug: persona for persona in load_default_personas()}


def test_the_four_defaults_load_from_the_source_tree(defaults: dict[str, Persona]) -> None:
    assert default_persona_dir() == ROOT / "personas"
    assert {slug: p.role for slug, p in defaults.items()} == {
        "carlos": "Tech Lead / Architect",
        "dev": "Implementer",
        "maya": "Security Reviewer",
        "priya": "QA Engineer",
    }


@pytest.mark.parametrize("slug", ["maya", "carlos", "priya", "dev"])
def test_every_default_fills_every_field(defaults: dict[str, Persona], slug: str) -> None:
    persona = defaults[slug]
    assert persona.avatar
    assert persona.active
    for section in (persona.soul, persona.style, persona.skill):
        for field in dataclasses.fields(section):
            assert getattr(section, field.name), f"{slug}: {type(section).__name__}.{field.name} is empty"
    assert set(persona.skill.modes) >= REQUIRED_MODES
    assert persona.name in persona.soul.who_i_am


@pytest.mark.parametrize("slug", ["maya", "carlos", "priya", "dev"])
def test_opinions_and_expertise_are_keyword_rich(defaults: dict[str, Persona], slug: str) -> None:
    soul = defaults[slug].soul
    assert len(soul.opinions) >= 6
    assert all(len(views) >= 2 for views in soul.opinions.values())
    assert len(soul.expertise) >= 8
    words = {w.strip(".,()").lower() for text in soul.expertise for w in text.split()}
    assert len(words) >= 40


def test_the_defaults_are_distinct(defaults: dict[str, Persona]) -> None:
    personas = list(defaults.values())
    for field in ("role", "avatar"):
        assert len({getattr(p, field) for p in personas}) == 4, field
    for field in ("tone", "sentence_structure", "emoji_usage"):
        assert len({getattr(p.style, field) for p in personas}) == 4, field
    examples = [example for p in personas for example in p.style.good_examples]
    assert len(examples) == len(set(examples)), "two defaults share a good example"
    for first, second in itertools.combinations(personas, 2):
        shared = set(first.style.words_used) & set(second.style.words_used)
        assert len(shared) <= 1, f"{first.name} and {second.name} share their voice: {shared}"
        assert first.soul.who_i_am != second.soul.who_i_am
        assert set(first.skill.modes.values()).isdisjoint(second.skill.modes.values())


# --- bad files -------------------------------------------------------------------------------------------------------


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: Maya\nrole: [unclosed\n", "is not valid YAML"),
        ("", "must be a mapping"),
        ("- name: Maya\n", "must be a mapping"),
        ("name: Maya\nrole: Security\nsoul:\n  worldview: one string\n", "soul.worldview must be a list"),
        ("name: Maya\nrole: Security\nstyle:\n  anti_patterns:\n    - Bad: a colon\n", "style.anti_patterns item 1"),
        ("name: ../../etc\nrole: Security\n", "not allowed"),
        ("!!python/object/apply:os.system ['echo hacked']\n", "is not valid YAML"),
    ],
)
def test_a_bad_file_names_the_file_and_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path, "maya.yml", text)
    with pytest.raises(InvalidInputError) as caught:
        load_default_personas(tmp_path)
    assert str(path) in str(caught.value)
    assert message in str(caught.value)


def test_two_files_with_one_name_are_refused(tmp_path: Path) -> None:
    write(tmp_path, "a.yml", "name: Maya\nrole: Security\n")
    write(tmp_path, "b.yml", "name: maya\nrole: Other\n")
    with pytest.raises(InvalidInputError, match=r"a\.yml: defines Maya, as b\.yml in .* does; rename or remove one"):
        load_default_personas(tmp_path)


def test_a_folder_loads_in_file_name_order(tmp_path: Path) -> None:
    write(tmp_path, "b.yml", "name: Bea\nrole: QA\n")
    write(tmp_path, "a.yml", "name: Al\nrole: Dev\n")
    write(tmp_path, "notes.txt", "not a persona")
    assert [p.name for p in load_default_personas(tmp_path)] == ["Al", "Bea"]


# --- packaging -------------------------------------------------------------------------------------------------------


def test_pyproject_ships_every_package_and_the_defaults() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    on_disk = {".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "nightwatch").rglob("__init__.py")}
    listed = set(config["packages"])
    assert on_disk <= listed, f"add {sorted(on_disk - listed)} to [tool.setuptools] packages in pyproject.toml"
    assert config["package-dir"]["nightwatch.default_personas"] == "personas"
    assert config["package-data"]["nightwatch.default_personas"] == ["*.yml"]
