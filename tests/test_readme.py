"""The README and docs/ stay true: every setting config.py (with environment.py) reads is documented, every
documented command parses, the stated ranges are the enforced ones, the README stays a short front door, and every
link between them resolves."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from nightwatch.cli.arguments import build_parser
from nightwatch.domain.deliberation import PERSONAS_MAX, TOPIC_MAX
from nightwatch.domain.deliberation.ports import RECENT_MAX
from nightwatch.domain.memory import LESSON_MAX, QUERY_MAX, SEARCH_MAX
from nightwatch.domain.personas import PERSONA_NAME_MAX, PROJECT_NAME_MAX, ROLE_MAX
from nightwatch.domain.pins import PIN_PATH_MAX, PIN_TEXT_MAX, PIN_URL_MAX

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
OPERATIONS = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
CONFIG = "\n".join((ROOT / "nightwatch" / name).read_text(encoding="utf-8") for name in ("config.py", "environment.py"))


def config_variables() -> set[str]:
    return set(re.findall(r'"((?:NIGHTWATCH|SLACK|ANTHROPIC|DATABASE)_[A-Z_]+)"', CONFIG))


def documented_variables() -> set[str]:
    table = OPERATIONS.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([A-Z_]+)` \|", table, flags=re.MULTILINE))


def test_config_reads_variables() -> None:
    assert {"NIGHTWATCH_HOME", "DATABASE_URL", "SLACK_API_URL"} <= config_variables()


def test_every_variable_config_reads_is_in_the_settings_table() -> None:
    assert config_variables() - documented_variables() == set()


def test_the_settings_table_documents_nothing_config_does_not_read() -> None:
    assert documented_variables() - config_variables() == set()


def documented_commands() -> list[str]:
    block = README.split("## Commands", 1)[1].split("```", 2)[1]
    return [line.split("#")[0].strip() for line in block.splitlines() if line.startswith("nightwatch ")]


def concrete(line: str) -> list[str]:
    """A documented form with its placeholders filled in and optional parts taken."""
    line = re.sub(r"\[(--[a-z]+) ([^\]|]+)\|[^\]]+\]", r"\1 \2", line)  # [--llm offline|anthropic]: the first
    line = re.sub(r"\[([^\]]+)\]", r"\1", line)
    words = shlex.split(line)[1:]
    fills = {
        "TOPIC": "topic",
        "P": "demo",
        "T": "login",
        "PERSONA": "maya",
        "OTHER": "dev",
        "NAME": "maya",
        "ROLE": "QA",
        "OLD": "a",
        "NEW": "b",
        "ID": "abc12345",
        "LESSON": "x",
        "QUERY": "q",
        "N": "5",
        "C": "events",
        "PATH": "docs/ARCHITECTURE.md",
        "TEXT": "Deploys freeze on Fridays.",
        "PIN_ID": "3",
    }
    return [fills.get(word, word) for word in words]


@pytest.mark.parametrize("line", documented_commands())
def test_every_documented_command_parses(line: str) -> None:
    args = build_parser().parse_args(concrete(line))
    assert callable(args.handler)


def test_the_documented_commands_cover_the_cli() -> None:
    assert len(documented_commands()) >= 14


def test_the_readme_states_the_ranges_the_code_enforces() -> None:
    commands = README.split("## Commands", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| (.+?) \| (.+?) \|$", commands, flags=re.MULTILINE))
    assert rows["NAME, PERSONA, OLD, NEW"].startswith(f"1-{PERSONA_NAME_MAX} letters")
    assert rows["`--personas`"].startswith(f"1-{PERSONAS_MAX} such names")
    assert rows["`--project` P"].startswith(f"1-{PROJECT_NAME_MAX} letters")
    assert rows["TOPIC, `--topic` T"] == f"1-{TOPIC_MAX:,} characters"
    assert rows["LESSON"].startswith(f"1-{LESSON_MAX} characters")
    assert rows["QUERY"] == f"1-{QUERY_MAX} characters"
    assert rows["`--role` ROLE"] == f"1-{ROLE_MAX} characters"
    assert rows["`--text` TEXT"] == f"1-{PIN_TEXT_MAX:,} characters"
    assert rows["PATH"].endswith(f"(at most {PIN_PATH_MAX:,} characters)")
    assert rows["URL"].endswith(f"(at most {PIN_URL_MAX:,} characters)")
    assert f"(N: 1-{RECENT_MAX})" in commands
    assert f"N: 1-{SEARCH_MAX}, default 10" in commands


def test_the_readme_is_a_short_front_door() -> None:
    assert len(README.splitlines()) <= 250


def test_the_readme_runs_the_test_command_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").split("verbatim:\n", 1)[1].splitlines()[0]
    assert f"```sh\n{ci}\n```" in README


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces made hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)  # no headings in code
    return {anchor(heading) for heading in re.findall(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)}


def relative_links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [link for link in re.findall(r"\]\(([^)\s]+)\)", text) if not re.match(r"[a-z]+:", link)]


def test_the_docs_are_where_the_readme_says() -> None:
    names = {path.name for path in documents()}
    assert {"architecture.md", "memory.md", "operations.md", "benchmarks.md", "development.md"} <= names
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


@pytest.mark.parametrize("path", documents(), ids=lambda path: path.name)
def test_every_link_between_the_documents_resolves(path: Path) -> None:
    for link in relative_links(path):
        target, _, section = link.partition("#")
        file = (path.parent / target).resolve() if target else path
        assert file.exists(), f"{path.name} links to {target}, which does not exist"
        if section:
            assert section in anchors(file), f"{path.name} links to #{section}, which {file.name} has no heading for"
