"""How the offline model reads a thread as its lead: who asked for which check, what is still open, and the verdict.

A sentence raises a concern when it asks for a check before going ahead (in one of the ASKS shapes the offline
personas use, or a person's "before this merges", "what happens when", "have we checked") or states a risk
(text.CONCERN; questions and fragments under five words only mention one, and a word the topic itself
holds only names the topic). Replies to an earlier point, recalled lessons and the lead's own recaps refer back and
raise nothing. Each author's concern is their first check asked for, else their first risk; it stays open while
the author's latest message still raises something, and blocks while that message is severe.

The verdict follows: no concern -> APPROVE. An open concern before the last round -> CHANGES, each concern an action
item for its author. In the last round, a concern that still blocks -> HUMAN (a person should decide); otherwise
APPROVE, with the concerns as follow-ups. The lead's turn (voice.py) reads the thread the same way, so what it
says before deciding matches the decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from nightwatch.adapters.offline.text import CONCERN, MARK, ThreadLine, clip, sentences
from nightwatch.adapters.offline.topic import TopicPhrase, capitalised
from nightwatch.domain.deliberation.models import Decision

MAX_ACTION_ITEMS = 3
MIN_STATEMENT_WORDS = 5
BRIEF_WORDS = 8
# What makes a concern severe: a person should decide when one is still open after the last round.
SEVERE = re.compile(r"(?<![-\w])(block|vulnerab|exploit)\w*", re.IGNORECASE)
# How a persona asks for a check, by the first of its tone words found here ({vp} is what to check, a verb
# phrase). The consensus reads a sentence in one of these shapes as a request for a check, and its {vp} as the
# action item.
ASKS = {
    "calm": "Before this goes further, I'd {vp}.",
    "measured": "Before this goes further, I'd {vp}.",
    "firm": "Before this merges, we need to {vp}.",
    "blunt": "Before this merges, we need to {vp}.",
    "direct": "Before this merges, we need to {vp}.",
    "decisive": "Decision first: we {vp} before we build.",
    "warm": "Could we {vp} first? Happy to help.",
    "friendly": "Could we {vp} first? Happy to help.",
    "curious": "Before this merges, could we {vp}?",
    "inquisitive": "Before this merges, could we {vp}?",
    "pragmatic": "Let's {vp} first, then ship.",
    "practical": "I'd {vp} before we commit.",
    "upbeat": "I'd {vp} before we commit.",
}
DEFAULT_ASK = "I'd {vp} before this merges."
# Other ways people ask for a check before going ahead (in a thread a person wrote).
_ASKED = re.compile(
    r"\bbefore (?:this|it|we) (?:goes further|go further|merges?|ships?|lands?|build|commit|goes out)\b"
    r"|\bhave we (?:thought|checked|tested|covered)\b|\bwhat happens (?:when|if)\b",
    re.IGNORECASE,
)


def _ask_pattern(template: str) -> re.Pattern[str]:
    """The first sentence of an ask template, as a pattern that captures its {vp}."""
    head, _, tail = template.partition("{vp}")
    end = re.search(r"[.?!]", tail)
    tail = tail[: end.end()] if end else tail
    return re.compile(rf"^{re.escape(head)}(?P<vp>.+?){re.escape(tail)}$", re.IGNORECASE)


_ASK_PATTERNS = tuple(_ask_pattern(t) for t in dict.fromkeys([*ASKS.values(), DEFAULT_ASK]))


def asked_check(said: str) -> str | None:
    """The check a sentence asks for, as a verb phrase ("walk the attack path for ..."); None if it asks none."""
    for pattern in _ASK_PATTERNS:
        found = pattern.match(said.strip())
        if found:
            return found.group("vp").strip()
    return None


def asks_for_check(said: str) -> bool:
    """True when a sentence asks for a check before going ahead (in one of our shapes or a person's)."""
    return asked_check(said) is not None or bool(_ASKED.search(said))


REFERS_BACK = re.compile(
    r"^(On [^:]{1,60}'s point|On the earlier point|On my item|From memory:|Open before I decide|Where we are)"
)


@dataclass(frozen=True)
class Concern:
    """One author's concern: the sentence that raised it, what to do about it, and where it stands now."""

    author: str  # '' when the thread did not say who
    said: str
    action: str  # a verb phrase: "walk the attack path for ..."
    open: bool  # the author's latest message still raises something
    blocking: bool  # ... and something severe
    latest: str = ""  # the author's latest message

    @property
    def owner(self) -> str:
        return self.author or "Team"

    def in_brief(self, topic: TopicPhrase) -> str:
        """The item in a few words: "Maya to walk the attack path" (the topic's phrase left out), or "Maya's check"."""
        # Leave out "for <phrase>" only where the phrase ends a clause: "... for X and confirm ...", not "... X live".
        cut = re.search(rf"\s+\w+\s+{re.escape(topic.phrase)}(?=$|,| and | to | then | with )", self.action)
        action = self.action[: cut.start()] if cut else self.action
        return f"{self.owner} to {action}" if len(action.split()) <= BRIEF_WORDS else f"{self.owner}'s check"


def raises(said: str, topic: str = "") -> bool:
    """True when a sentence raises a concern (see the module docstring).

    A concern word that is in the topic itself ("Flaky checkout test in CI") only names the topic.
    """
    if REFERS_BACK.match(said):
        return False
    if asks_for_check(said):
        return True
    statement = not said.endswith("?") and len(said.split()) >= MIN_STATEMENT_WORDS
    return statement and _names(CONCERN, said, topic)


def _blocks(said: str, topic: str) -> bool:
    return not REFERS_BACK.match(said) and not said.endswith("?") and _names(SEVERE, said, topic)


def _names(words: re.Pattern[str], said: str, topic: str) -> bool:
    """True when `said` has one of `words` that the topic does not."""
    in_topic = {word.lower() for word in re.findall(r"[\w-]+", topic)}
    return any(found.group(0).lower() not in in_topic for found in words.finditer(said))


def read_concerns(lines: list[ThreadLine], topic: str = "") -> list[Concern]:
    """One concern per author who raised any, in the order they first spoke."""
    raised: dict[str, list[str]] = {}
    latest: dict[str, str] = {}
    for line in lines:
        latest[line.author] = line.text
        for said in sentences(line.text):
            if raises(said, topic):
                raised.setdefault(line.author, []).append(said)
    concerns = []
    for author, raised_by_author in raised.items():
        first = next((s for s in raised_by_author if asked_check(s)), raised_by_author[0])
        current = sentences(latest[author])
        concerns.append(
            Concern(
                author=author,
                said=first,
                action=asked_check(first) or f"follow up on: {_lower_first(clip(first, 14))}",
                open=any(raises(s, topic) for s in current),
                blocking=any(_blocks(s, topic) for s in current),
                latest=latest[author],
            )
        )
    return concerns


def verdict(lines: list[ThreadLine], *, final: bool, topic: TopicPhrase) -> dict[str, object]:
    """The lead's decision as the consensus JSON asks for it (the rule is in the module docstring)."""
    concerns = read_concerns(lines, topic.text)
    about = topic.proposal
    if not concerns:
        heard = names(list(dict.fromkeys(line.author for line in lines if line.author))) or "nobody"
        return _verdict(
            Decision.APPROVE,
            f"Nobody asked for a check or named a risk; {about} can go ahead as it stands.",
            [f"Heard {heard}; every point made was a view, not a condition."],
            [],
        )
    items = [f"{c.owner} - {c.action}" for c in concerns]
    blockers = [c for c in concerns if c.blocking]
    if final and blockers:
        who = names([c.owner for c in blockers])
        return _verdict(
            Decision.HUMAN,
            f"After the last round, {who} still {_verb(blockers, 'blocks', 'block')} {about}; a person should decide.",
            ["The team cannot close a blocker by itself.", *(f"{c.owner}: {clip(c.latest, 20)}" for c in blockers)],
            items,
        )
    asked = [c for c in concerns if c.open]
    if not final and asked:
        return _verdict(Decision.CHANGES, _changes_summary(asked, about), [_raised(c) for c in asked], items)
    return _verdict(
        Decision.APPROVE,
        f"{capitalised(about)} can go ahead; {_count(concerns, 'follow-up')} "
        f"{'stays open with an owner' if len(concerns) == 1 else 'stay open, each with an owner'}.",
        [_followed(c) for c in concerns],
        items,
    )


def _changes_summary(asked: list[Concern], about: str) -> str:
    who = names([c.owner for c in asked])
    if all(asked_check(c.said) for c in asked):
        wanted = "a check" if len(asked) == 1 else "checks"
        return f"{who} {_verb(asked, 'asks', 'ask')} for {wanted} before {about} goes ahead."
    wanted = "a concern" if len(asked) == 1 else "concerns"
    return f"{who} {_verb(asked, 'has', 'have')} {wanted} to settle before {about} goes ahead."


def _raised(concern: Concern) -> str:
    if asked_check(concern.said):
        until = ", and it blocks until answered" if concern.blocking else ""
        return f"{concern.owner} asked for a check before going ahead{until}."
    return f"{concern.owner} named a risk: {_lower_first(clip(concern.said, 16))}."


def _followed(concern: Concern) -> str:
    if concern.open:
        return f"{concern.owner}'s point stays open as a follow-up; it does not block."
    return f"{concern.owner} took the item in a later round; it no longer blocks."


def _verdict(decision: Decision, summary: str, reasons: list[str], items: list[str]) -> dict[str, object]:
    return {
        "decision": decision.value,
        "summary": f"{MARK} {summary}",
        "reasons": [f"{MARK} {reason}" for reason in reasons[:MAX_ACTION_ITEMS]],
        "action_items": [f"{MARK} {item}" for item in items[:MAX_ACTION_ITEMS]],
    }


def names(people: list[str]) -> str:
    """ "Maya", "Maya and Dev", "Maya, Dev and Priya"."""
    people = list(dict.fromkeys(people))
    return people[0] if len(people) == 1 else f"{', '.join(people[:-1])} and {people[-1]}" if people else ""


def _verb(concerns: list[Concern], one: str, many: str) -> str:
    return one if len({c.owner for c in concerns}) == 1 else many


def _count(items: list[Concern], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def _lower_first(text: str) -> str:
    return text[0].lower() + text[1:] if text[:1].isupper() and not text[1:2].isupper() else text
