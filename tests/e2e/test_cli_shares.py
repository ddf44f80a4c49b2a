"""`nightwatch share`, `unshare` and `shares` end to end, and shared knowledge in the prompts a real deliberation sends.

The deliberations talk to the fake Anthropic server, which records every system prompt; memory is in files or in the
database (SQLite), the two stores a persona's memory can live in.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import clean_env, run
from tests.fake_anthropic import FakeAnthropic, default_responder, request_text

CVE = "Lodash 4.17.20 has a prototype pollution CVE; pin 4.17.21 in every service."
TOPIC = "Which lodash version should the build pin?"
MAYA_FILE = Path("agents") / "maya" / "memories" / "night-watch" / "main.md"


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    monkeypatch.setenv("NIGHTWATCH_LLM", "offline")
    return home


def maya_learns_the_cve(body: dict[str, Any]) -> str:
    """The fake model as every persona: Maya's reflection records the CVE, other reflections record nothing."""
    system, _ = request_text(body)
    answer = default_responder(body)
    if answer.startswith("- Fake lesson"):  # a reflection
        return f"- {CVE}" if system.startswith("You are Maya,") else "NONE"
    return answer


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(maya_learns_the_cve) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("NIGHTWATCH_LLM", "anthropic")
        yield fake


def turn_prompts(fake: FakeAnthropic, name: str, since: int = 0) -> list[str]:
    """The system prompts of `name`'s turns (not its reflections) sent since request number `since`."""
    systems = [request_text(recorded.body)[0] for recorded in fake.requests[since:]]
    return [system for system in systems if system.startswith(f"# You are {name}\n")]


def deliberate(capsys: pytest.CaptureFixture[str], *personas: str) -> None:
    code, _, err = run(capsys, "deliberate", TOPIC, "--project", "night-watch", "--personas", ",".join(personas))
    assert code == 0, err


def mayas_memory(home: Path) -> bytes:
    """Maya's memory of night-watch as stored: main.md's bytes, or the database row's text and version."""
    if (home / MAYA_FILE).exists():
        return (home / MAYA_FILE).read_bytes()
    with sqlite3.connect(home / "nightwatch.db") as conn:
        row = conn.execute(
            "SELECT text, version FROM memory_documents WHERE owner = 'maya' AND project = 'night-watch'"
        ).fetchone()
    return f"{row[1]}\n{row[0]}".encode()


# --- the commands ---------------------------------------------------------------------------------------------------


