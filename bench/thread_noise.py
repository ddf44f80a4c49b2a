"""Thread noise: how much one deliberation posts in its Slack thread.

    python -m bench.thread_noise [--runs 2]

The real app runs as `nightwatch run` runs it (`run_socket_mode`, the real SocketModeHandler and WebClient) against
tests/fake_slack.py, on SQLite and memory files in a temporary NIGHTWATCH_HOME, first with the offline model, then
with the Anthropic adapter against tests/fake_anthropic.py answering every turn at full length (as many words as
its max_tokens allows). A mention names 2, 4 or 6 personas (the engine takes at most 3 plus the lead, so 6 named
speak as 4). For each it prints messages per deliberation (everything the app posted in the thread, read after the
deliberation: lessons messages updated in place count once), turns posted, words per turn (persona posts, the
verdict included) and characters per deliberation. Target: messages per deliberation at most turns + 2.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nightwatch.domain.personas import PersonaDraft
from tests import payloads
from tests.e2e.slack_live import LiveApp, live_app
from tests.fake_anthropic import FakeAnthropic, default_responder
from tests.fake_slack import FakeSlack

NAMES = ("Maya", "Carlos", "Priya", "Dev", "Nora", "Omar")  # the last two are created for the bench
EXTRA = (("Nora", "Site reliability engineer"), ("Omar", "Product manager"))
_VOCABULARY = (
    "rollout flag tests expiry logs caller limit gateway cache secrets docs owner token session retry budget alert "
    "dashboard latency quota burst window replica region schema migration index lock queue worker deadline review "
    "risk audit metric threshold fallback canary rollback backoff header cookie password login endpoint client"
).split()


# Each word of a filler answer is a vocabulary word with one of these endings: 500 word forms, so two answers share
# few of them. With the 50 bare words every answer used nearly all of them, and the engine rightly dropped every turn
# after the first as a near-duplicate of it (replies.near_duplicate: word sets overlapping by 80% or more).
_ENDINGS = ("", "s", "ed", "ing", "er", "ly", "less", "ful", "ness", "wise")


def full_length(body: dict[str, Any]) -> str:
    """The fake Anthropic server's answer, with every persona turn as long as its max_tokens allows."""
    text = default_responder(body)
    if text != "Fake answer from the fake Anthropic server.":
        return text
    words = int(int(body.get("max_tokens") or 400) * 0.75)
    rng = random.Random(str(body.get("system"))[:4000] + str(body.get("messages"))[-200:])
    sentences, count = [], 0
    while count < words:
        picked = (rng.choice(_VOCABULARY) + rng.choice(_ENDINGS) for _ in range(rng.randint(8, 16)))
        sentence = " ".join(picked).capitalize() + "."
        sentences.append(sentence)
        count += len(sentence.split())
    return " ".join(sentences)


@dataclass(frozen=True)
class Figures:
    named: int
    messages: float
    turns: float
    words_per_turn: float
    chars: float

    def line(self) -> str:
        ok = "ok" if self.messages <= self.turns + 2 else "OVER"
        return (
            f"{self.named} personas named: {self.messages:.1f} messages, {self.turns:.1f} turns, "
            f"{self.words_per_turn:.0f} words/turn, {self.chars:.0f} chars  [{ok}: target <= turns + 2]"
        )


def _app_posts(fake: FakeSlack, ts: str) -> list[dict[str, Any]]:
    return [m for m in fake.messages("C1", ts) if m.get("ts") != ts and not m.get("user", "").startswith("U1")]


def deliberate(live: LiveApp, named: int, number: int) -> tuple[int, int, list[int], int]:
    names = ", ".join(NAMES[:named])
    text = f"<@UBOT> {names}: topic {number}, should we put the login endpoint behind a rate limiter?"
    stored = live.fake.workspace.store_message("C1", {"type": "message", "user": "U1", "text": text})
    before = len(live.stack.log.recent(200))
    live.fake.send_event(payloads.app_mention(text, ts=stored["ts"]))
    live.fake.wait_for(
        lambda: len(live.stack.log.recent(200)) > before and live.stack.slack.pool.running == 0, timeout=120
    )
    posts = _app_posts(live.fake, stored["ts"])
    persona_posts = [str(m.get("text") or "") for m in posts if m.get("username")]
    words = [len(re.findall(r"\S+", post)) for post in persona_posts]
    chars = sum(len(str(m.get("text") or "")) for m in posts)
    return len(posts), len(persona_posts) - 1, words, chars


def measure(home: Path, env: dict[str, str], runs: int) -> list[Figures]:
    out = []
    with FakeSlack() as fake, live_app(home, fake, env=env) as live:
        for name, role in EXTRA:
            live.stack.personas.create(PersonaDraft(name=name, role=role))
        number = 0
        for named in (2, 4, 6):
            rows = []
            for _ in range(runs):
                number += 1
                rows.append(deliberate(live, named, number))
            out.append(
                Figures(
                    named,
                    statistics.mean(r[0] for r in rows),
                    statistics.mean(r[1] for r in rows),
                    statistics.mean(w for r in rows for w in r[2]) if any(r[2] for r in rows) else 0.0,
                    statistics.mean(r[3] for r in rows),
                )
            )
        live.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.thread_noise", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2, help="deliberations per panel size (default 2)")
    args = parser.parse_args(argv)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        print("offline model:")
        for figures in measure(Path(tmp) / "offline", {}, args.runs):
            print("  " + figures.line())
            ok = ok and figures.messages <= figures.turns + 2
        with FakeAnthropic(full_length) as anthropic:
            os.environ["ANTHROPIC_BASE_URL"] = anthropic.url  # the SDK reads it
            env = {"NIGHTWATCH_LLM": "anthropic", "ANTHROPIC_API_KEY": "sk-ant-bench"}
            print("fake Anthropic server, answering at full length:")
            for figures in measure(Path(tmp) / "anthropic", env, args.runs):
                print("  " + figures.line())
                ok = ok and figures.messages <= figures.turns + 2
    print("target met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
