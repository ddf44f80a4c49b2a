"""Makes model output safe to post to Slack, and cuts it into pieces that fit Slack's limits.

`sanitize` runs on every text a persona posts: no broadcast or user-group mention ever reaches Slack, a user is
mentioned only if already in the thread, and `&`, `<`, `>` are escaped unless they form a link or allowed mention.
Look-alikes are defused too: a broadcast spelt with confusable letters (Cyrillic `с`, fullwidth `＠`, mathematical
letters; the Unicode confusables table of `confusable-homoglyphs`) or with invisible characters inside it reads as the
plain, defused name, and a masked link (`<url|text>`) shows its real URL instead of its text.
`split_for_blocks` then cuts the safe text into section texts and messages that Block Kit accepts.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from functools import cache

WORD_JOINER = "\u2060"  # invisible; placed after "@" so Slack never reads the word as a mention

_ANGLE_TOKEN = re.compile(r"<([^<>]*)>")
_BARE_BROADCAST = re.compile(r"(?<![\w@])@(channel|here|everyone)\b", re.IGNORECASE)
_BARE_AMPERSAND = re.compile(r"&(?!(?:amp|lt|gt);)")
_USER_MENTION = re.compile(r"@([UW][A-Z0-9]+)(?:\|([^|]*))?")
_CHANNEL_LINK = re.compile(r"#[CG][A-Z0-9]+(?:\|[^|]*)?")
_URL_LINK = re.compile(r"((?:https?://|mailto:)[^\s|]+)(?:\|([^|]*))?")
_DATE = re.compile(r"!date\^\d+\^[^|]*(?:\|[^|]*)?")
_BROADCASTS = ("channel", "here", "everyone")
_LONGEST_BROADCAST = max(map(len, _BROADCASTS))
_INVISIBLE = frozenset({"Cf", "Mn", "Me"})  # zero-width spaces and joiners, bidi marks, combining marks


def sanitize(text: str, *, allowed_users: Collection[str]) -> str:
    """Returns `text` with mass mentions neutralised, unknown user mentions made plain, and mrkdwn escaped."""
    pieces: list[str] = []
    position = 0
    for token in _ANGLE_TOKEN.finditer(text):
        pieces.append(_plain(text[position : token.start()]))
        pieces.append(_angle_token(token.group(1), allowed_users))
        position = token.end()
    pieces.append(_plain(text[position:]))
    return "".join(pieces)


def _plain(text: str) -> str:
    """Escapes text that is not inside a token, and defuses bare @channel / @here / @everyone."""
    escaped = _BARE_AMPERSAND.sub("&amp;", text).replace("<", "&lt;").replace(">", "&gt;")
    return _defuse_bare(escaped)


def _defuse_bare(text: str) -> str:
    """Defuses @channel / @here / @everyone, and their look-alikes when the text is not plain ASCII."""
    text = _BARE_BROADCAST.sub(lambda m: _defused(m.group(1)), text)
    return text if text.isascii() else _defuse_look_alikes(text)


def _defuse_look_alikes(text: str) -> str:
    """Replaces each broadcast written with confusable or invisible characters by its plain, defused name."""
    pieces: list[str] = []
    position = 0
    for start, char in enumerate(text):
        if start < position or _skeleton(char) != "@" or (start and _is_word(text[start - 1])):
            continue
        found = _broadcast_after(text, start + 1)
        if found is not None:
            end, name = found
            pieces += [text[position:start], _defused(name)]
            position = end
    return "".join(pieces) + text[position:]


def _broadcast_after(text: str, start: int) -> tuple[int, str] | None:
    """(end, name) when the characters from `start` read as a broadcast name and a word ends there."""
    read = ""
    for end in range(start, len(text)):
        read += _skeleton(text[end])
        if len(read) > _LONGEST_BROADCAST or (read and not read.isalpha()):
            return None
        if read in _BROADCASTS and not _word_follows(text, end + 1):
            return end + 1, read
    return None


def _word_follows(text: str, start: int) -> bool:
    """Whether the next visible character after `start` continues a word."""
    rest = (char for char in text[start:] if _skeleton(char))
    return _is_word(next(rest, " "))


def _is_word(char: str) -> bool:
    skeleton = _skeleton(char)
    return bool(skeleton) and (skeleton.isalnum() or skeleton in "_@")


@cache
def _skeleton(char: str) -> str:
    """What `char` looks like, lower-cased: "" for an invisible character, its ASCII look-alike where one exists."""
    if char.isascii():
        return char.lower()
    if unicodedata.category(char) in _INVISIBLE:
        return ""
    folded = unicodedata.normalize("NFKC", char)  # fullwidth and mathematical letters, small and fullwidth @
    if folded.isascii():
        return folded.lower()
    return _confusable_ascii().get(folded, folded).lower()


@cache
def _confusable_ascii() -> dict[str, str]:
    """Each character the Unicode confusables table says looks like one ASCII letter, mapped to that letter."""
    from confusable_homoglyphs.confusables import confusables_data  # loads a 1 MB table: only for non-ASCII text

    table: dict[str, str] = {}
    for char, glyphs in confusables_data.items():
        letters = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isascii() and g["c"].isalpha()]
        if letters and len(char) == 1:
            table[char] = letters[0]
    return table


def _defused(name: str) -> str:
    return f"@{WORD_JOINER}{name}"


def _angle_token(inner: str, allowed_users: Collection[str]) -> str:
    """Keeps links, channel links, dates and allowed user mentions; renders every other `<...>` harmless."""
    if inner.startswith("@"):
        return _user_token(inner, allowed_users)
    if inner.startswith("!"):
        return _special_token(inner)
    if _CHANNEL_LINK.fullmatch(inner):
        return f"<{inner}>"
    link = _URL_LINK.fullmatch(inner)
    if link:
        return f"<{_BARE_AMPERSAND.sub('&amp;', link.group(1))}>"  # a masked link's text could hide where it goes
    return _plain(f"<{inner}>")


def _user_token(inner: str, allowed_users: Collection[str]) -> str:
    mention = _USER_MENTION.fullmatch(inner)
    if mention is None:
        return _plain(f"<{inner}>")
    user_id, label = mention.group(1), mention.group(2)
    if user_id in allowed_users:
        return f"<@{user_id}>"
    return _plain(_defused(label.lstrip("@") if label else user_id))


def _special_token(inner: str) -> str:
    """`<!here>`, `<!channel>`, `<!everyone>`, `<!subteam^ID|@group>` become plain text; dates stay."""
    if _DATE.fullmatch(inner):
        return f"<{_defuse_bare(_BARE_AMPERSAND.sub('&amp;', inner))}>"
    name, _, label = inner[1:].partition("|")
    if name.lower() in _BROADCASTS:
        return _defused(name.lower())
    if name.lower().startswith("subteam^"):
        return _plain(_defused(label.lstrip("@") or "group"))
    return _plain(f"<{inner}>")


# ----- splitting ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockLimits:
    """Slack's limits on one message: characters per section block, blocks, characters in all."""

    section_chars: int = 3000
    blocks_per_message: int = 50
    message_chars: int = 40000

    def __post_init__(self) -> None:
        if not 20 <= self.section_chars <= self.message_chars or self.blocks_per_message < 1:
            raise ValueError(f"inconsistent block limits: {self}")


