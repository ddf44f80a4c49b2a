"""Text that goes into a prompt as data (memory, pinned documents, shared notes), made unable to leave its block.

A template wraps such text in a delimited block (`<memory>` … `</memory>`) introduced as notes, never instructions.
`as_data` is what keeps the text inside: whatever it says, it cannot close that block or open another one, and it
cannot start a heading that imitates one of the prompt's own sections. It works for any block's tag name, because
it defuses every tag-like sequence, not one name.
"""

from __future__ import annotations

import re

# The angle brackets, and the look-alikes a model may read as one, that can start or end a tag.
_OPENERS = "<\uff1c\ufe64\u2039\u3008\u27e8\u2329\u02c2\u1438"
_CLOSERS = ">\uff1e\ufe65\u203a\u3009\u27e9\u232a\u02c3\u1433"
# A tag: an opener, maybe blanks and / \ ! ? | (closing tags, <!doctype>, <?xml>, <|special|> tokens), then a letter,
# or a comment's <!--; and its closer, when the same line has one before any other bracket.
_TAG = re.compile(rf"[{_OPENERS}](?=\s*[/\\!?|]*\s*[^\W\d_]|!--)[^{_OPENERS}{_CLOSERS}\n]*[{_CLOSERS}]?")
# Line breaks other than "\n" (str.splitlines and many tokenizers honour them): in data they are only spaces.
_LINE_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_HEADING = re.compile(r"^([ \t]*)#", re.MULTILINE)


def as_data(text: str) -> str:
    """Return `text` safe to put inside a delimited block: no tag in it can close the block or open another.

    Tag-like sequences get their brackets escaped (`</memory>` becomes `&lt;/memory&gt;`, in any spelling, case,
    spacing or look-alike bracket), a line that would start a markdown heading starts with `\\#` instead, and line
    breaks other than `\\n` become spaces. Everything else is left as written, and applying it twice changes nothing.
    """
    if _LINE_BREAKS.search(text):
        text = _LINE_BREAKS.sub(" ", text)
    if any(char in text for char in _OPENERS):
        text = _TAG.sub(_escape_tag, text)
    if "#" in text:
        text = _HEADING.sub(r"\1\\#", text)
    return text


def _escape_tag(match: re.Match[str]) -> str:
    tag = match.group()
    return f"&lt;{tag[1:-1]}&gt;" if tag[-1] in _CLOSERS else f"&lt;{tag[1:]}"
