"""The phrase rules: whether a message asks, in plain words, to remember or forget something, without a model.

They are deliberately conservative: a message is a teaching only when it *starts* with one of the phrasings below
(after greetings, "please", and the personas it addresses), and a question never is, so an ordinary topic still
starts a deliberation ("should we remember to rotate keys?" is a topic). Remember: "remember that …", "remember: …",
"remember to …", "please remember …", "note that …", "keep in mind that …", "don't forget that …", "Maya, remember
that …", "remember for Priya that …". Forget: "forget that …", "forget about …", "that's no longer true: …", "that
is not true anymore: …", and "we no longer …" (what is no longer so is what to forget: "we no longer use Redis"
forgets "we use Redis").
"""

from __future__ import annotations

import re

from nightwatch.domain.teaching.intent import Intent, Teaching

# A persona's name as someone types it to address it: one or two words ("Maya", "Code Reviewer"), maybe an "@".
_NAME = r"(?!(?i:remember|forget|note|please|never|don't|do|that)\b)@?[^\W\d_][\w'-]*(?:[ ][A-Z][\w-]*)?"
_NAMES = rf"{_NAME}(?:\s*(?:,|&|\band\b)\s*{_NAME})*"
_ANY_NAME = r"@?[^\W\d_][\w'-]*(?:[ ][^\W\d_][\w'-]*)?"  # after "for", any case: "remember for priya that …"
_KEYWORD = r"(?=(?i:(?:please\s+)?(?:remember|forget|note))\b)"
_ADDRESS = re.compile(
    rf"^(?P<names>{_NAMES})\s*[,:]\s+"
    rf"|^(?P<at>@[\w-]+(?:\s*(?:,|&|\band\b)?\s*@[\w-]+)*)\s+"
    rf"|^(?P<bare>{_NAME})\s+{_KEYWORD}"
)
_LEADING = re.compile(
    r"^(?:hey|hi|hello|yo|ok|okay|so|also|and|btw|fyi|oh|well|actually|thanks|thank you|please|pls|kindly)\b"
    r"[\s,!.:-]*",
    re.IGNORECASE,
)
_SEPARATOR = r"\s*(?:that\b(?!\s+time\b)\s*[,:]?|:|,|—|–|-(?=\s))"
_FOR = rf"(?:\s+for\s+(?P<for>{_ANY_NAME}(?:\s*(?:,|&|\band\b)\s*{_ANY_NAME})*))?"
_REMEMBER = (
    re.compile(rf"^remember{_FOR}(?:\s+(?:this|the following))?{_SEPARATOR}\s*(?P<text>.*)$", re.IGNORECASE),
    re.compile(rf"^remember{_FOR}\s+to\s+(?P<text>\S.*)$", re.IGNORECASE),
    re.compile(
        rf"^(?:don'?t|don’t|do not|never)\s+forget{_FOR}(?:{_SEPARATOR}|\s+to\b)\s*(?P<text>.*)$", re.IGNORECASE
    ),
    re.compile(
        rf"^(?:note|take note|make a note|keep in mind|bear in mind){_FOR}{_SEPARATOR}\s*(?P<text>.*)$",
        re.IGNORECASE,
    ),
)
_NEGATED = r"(?:(?:'s|’s|\s+is)\s+(?:no\s+longer|not)|\s+isn['’]?t)"
_FORGET = (
    re.compile(
        rf"^forget{_FOR}(?:\s*(?:that|about)\b\s*[,:—–]?|\s*[:,—–]|\s+(?:it|this)\b[\s,:.—–]*)\s*(?P<text>.*)$",
        re.IGNORECASE,
    ),
    re.compile(
        rf"^(?:that|this|it){_NEGATED}\s+(?:true|right|correct|the\s+case|valid)(?:\s+any\s?more)?"
        r"\s*(?:[:,.;—–]|-(?=\s)|$)\s*(?P<text>.*)$",
        re.IGNORECASE,
    ),
)
_NO_LONGER = re.compile(r"^we\s+no\s+longer\s+(?P<text>\S.*)$", re.IGNORECASE)
# Words that are not persona names where a name would stand ("Note: …", "Never forget …", "remember for now that …").
_NOT_NAMES = frozenset(
    {
        "remember", "note", "forget", "reminder", "important", "update", "heads-up", "now", "later", "me", "us",
        "you", "everyone", "everybody", "all", "team", "the team", "next time", "good", "ever", "the record",
        "the future", "future", "folks", "guys", "people", "that", "this", "it", "we", "i", "never", "don't",
        "dont", "don’t", "do", "always", "just", "must", "should", "can", "could", "would", "will", "please",
    }
)  # fmt: skip
_PRONOUN_ONLY = frozenset({"it", "this", "that", "them", "those", "these"})
_TRAILING = re.compile(r"(?:[\s,;]+(?:please|pls|thanks|thank you|thx|ty))?[\s.!]*$", re.IGNORECASE)
_WRAPPING = re.compile(r"^[\"'“”‘’`]+|[\"'“”‘’`]+$")


def parse_teaching(message: str) -> Teaching:
    """What the message asks by the phrase rules: remember, forget, or nothing (a topic)."""
    text = " ".join(message.split())
    if not text or text.endswith("?"):
        return Teaching.none()
    text = _without_leading(text)
    named, text = _addressed(text)
    text = _without_leading(text)
    for pattern in _REMEMBER:
        match = pattern.match(text)
        if match:
            return _found(Intent.REMEMBER, named, match, _lesson(match.group("text")))
    for pattern in _FORGET:
        match = pattern.match(text)
        if match:
            return _found(Intent.FORGET, named, match, _thing(match.group("text")))
    match = _NO_LONGER.match(text)
    if match:
        return Teaching(Intent.FORGET, named, _thing("We " + match.group("text")))
    return Teaching.none()


def _found(intent: Intent, named: tuple[str, ...], match: re.Match[str], text: str) -> Teaching:
    extra = match.groupdict().get("for")
    return Teaching(intent, named + (_names(extra) if extra else ()), text)


def _without_leading(text: str) -> str:
    """The text without greetings, thanks and "please" in front ("Ok, please remember …" -> "remember …")."""
    while True:
        shorter = _LEADING.sub("", text, count=1)
        if shorter == text:
            return text
        text = shorter


def _addressed(text: str) -> tuple[tuple[str, ...], str]:
    """The personas addressed at the start ("Maya, …", "Maya and Priya: …", "@maya …") and the rest."""
    match = _ADDRESS.match(text)
    if match is None:
        return (), text
    names = _names(match.group("names") or match.group("at") or match.group("bare"))
    if not names:
        return (), text  # "Note: …" or "Remember, …": the rules below read it
    return names, text[match.end() :]


def _names(listed: str) -> tuple[str, ...]:
    """The names in "Maya, Priya and @dev"; () when any of them is a word that is not a name."""
    parts = [part.strip().lstrip("@").strip() for part in re.split(r"\s*(?:,|&|\band\b)\s*", listed)]
    names = tuple(part for part in parts if part)
    return () if any(name.lower() in _NOT_NAMES for name in names) else names


def _lesson(text: str) -> str:
    """The lesson as a sentence: no wrapping quotes or trailing "please", a capital first, a full stop last."""
    text = _clean(text)
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?)…`\"'”’" else text + "."


def _thing(text: str) -> str:
    """What to forget, as said; "" for a bare pronoun ("forget about it" names nothing)."""
    text = _clean(text)
    return "" if text.lower() in _PRONOUN_ONLY else text


def _clean(text: str) -> str:
    text = _TRAILING.sub("", text.strip())
    return _WRAPPING.sub("", text).strip()
