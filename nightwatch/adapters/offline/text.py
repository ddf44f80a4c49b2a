"""How the offline model reads a request: keywords, the thread's lines and the instruction's cues.

Everything here is plain string work with no randomness, so the same request always reads the same way.
The cues it understands (documented for whoever writes the prompts):
- the thread: `- Name: text` / `- Name (a person): text` bullets under a heading or label that names messages or
  the thread (`The thread so far:`, `Messages to fold in:`), continuation lines indented; a heading or label naming
  a summary (`Earlier in the thread, in summary:`, `Summary so far:`) holds older context. Without such a section, every
  message before the instruction is the thread, one `Name: text` line (or a message by an unknown author) each;
- `round N` (instruction first, then the system prompt) gives the round; `final round` / `last round` /
  `round N of N` in the instruction or the system prompt mark the last one (`not the final round` does not);
- `at most N lessons` gives the compaction limit; the lessons are the last run of `- ` lines, `[pinned] ` or `📌`
  marking pinned ones; a memory section starts at a heading naming memory, lessons or what is remembered and ends
  at the next heading or at `</memory>`, the end of the block that holds the notes;
- `Outcome: APPROVE|CHANGES|HUMAN` gives the outcome a reflection is about, `Kind: K` the kind of interaction;
- an extraction's messages are the `- Name: text` lines between `<messages>` and `</messages>`;
- `N. owner - action` lines in a turn's instruction are the lead's action items from its call for another round,
  and `You lead this discussion` marks the lead's own turn (llm.py reads these two).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from nightwatch.domain.llm import LLMRequest

MARK = "[offline]"
# Words that raise a concern in a statement (the consensus counts them; a reply to one agrees with it).
# "non-blocking" and "unblock" say the opposite, so a hyphen or "un" before "block" does not count.
CONCERN = re.compile(
    r"(?<![-\w])(risk|must|block|missing|vulnerab|flaky|regression|rollback|leak|exploit|insecure|unsafe|liabilit)\w*",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")
# What may follow a stem in a longer form of the same word.
_FORMS = frozenset(
    "e s es ed er ers ing ment ments ion ions ation ations ate ated ates ating ive al ity y ure or ors".split()
)
_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s")
_STOPWORDS = frozenset(
    """about above after again against also and any are aren because been before being below between both but
    can cannot could did does doing don down during each few for from further had has have having her here hers
    him his how into its just let lets more most need needs not now off once only other our ours out over own
    same she should some such than that the their theirs them then there these they this those through too under
    until very was way were what when where which while who whom why will with would you your yours yes okay
    please thing things want wants get gets got make makes made use used using new add adds added one two
    we i me my is it be do of on in to as at by if or an so up no a all""".split()
)
_THREAD_LINE = re.compile(r"^([A-Z][\w .'-]{0,39}?)(?:\s+\([^)]{1,60}\))?:\s+(\S.*)$")
_BULLET_LINE = re.compile(r"^([\w@][\w .'@-]{0,39}?)(?:\s+\([^)]{1,60}\))?:\s+(\S.*)$")
# Labels a message may use for its own fields; a message starting with one is not somebody speaking.
_LABELS = frozenset("topic project round outcome decision summary instruction note task context reply".split())
_ROUND = re.compile(r"\bround\s+(\d+)(?:\s+of\s+(\d+))?", re.IGNORECASE)
_FINAL = re.compile(r"(?<!not the )\b(?:final|last) round\b|\bno more rounds\b", re.IGNORECASE)
_NUMBERED = re.compile(r"^\d{1,2}[.)]\s+")
_ITEM = re.compile(r"^([\w@][\w .'@-]{0,39}?)(?:\s*:|\s+[-–—])\s+(\S.*)$")
_AT_MOST = re.compile(r"\bat most (\d+) lessons?\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_MEMORY_END = "</memory>"
_MEMORY_HEADING = re.compile(r"^#{1,6}\s.*\b(memor\w*|lessons?|remember\w*)\b", re.IGNORECASE)


def stem(word: str) -> str:
    """A crude, stable stem: lower case without a common English suffix."""
    word = word.lower()
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
    return word


def keywords(text: str) -> dict[str, str]:
    """The content words of `text` as {stem: first word seen}, in order of appearance."""
    found: dict[str, str] = {}
    for word in _WORD.findall(text):
        lowered = word.lower()
        if lowered not in _STOPWORDS and len(lowered) >= 3:
            found.setdefault(stem(lowered), word)
    return found


def _match(a: str, b: str) -> bool:
    # A short stem also meets a longer form of itself ("deploy" / "deployment", "migr" / "migrate"), but not a
    # different word that happens to start with it ("local" / "localstorage", "check" / "checkout").
    short, long = sorted((a, b), key=len)
    return a == b or (len(short) >= 4 and long.startswith(short) and long[len(short) :] in _FORMS)


def overlap(wanted: Iterable[str], offered: Iterable[str]) -> list[str]:
    """The stems of `wanted` that some stem of `offered` matches (equal, or a close longer form of it)."""
    offered = list(offered)
    return [w for w in wanted if any(_match(w, o) for o in offered)]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text.replace("\n", " ")) if s.strip()]


def clip(text: str, words: int) -> str:
    """At most `words` words of `text`, with an ellipsis when cut, without a trailing full stop."""
    parts = text.split()
    cut = " ".join(parts[:words]).rstrip(".,;:")
    return cut + ("…" if len(parts) > words else "")


def sentence(text: str) -> str:
    """`text` as one sentence: capitalised, ending with punctuation."""
    text = text.strip()
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?…" else text + "."


def unmark(text: str) -> str:
    """The text without the offline label or a pin, so quoting it does not double them."""
    text = text.strip()
    for prefix in ("📌", MARK):
        if text.startswith(prefix):
            text = text[len(prefix) :].strip()
    return text


@dataclass(frozen=True)
class ThreadLine:
    """One thing said in the thread; `author` is '' when it could not be told."""

    author: str
    text: str


def instruction(request: LLMRequest) -> str:
    """The last user message: what this call asks for."""
    for message in reversed(request.messages):
        if message.role == "user":
            return message.content
    return ""


def everything(request: LLMRequest) -> str:
    """The system prompt and every message, for cues that may sit in either."""
    return "\n\n".join([request.system.text, *(m.content for m in request.messages)])


def thread(request: LLMRequest) -> list[ThreadLine]:
    """What was said so far, oldest first, without SKIP answers."""
    lines = _sections(request.system.text) + [line for m in request.messages for line in _sections(m.content)]
    if not lines:
        lines = _messages_before_instruction(request)
    return [line for line in lines if line.text and line.text.upper() != "SKIP"]


def _sections(text: str) -> list[ThreadLine]:
    """Thread lines under message headings, and summaries under summary headings (as lines with no author)."""
    lines: list[ThreadLine] = []
    section = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if _heading(stripped, "summary"):
            section = "summary"
        elif _heading(stripped, "messages|thread"):
            section = "messages"
        elif raw.startswith("#") or (section == "messages" and stripped and not raw.startswith((" ", "- "))):
            section = ""
        elif section == "messages" and raw.startswith("- "):
            match = _BULLET_LINE.match(stripped[2:])
            lines.append(ThreadLine(match.group(1), unmark(match.group(2))) if match else ThreadLine("", stripped[2:]))
        elif section == "messages" and stripped and lines:
            lines[-1] = ThreadLine(lines[-1].author, f"{lines[-1].text} {stripped}")
        elif section == "summary" and stripped:
            lines.append(ThreadLine("", unmark(stripped)))
    return lines


def _heading(line: str, word: str) -> bool:
    """A markdown heading, or a short label line ending in ':', that names `word` (a regex alternation)."""
    labelled = line.startswith("#") or (line.endswith(":") and len(line) <= 80 and not line.startswith("- "))
    return labelled and re.search(rf"\b(?:{word})\b", line, re.IGNORECASE) is not None


def _messages_before_instruction(request: LLMRequest) -> list[ThreadLine]:
    own = request.persona.name if request.persona else "assistant"
    last_user = max((i for i, m in enumerate(request.messages) if m.role == "user"), default=-1)
    lines: list[ThreadLine] = []
    for message in request.messages[:last_user]:
        if message.role == "assistant":
            lines.append(ThreadLine(own, unmark(message.content)))
            continue
        first, _, rest = message.content.strip().partition("\n")
        match = _THREAD_LINE.match(first)
        if match and match.group(1).strip().lower() not in _LABELS:
            lines.append(ThreadLine(match.group(1).strip(), unmark(f"{match.group(2)} {rest}".strip())))
        else:
            lines.append(ThreadLine("", unmark(message.content)))
    return lines


def block_lines(text: str, tag: str) -> list[ThreadLine]:
    """The `- Name: text` lines between `<tag>` and `</tag>` (a person's marked `(a person)`), continuations joined."""
    lines: list[ThreadLine] = []
    inside = False
    for raw in text.splitlines():
        if raw.strip() in (f"<{tag}>", f"</{tag}>"):
            inside = raw.strip() == f"<{tag}>"
        elif inside and raw.startswith("- "):
            match = _BULLET_LINE.match(raw[2:].strip())
            lines.append(ThreadLine(match.group(1), match.group(2)) if match else ThreadLine("", raw[2:].strip()))
        elif inside and raw.strip() and lines:
            lines[-1] = ThreadLine(lines[-1].author, f"{lines[-1].text} {raw.strip()}")
    return lines


def round_number(request: LLMRequest) -> int:
    """The round this call belongs to: from `round N` (instruction, then system prompt), else 2 once it spoke."""
    found = _ROUND.search(instruction(request)) or _ROUND.search(request.system.text)
    if found:
        return int(found.group(1))
    spoke = any(m.role == "assistant" for m in request.messages)
    if request.persona is not None:
        spoke = spoke or any(line.author == request.persona.name for line in thread(request))
    return 2 if spoke else 1


def is_final_round(text: str) -> bool:
    rounds = _ROUND.search(text)
    if rounds and rounds.group(2) is not None and rounds.group(1) == rounds.group(2):
        return True
    return bool(_FINAL.search(text))


def is_last_round(request: LLMRequest) -> bool:
    """True when the instruction names the final round, or the system prompt's `round N of N` says so."""
    if is_final_round(instruction(request)):
        return True
    rounds = _ROUND.search(request.system.text)
    return bool(rounds and rounds.group(2) is not None and rounds.group(1) == rounds.group(2))


def numbered_items(text: str) -> list[tuple[str, str]]:
    """(owner, action) for each `N. owner - action` line of `text` (an action item list), label removed."""
    items: list[tuple[str, str]] = []
    for line in text.splitlines():
        found = _ITEM.match(unmark(_NUMBERED.sub("", line.strip(), count=1)))
        if _NUMBERED.match(line.strip()) and found:
            items.append((found.group(1).strip(), found.group(2).strip()))
    return items


def at_most(text: str) -> int | None:
    found = _AT_MOST.search(text)
    return int(found.group(1)) if found else None


def last_bullets(text: str) -> list[str]:
    """The last run of `- ` lines in `text` (a list after the instructions), without the dash, each once."""
    runs: list[list[str]] = []
    previous_was_bullet = False
    for line in text.splitlines():
        is_bullet = line.startswith("- ") and bool(line[2:].strip())
        if is_bullet and not previous_was_bullet:
            runs.append([])
        if is_bullet:
            runs[-1].append(line[2:].strip())
        previous_was_bullet = is_bullet
    return list(dict.fromkeys(runs[-1])) if runs else []


def nested_bullets(text: str) -> list[str]:
    """Indented `  - ` lines of `text` (a list inside a list item), without the dash."""
    nested = (line.strip() for line in text.splitlines() if line.startswith("  "))
    return [line[2:].strip() for line in nested if line.startswith("- ")]


def memory_lessons(system_text: str) -> list[str]:
    """The `- ` lessons under a memory heading of the system prompt, up to the end of its memory block."""
    lessons: list[str] = []
    inside = False
    for line in system_text.splitlines():
        if line.startswith("#") or line == _MEMORY_END:
            inside = bool(_MEMORY_HEADING.match(line))
        elif inside and line.startswith("- ") and line[2:].strip():
            lessons.append(unmark(line[2:]))
    return lessons