SLACK_LIMITS = BlockLimits()

_FENCE = "```"
_CLOSE_FENCE = "\n```"
_REOPEN_FENCE = "```\n"
# Where to cut, best first: between paragraphs, lines, sentences, words.
_SEPARATORS = (
    re.compile(r"\n[ \t]*\n(?:[ \t]*\n)*"),
    re.compile(r"\n"),
    re.compile(r"(?<=[.!?])[ \t]+"),
    re.compile(r"[ \t]+"),
)
_UNCUTTABLE = re.compile(r"<[^<>]*>|&(?:amp|lt|gt);")  # links, mentions and entities stay whole


def split_for_blocks(text: str, limits: BlockLimits = SLACK_LIMITS) -> list[list[str]]:
    """Cuts text into messages, each a list of section texts, within `limits`; [] for blank text.

    Cuts fall on paragraph, line, sentence or word boundaries where possible, never inside a link, mention or
    entity, and a code block cut in two is closed and reopened so both halves render as code.
    """
    messages: list[list[str]] = []
    current: list[str] = []
    size = 0
    for section in _sections(text.strip(), limits.section_chars):
        full = len(current) == limits.blocks_per_message or size + len(section) > limits.message_chars
        if current and full:
            messages.append(current)
            current, size = [], 0
        current.append(section)
        size += len(section)
    if current:
        messages.append(current)
    return messages


def _sections(text: str, limit: int) -> list[str]:
    sections: list[str] = []
    reopen = ""
    rest = text
    while rest:
        body = reopen + rest
        if len(body) <= limit:
            sections.append(body)
            break
        cut, resume = _cut_point(body, limit - len(_CLOSE_FENCE), floor=len(reopen))
        chunk = body[:cut].rstrip()
        inside_code = chunk.count(_FENCE) % 2 == 1
        if chunk.strip():
            sections.append(chunk + _CLOSE_FENCE if inside_code else chunk)
        reopen = _REOPEN_FENCE if inside_code else ""
        rest = body[resume:].lstrip("\n")
    return sections


def _cut_point(body: str, budget: int, floor: int) -> tuple[int, int]:
    """Where to end this section and where the next one starts: (cut, resume), with floor < cut <= budget."""
    blocked = bytearray(budget + 2)
    for token in _UNCUTTABLE.finditer(body):  # the whole body: a token may straddle the budget
        start, end = token.span()
        if start >= budget:
            break
        blocked[start + 1 : min(end, budget + 1)] = b"\x01" * (min(end, budget + 1) - start - 1)

    def cuttable(position: int) -> bool:
        return floor < position <= budget and not blocked[position]

    best: tuple[int, int] | None = None
    for separator in _SEPARATORS:
        found = [m.span() for m in separator.finditer(body, 0, budget + 1) if cuttable(m.start())]
        if found and found[-1][0] >= budget // 2:
            return found[-1]
        if found and (best is None or found[-1][0] > best[0]):
            best = found[-1]
    if best is not None:
        return best
    hard = next((p for p in range(budget, floor, -1) if cuttable(p)), budget)  # a token longer than a section
    return hard, hard