def test_share_list_and_unshare(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "share", "maya", "--with", "Dev", "--project", "Night Watch")[1] == (
        "Maya now shares lessons on project night-watch with Dev.\n"
    )
    assert run(capsys, "share", "Maya", "--with", "dev", "--project", "night-watch", "--what", "ALL")[1] == (
        "Maya now shares lessons and pinned documents on project night-watch with Dev (before: lessons).\n"
    )
    assert run(capsys, "share", "Priya", "--with", "all")[0] == 0
    code, out, _ = run(capsys, "shares")
    assert code == 0
    assert out.splitlines() == [
        "project      from   to   what",
        "night-watch  Maya   Dev  lessons and pinned documents",
        "default      Priya  all  lessons",
    ]
    assert run(capsys, "shares", "dev", "--project", "default")[1].splitlines()[1:] == ["default  Priya  all  lessons"]
    assert run(capsys, "shares", "Carlos", "--project", "night-watch")[1] == (
        "Nothing is shared by or with Carlos on project night-watch. "
        "Share: nightwatch share PERSONA --with OTHER --project P\n"
    )
    assert run(capsys, "unshare", "Maya", "--with", "Dev", "--project", "night-watch")[1] == (
        "Maya no longer shares lessons and pinned documents on project night-watch with Dev.\n"
    )
    code, _, err = run(capsys, "unshare", "Maya", "--with", "Dev", "--project", "night-watch")
    assert code == 1
    assert err == (
        "error: Maya shares nothing on project night-watch with Dev, so there is nothing to unshare. "
        "List the shares to see what is shared.\n"
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["share", "maya", "--with", "dev", "--what", "secrets"], "What to share is one of lessons, pins or all"),
        (["share", "maya", "--with", "d/ev"], "The persona name 'd/ev' has characters that are not allowed"),
        (["share", "ma\x00ya", "--with", "dev"], "The persona name"),
        (["share", "maya", "--with", "dev", "--project", "../etc"], "The project name '../etc' is not usable"),
        (["unshare", "maya", "--with", ""], "Say whom to share with"),
        (["shares", "--project", "#"], "The project name '#'"),
    ],
)
def test_bad_arguments_exit_2_before_the_database_is_opened(
    capsys: pytest.CaptureFixture[str], home: Path, argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith(f"error: {message}")
    assert not (home / "nightwatch.db").exists()


def test_sharing_with_oneself_or_with_nobody_known_says_what_to_do(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "share", "Maya", "--with", "maya")
    assert code == 2
    assert err == (
        "error: Maya cannot share with itself: a persona always reads its own memory. Name another persona, or all.\n"
    )
    code, _, err = run(capsys, "share", "Maya", "--with", "Nobody")
    assert code == 1
    assert err.startswith("error: No persona is called 'Nobody'. Known personas: Carlos, Dev, Maya, Priya.")


def test_renames_keep_shares_and_deletes_remove_them_with_a_word(capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "share", "Maya", "--with", "Dev")
    run(capsys, "share", "Priya", "--with", "Maya")
    run(capsys, "share", "Priya", "--with", "Dev")
    assert run(capsys, "personas", "rename", "maya", "Maya Sec")[0] == 0
    assert [line.split()[1:3] for line in run(capsys, "shares")[1].splitlines()[1:]] == [
        ["Maya", "Sec"],
        ["Priya", "Maya"],
        ["Priya", "Dev"],
    ]
    code, out, _ = run(capsys, "personas", "delete", "Maya Sec", "--yes")
    assert code == 0
    assert out.endswith("; the 2 shares it gave or received were removed.\n")
    assert run(capsys, "shares")[1].splitlines()[1:] == ["default  Priya  Dev  lessons"]


# --- in the prompts -------------------------------------------------------------------------------------------------


@pytest.fixture(params=["files", "database"])
def store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("NIGHTWATCH_MEMORY_STORE", request.param)
    return str(request.param)


def test_what_maya_records_reaches_devs_next_turn_and_leaves_with_an_unshare(
    capsys: pytest.CaptureFixture[str], home: Path, model: FakeAnthropic, store: str
) -> None:
    assert run(capsys, "share", "Maya", "--with", "Dev", "--project", "night-watch")[0] == 0
    deliberate(capsys, "maya")
    assert (home / MAYA_FILE).exists() is (store == "files")
    recorded = mayas_memory(home)
    assert CVE.encode() in recorded

    asked = len(model.requests)
    deliberate(capsys, "dev")
    [prompt] = turn_prompts(model, "Dev", asked)
    assert f"<shared>\n- from Maya (Security Reviewer): {CVE}\n</shared>" in prompt
    assert all("<shared>" not in text for text in turn_prompts(model, "Carlos", asked))
    assert mayas_memory(home) == recorded  # Dev's turn never touched it

    code, out, _ = run(capsys, "context", "Dev", "--project", "night-watch", "--topic", TOPIC)
    assert code == 0
    assert "shared by teammates" in out
    assert "1 of 1 shared lessons and pinned documents injected, from Maya" in out

    run(capsys, "unshare", "Maya", "--with", "Dev", "--project", "night-watch")
    asked = len(model.requests)
    deliberate(capsys, "dev")
    [prompt] = turn_prompts(model, "Dev", asked)
    assert "<shared>" not in prompt
    assert CVE not in prompt


def test_after_a_rename_the_share_holds_and_after_a_delete_it_is_gone(
    capsys: pytest.CaptureFixture[str], model: FakeAnthropic, store: str
) -> None:
    run(capsys, "share", "Maya", "--with", "all", "--project", "night-watch")
    deliberate(capsys, "maya")
    run(capsys, "personas", "rename", "Maya", "Maya Sec")
    asked = len(model.requests)
    deliberate(capsys, "dev")
    [prompt] = turn_prompts(model, "Dev", asked)
    assert f"- from Maya Sec (Security Reviewer): {CVE}" in prompt
    code, out, _ = run(capsys, "personas", "delete", "Maya Sec", "--yes")
    assert code == 0
    assert out.endswith("; the one share it gave or received was removed.\n")
    asked = len(model.requests)
    deliberate(capsys, "dev")
    [prompt] = turn_prompts(model, "Dev", asked)
    assert "<shared>" not in prompt


def test_a_file_pinned_for_maya_reaches_devs_prompt_when_she_shares_her_pins(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, model: FakeAnthropic
) -> None:
    doc = tmp_path / "threat-model.md"
    doc.write_text("# Threat model\nThe admin API is reachable only from the VPN.\n")
    assert run(capsys, "pin", "add", "Maya", str(doc), "--project", "night-watch")[0] == 0
    assert run(capsys, "share", "Maya", "--with", "Dev", "--project", "night-watch")[0] == 0  # lessons only
    asked = len(model.requests)
    deliberate(capsys, "dev")
    [prompt] = turn_prompts(model, "Dev", asked)
    assert "reachable only from the VPN" not in prompt

    assert run(capsys, "share", "Maya", "--with", "Dev", "--project", "night-watch", "--what", "pins")[0] == 0
    asked = len(model.requests)
    deliberate(capsys, "dev")
    [prompt] = turn_prompts(model, "Dev", asked)
    assert (
        "<shared>\n"
        f"- from Maya (Security Reviewer), pinned document: [pin 1 · file {doc}]\n"
        "  > \\# Threat model\n"
        "  > The admin API is reachable only from the VPN.\n"
        "</shared>"
    ) in prompt
    assert "<pinned>" not in prompt  # Maya's pin, shared with Dev: not one of Dev's own
    code, out, _ = run(capsys, "context", "Dev", "--project", "night-watch", "--topic", TOPIC)
    assert code == 0
    assert "1 of 1 shared lessons and pinned documents injected, from Maya" in out

    doc.write_text("# Threat model\nThe admin API moved behind the bastion host.\n")  # Dev's next turn sees the edit
    asked = len(model.requests)
    deliberate(capsys, "dev")
    [prompt] = turn_prompts(model, "Dev", asked)
    assert "  > The admin API moved behind the bastion host.\n</shared>" in prompt

    run(capsys, "unshare", "Maya", "--with", "Dev", "--project", "night-watch")
    asked = len(model.requests)
    deliberate(capsys, "dev")
    [prompt] = turn_prompts(model, "Dev", asked)
    assert "<shared>" not in prompt
    assert "bastion host" not in prompt
