"""Sharing one lesson or one pin end to end: `share --lesson|--pin`, `shares`, `unshare`, and the prompt a real
deliberation sends (the fake Anthropic server records it); the item goes once its lesson or pin goes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env, run
from tests.fake_anthropic import FakeAnthropic, default_responder, request_text

COOKIE = "The session cookie lacks the SameSite attribute on the admin console."
TOKENS = "Admin API tokens expire after one hour and are never refreshed silently."
TOPIC = "Is the admin console safe to expose to contractors?"
THREAT = "The admin API is reachable only from the VPN."


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    monkeypatch.setenv("NIGHTWATCH_LLM", "offline")
    return home


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(default_responder) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("NIGHTWATCH_LLM", "anthropic")
        yield fake


def remember(capsys: pytest.CaptureFixture[str], text: str) -> str:
    code, out, err = run(capsys, "memory", "add", "maya", text, "--project", "night-watch")
    assert code == 0, err
    found = re.match(r"Remembered ([0-9a-f]{8}) ", out)
    assert found is not None, out
    return found.group(1)


def pin(capsys: pytest.CaptureFixture[str], path: Path, text: str) -> str:
    path.write_text(text + "\n", encoding="utf-8")
    code, out, err = run(capsys, "pin", "add", "maya", str(path), "--project", "night-watch")
    assert code == 0, err
    found = re.search(r" as #(\d+) ", out)
    assert found is not None, out
    return found.group(1)


def dev_is_told(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The shared items `context Dev --full` lists."""
    code, out, err = run(capsys, "context", "dev", "--project", "night-watch", "--topic", TOPIC, "--full")
    assert code == 0, err
    listed = out.split("Shared by teammates", 1)[1].splitlines()[1:]
    return [line.strip() for line in listed if line.startswith("  ") and line.strip() != "(none)"]


def test_one_lesson_shared_reaches_devs_prompt_alone_and_goes_when_it_is_forgotten(
    capsys: pytest.CaptureFixture[str], model: FakeAnthropic
) -> None:
    cookie, _ = remember(capsys, COOKIE), remember(capsys, TOKENS)
    code, out, _ = run(capsys, "share", "maya", "--lesson", cookie, "--with", "Dev", "--project", "night-watch")
    assert (code, out) == (0, f"Maya now shares lesson {cookie} on project night-watch with Dev: {COOKIE}\n")
    assert run(capsys, "shares")[1].splitlines() == [
        "project      from  to   what",
        f"night-watch  Maya  Dev  lesson {cookie}: {COOKIE}",
    ]
    code, _, err = run(capsys, "deliberate", TOPIC, "--project", "night-watch", "--personas", "dev")
    assert code == 0, err
    systems = [request_text(recorded.body)[0] for recorded in model.requests]
    [dev] = [system for system in systems if system.startswith("# You are Dev\n")][:1]
    shared = dev.split("<shared>", 1)[1].split("</shared>", 1)[0]
    assert f"- from Maya (Security Reviewer): {COOKIE}" in shared
    assert TOKENS not in dev  # her other lesson stays hers

    assert run(capsys, "memory", "forget", "maya", cookie, "--project", "night-watch")[0] == 0
    assert dev_is_told(capsys) == []
    assert run(capsys, "shares")[1].splitlines()[1] == f"night-watch  Maya  Dev  lesson {cookie} (gone: forgotten)"
    code, out, _ = run(capsys, "unshare", "maya", "--lesson", cookie, "--with", "dev", "--project", "night-watch")
    assert (code, out) == (0, f"Maya no longer shares lesson {cookie} on project night-watch with Dev.\n")
    assert run(capsys, "shares")[1].startswith("Nothing is shared.")


def test_one_pin_shared_reaches_dev_and_a_later_pin_does_not(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    threat = pin(capsys, home / "threat-model.md", THREAT)
    code, out, _ = run(capsys, "share", "maya", "--pin", threat, "--with", "dev")
    assert (code, out) == (
        0,
        f"Maya now shares pin #{threat} on project night-watch with Dev: file {home}/threat-model.md\n",
    )
    [told] = dev_is_told(capsys)
    assert told.startswith(f"from Maya (pin): [pin {threat} · file {home}/threat-model.md] > ")  # clipped to width
    assert run(capsys, "pin", "remove", threat)[0] == 0
    assert dev_is_told(capsys) == []
    payroll = pin(capsys, home / "payroll.md", "Payroll runs on the 25th.")
    assert payroll != threat  # pin numbers are never reused (migration 0012)
    assert dev_is_told(capsys) == []
    assert run(capsys, "shares")[1].splitlines()[1] == f"night-watch  Maya  Dev  pin #{threat} (gone: unpinned)"
    code, out, _ = run(capsys, "unshare", "maya", "--pin", threat, "--with", "dev")
    assert (code, out) == (0, f"Maya no longer shares pin #{threat} on project night-watch with Dev.\n")


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (
            ["share", "maya", "--lesson", "deadbeef", "--with", "dev", "--project", "night-watch"],
            1,
            "Maya has no lesson deadbeef on project night-watch; `nightwatch memory show maya --project night-watch`",
        ),
        (["share", "maya", "--pin", "42", "--with", "dev"], 1, "There is no pin #42; `nightwatch pin list`"),
        (
            ["share", "maya", "--lesson", "{cookie}", "--with", "Maya", "--project", "night-watch"],
            2,
            "Maya cannot share with itself",
        ),
        (
            ["share", "nobody", "--lesson", "{cookie}", "--with", "dev", "--project", "night-watch"],
            1,
            "No persona is called 'nobody'",
        ),
        (
            ["share", "maya", "--lesson", "{cookie}", "--with", "ghost", "--project", "night-watch"],
            1,
            "No persona is called 'ghost'",
        ),
        (["unshare", "maya", "--pin", "42", "--with", "dev"], 1, "Maya does not share pin #42 with Dev"),
        (["share", "maya", "--lesson", "nope", "--with", "dev"], 2, "A lesson id is 8 characters"),
        (["share", "maya", "--pin", "x", "--with", "dev"], 2, "A pin's id"),
    ],
)
def test_bad_items_say_what_went_wrong_in_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], code: int, message: str
) -> None:
    cookie = remember(capsys, COOKIE)
    got, out, err = run(capsys, *[arg.format(cookie=cookie) for arg in argv])
    assert (got, out) == (code, "")
    assert err.startswith(f"error: {message}")
    assert err.count("\n") == 1
    assert run(capsys, "shares")[1].startswith("Nothing is shared.")


def test_one_item_and_what_are_one_choice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        run(capsys, "share", "maya", "--with", "dev", "--lesson", "0401dc1d", "--what", "pins")
    assert stopped.value.code == 2
    assert "argument --what: not allowed with argument --lesson" in capsys.readouterr().err
