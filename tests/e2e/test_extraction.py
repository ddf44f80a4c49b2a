"""A long deliberation through the real anthropic SDK against the fake server: what its summaries drop is learned
once, in the structured form, filed with category and overview, and reported like a reflection's lessons."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest

from nightwatch.domain.memory.format import parse
from tests.e2e.cli import clean_env, run
from tests.fake_anthropic import FakeAnthropic, default_responder, request_text

TOPIC = "Should the billing worker move to the new queue before the March release?"
CHECKS = (
    "retries need idempotency keys or invoices double.",
    "dead letters must page the on-call engineer.",
    "load test it at twice the month-end peak.",
    "the consumer lag alert fires too late today.",
    "schema changes to the payload break old workers.",
    "we never drain the old queue during office hours.",
    "tax rounding lives in one function; keep it there.",
    "the staging broker has half the partitions of production.",
    "refund events arrive out of order after a failover.",
    "the worker leaks file handles when Stripe times out.",
    "audit logging must capture every manual replay.",
    "our canary only covers euro invoices, not yen.",
    "feature flag owners are unclear for the cutover.",
    "the runbook still names the retired cluster.",
    "memory climbs when batches exceed five thousand rows.",
    "vendor webhooks retry for three days, so dedupe longer.",
    "the migration script has no dry-run mode yet.",
    "billing emails go out twice if the worker restarts.",
    "PCI scope grows if card data touches the new broker.",
    "rollback means replaying a day of events by hand.",
)


class LongThread:
    """The fake model as a team that keeps finding one more thing: CHANGES until the final round, a new reply per
    turn, and for an extraction one lesson naming the first message it was shown."""

    def __init__(self) -> None:
        self.replies = itertools.count(1)
        self.extractions: list[str] = []  # the <messages> block of each extraction request

    def __call__(self, body: dict[str, Any]) -> str:
        system, instruction = request_text(body)
        text = f"{system}\n{instruction}"
        if "<messages>" in text and "0 to 3 lessons" in text:
            block = text[text.index("<messages>") : text.index("</messages>")]
            self.extractions.append(block)
            first = block.splitlines()[1].removeprefix("- ")
            return (
                f"- [events] The thread settled one more billing step before its summary: {first[:80]}\n"
                "  > Taken from the older messages as they were folded into the summary."
            )
        if '"decision"' in text.lower():
            final = "This is the final round." in text
            return json.dumps({"decision": "APPROVE" if final else "CHANGES", "summary": "One more pass.",
                               "reasons": ["Open items."], "action_items": ["Dev - check the queue"]})  # fmt: skip
        if "Write 1 to 3 lessons" in text or "summar" in instruction.lower():
            return default_responder(body)
        number = next(self.replies)
        return f"Point {number}: {CHECKS[(number - 1) % len(CHECKS)]}"


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    return home


def test_a_long_deliberation_learns_once_from_what_each_summary_drops(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, home: Path
) -> None:
    model = LongThread()
    with FakeAnthropic(model) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("NIGHTWATCH_MAX_ROUNDS", "5")
        monkeypatch.setenv("NIGHTWATCH_MAX_REPLIES", "40")
        argv = ("deliberate", TOPIC, "--project", "billing", "--personas", "maya,priya,dev", "--json")
        code, out, err = run(capsys, *argv)
    assert code == 0, err
    result = json.loads(out)
    assert len(result["turns"]) == 20  # 5 rounds of 4: the window (12 messages) slid several times

    # Each summarised stretch was shown once (to each persona who wrote in it), and no message twice.
    stretches = list(dict.fromkeys(model.extractions))
    assert len(stretches) >= 2
    shown = [line for block in stretches for line in block.splitlines()[1:] if line.startswith("- ")]
    assert len(shown) == len(set(shown))
    assert [int(n) for n in re.findall(r"Point (\d+):", "\n".join(shown))] == list(range(1, len(shown) + 1))

    extracted = [item for item in result["lessons"] if "settled one more billing step" in item["text"]]
    assert extracted
    persona = extracted[0]["persona"].lower()
    doc = parse((home / "agents" / persona / "memories" / "billing" / "main.md").read_text())
    [lesson] = [lesson for lesson in doc.live() if lesson.id == extracted[0]["id"]]
    assert (lesson.category, lesson.overview) == (
        "events",
        "Taken from the older messages as they were folded into the summary.",
    )
    reflected = [lesson for lesson in doc.live() if lesson.text.startswith("Fake lesson")]
    assert {lesson.category for lesson in reflected} == {"patterns", "cases"}  # reflection, structured too
    assert all(lesson.overview and lesson.overview.startswith("Fake overview") for lesson in reflected)
