"""Personas made from the CLI are whole: a soul from the role (or a file), and they speak offline when it matters.

Real SQLite, the real offline model; a soul file's problems end in one `error:` line, exit 2, nothing changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env, run
from tests.fake_anthropic import FakeAnthropic


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    monkeypatch.setenv("NIGHTWATCH_LLM", "offline")
    return home


def turns(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, dict[str, object]]:
    code, out, err = run(capsys, "deliberate", *argv, "--json")
    assert code == 0, err
    return {turn["persona"]: turn for turn in json.loads(out)["turns"]}


def test_a_persona_made_from_a_role_speaks_offline_when_named_or_when_the_topic_is_in_its_role(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(capsys, "personas", "create", "Rita", "--role", "Release Manager")[0] == 0
    shown = run(capsys, "personas", "show", "rita")[1]
    assert "who_i_am: Rita is the team's Release Manager." in shown

    named = turns(capsys, "Should we rename the payments table?", "--personas", "rita")
    assert named["Rita"]["skipped"] is False
    assert str(named["Rita"]["text"]).startswith("[offline] From the release manager side")

    in_role = turns(capsys, "Should we cut the release on Friday?", "--personas", "rita")
    assert in_role["Rita"]["skipped"] is False
    assert "cutting the release on Friday" in str(in_role["Rita"]["text"])

    chosen = turns(capsys, "Who signs off the release notes for the next release train?")
    assert "Rita" in chosen, "the topic is in her role: she is on the panel without being named"
    assert chosen["Rita"]["skipped"] is False

    addressed = turns(capsys, "Rita, should the payments table move to its own schema?")
    assert addressed["Rita"]["skipped"] is False


def test_a_soul_from_a_file_on_create_and_on_edit_reaches_the_persona_s_prompt(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    prose = tmp_path / "rita.md"
    prose.write_text("Rita keeps releases boring: a train every Tuesday, no heroics.\n", encoding="utf-8")
    code, out, err = run(capsys, "personas", "create", "Rita", "--role", "Release Manager", "--soul", str(prose))
    assert (code, err) == (0, "")
    assert (
        "who_i_am: 'Rita keeps releases boring: a train every Tuesday, no heroics.'"
        in run(capsys, "personas", "show", "rita")[1]
    )

    section = tmp_path / "rita.yml"
    section.write_text(
        "who_i_am: Rita owns the release train. ✓\nexpertise:\n  - changelogs\n  - feature flags\n", encoding="utf-8"
    )
    code, out, _ = run(capsys, "personas", "edit", "rita", "--soul", str(section))
    assert (code, out.strip()) == (0, "Updated Rita: soul.")

    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("NIGHTWATCH_LLM", "anthropic")
        assert run(capsys, "deliberate", "Ship the changelog?", "--personas", "rita")[0] == 0
    systems = ["\n\n".join(block["text"] for block in r.body["system"]) for r in fake.requests]
    rita = [system for system in systems if system.startswith("# You are Rita")]
    assert rita
    assert "Rita owns the release train. ✓" in rita[0]
    assert "changelogs, feature flags" in rita[0]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.md", None, "could not be read (No such file or directory)"),
        ("binary.md", b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe", "is not UTF-8 text (a binary file?)"),
        ("nul.txt", b"Rita\x00keeps", "control character"),
        ("big.md", b"x" * (64 * 1024 + 1), "is over 64 KB"),
        ("empty.md", b" \n", "is empty"),
        ("bad.yml", b"who_i_am: [unclosed\n", "is not valid YAML"),
        ("wrong.yml", b"tone: calm\n", "unknown fields ['tone']"),
    ],
)
def test_a_soul_file_that_cannot_be_a_soul_is_one_clear_error_and_changes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    assert run(capsys, "personas", "create", "Rita", "--role", "Release Manager")[0] == 0
    before = run(capsys, "personas", "show", "rita")[1]
    for argv in (["create", "Vera", "--role", "Auditor"], ["edit", "rita"]):
        code, out, err = run(capsys, "personas", *argv, "--soul", str(path))
        assert (code, out) == (2, "")
        assert err.startswith(f"error: The soul file {path}")
        assert message in err
        assert len(err.strip().splitlines()) == 1
    assert run(capsys, "personas", "show", "rita")[1] == before
    assert "Vera" not in run(capsys, "personas", "list")[1]


def test_edit_with_nothing_to_change_says_what_to_give(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "personas", "edit", "maya")
    assert code == 2
    expected = "error: Say what to change: `nightwatch personas edit maya --soul FILE` (or --role, --avatar)."
    assert err.strip() == expected
