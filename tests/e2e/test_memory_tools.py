"""Memory tools end to end through `nightwatch deliberate`: the offline model recalls on a topic about the past, and
Claude (the real SDK against the fake Anthropic server) recalls, remembers and answers in one turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import clean_env, run
from tests.fake_anthropic import FakeAnthropic, Planned, default_responder, request_text, tool_results, tool_use

LOOKING_BACK = "What did we decide last time about rate limiting on the login endpoint?"
HELD = "Rate limiting on the login endpoint: 10 attempts a minute per IP, enforced in nginx."
NEW = "The search API rate limit was rolled back in March because it blocked the mobile app."


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    return home


def remember_for_dev(capsys: pytest.CaptureFixture[str]) -> str:
    code, out, err = run(capsys, "memory", "add", "dev", HELD, "--project", "demo")
    assert code == 0, err
    code, out, _ = run(capsys, "memory", "show", "dev", "--project", "demo")
    return next(line.split()[0].strip("[]") for line in out.splitlines() if "10 attempts" in line)


def turns_of(document: dict[str, Any], persona: str) -> list[dict[str, Any]]:
    return [turn for turn in document["turns"] if turn["persona"] == persona]


def test_the_offline_model_recalls_when_the_topic_asks_about_the_past(capsys: pytest.CaptureFixture[str]) -> None:
    held = remember_for_dev(capsys)

    code, out, err = run(capsys, "deliberate", LOOKING_BACK, "--project", "demo", "--personas", "dev", "--json")

    assert code == 0, err
    first = turns_of(json.loads(out), "Dev")[0]
    assert first["tool_calls"] == [
        {
            "name": "memory_recall",
            "input": {"query": "rate limiting on the login endpoint"},
            "result": f"1 lesson: {held}",
            "error": False,
        }
    ]
    assert "From memory: Rate limiting on the login endpoint: 10 attempts a minute per IP" in first["text"]


def test_the_terminal_shows_the_recall_before_the_turn(capsys: pytest.CaptureFixture[str]) -> None:
    remember_for_dev(capsys)

    code, out, err = run(capsys, "deliberate", LOOKING_BACK, "--project", "demo", "--personas", "dev")

    assert code == 0, err
    recalled = out.index("🔎 Dev recalled: rate limiting on the login endpoint (1 lesson)")
    assert recalled < out.index("Dev (Implementer)\n")
    assert "🔎 Carlos recalled: rate limiting on the login endpoint (0 lessons)" in out


def test_a_topic_about_now_calls_no_tool(capsys: pytest.CaptureFixture[str]) -> None:
    remember_for_dev(capsys)

    code, out, err = run(capsys, "deliberate", "Should we add rate limiting to the login endpoint?", "--json")

    assert code == 0, err
    assert all(turn["tool_calls"] == [] for turn in json.loads(out)["turns"])


def dev_looks_back(body: dict[str, Any]) -> str | Planned:
    """Claude as Dev: recall, then remember, then answer from both; everything else as the default fake answers."""
    system, _ = request_text(body)
    if not body.get("tools") or "# You are Dev" not in system:
        return default_responder(body)
    results = tool_results(body)
    if not results and not any(m["role"] == "assistant" for m in body["messages"]):
        return tool_use(("memory_recall", {"query": "rate limiting"}), text="Let me check my notes.")
    if results and "from your memory of demo" in str(results[0]["content"]):
        return tool_use(("remember", {"lesson": NEW, "category": "events"}))
    return "From memory: 10 a minute on login. Leave the search API alone; it was rolled back once."


def test_claude_recalls_remembers_and_answers_through_the_real_sdk(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    held = remember_for_dev(capsys)
    with FakeAnthropic(dev_looks_back) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        code, out, err = run(capsys, "deliberate", LOOKING_BACK, "--project", "demo", "--personas", "dev", "--json")

    assert code == 0, err
    document = json.loads(out)
    dev = turns_of(document, "Dev")[0]
    assert dev["text"] == "From memory: 10 a minute on login. Leave the search API alone; it was rolled back once."
    assert [(call["name"], call["error"]) for call in dev["tool_calls"]] == [
        ("memory_recall", False),
        ("remember", False),
    ]
    assert dev["tool_calls"][0]["result"] == f"1 lesson: {held}"
    new_id = dev["tool_calls"][1]["result"].removeprefix("remembered ")
    assert {"persona": "Dev", "id": new_id, "text": NEW, "said": "created"} in document["lessons"]
    main = (home / "agents" / "dev" / "memories" / "demo" / "main.md").read_text(encoding="utf-8")
    assert f"· turn\n- {NEW}" in main
    sent = [request.body for request in fake.requests if request.body.get("tools")]
    assert sent, "turns offer the tools"
    assert all(body["tools"][-1].get("cache_control") == {"type": "ephemeral"} for body in sent)
