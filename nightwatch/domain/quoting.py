"""Text that goes into a prompt as data (memory, pinned documents, shared notes), made unable to leave its block.

A template wraps such text in a delimited block (`<memory>` … `</memory>`) introduced as notes, never instructions.
`as_data` is what keeps the text inside: whatever it says, it cannot close that block or open another one, start a
heading that imitates one of the prompt's own sections (ATX `#`, or a setext `===` / `---` underline), or pose as the
line that introduces a pinned document (`[pin 1 · file ...]`, in any case or width). It works for any block's tag
name, because it defuses every tag-like sequence, not one name.

Invisible and look-alike characters are the ways around a plain `<` check, so:
- every format character (Unicode category Cf: zero-width space and joiners, word joiner, BOM, soft hyphen, bidi
  controls, tag characters) is removed: `<` U+200B `/memory>` would otherwise read as `</memory>`;
- a bracket is any character that reads as `<` or `>`: those NFKC maps to one, those Unicode's confusables table
  (as shipped by confusable_homoglyphs) lists as one, and the angle brackets and angle quotation marks (`❮`, `《`,
  `⟨`, `«`); the slashes and marks between a bracket and a name likewise, and combining marks drawn over them;
- `#`, `=`, `-` and `[` count in their NFKC and confusable forms too (`＃`, `＝`, `－`, `［`).

The tables are literal here (the domain imports no outside library); tests/domain/test_quoting.py rebuilds them from
unicodedata and confusable_homoglyphs and fails when a new Unicode version adds a character they lack.
"""

from __future__ import annotations

import re
import unicodedata

# Unicode category Cf (format characters), as of Unicode 14; the test checks the running Python's table against it.
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064"
    "\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
# What reads as `<` and as `>`: NFKC's and the confusables table's forms, and the angle brackets and quotation marks.
_OPENERS = (
    "<\u00ab\u02c2\u02f1\u1438\u16b2\u2039\u2329\u276c\u276e\u2770\u27e8\u27ea\u2991\u29fc\u3008\u300a\ufe3d\ufe3f"
    "\ufe64\uff1c\U0001d236"
)
_CLOSERS = (
    ">\u00bb\u02c3\u02f2\u1433\u203a\u232a\u276d\u276f\u2771\u27e9\u27eb\u2992\u29fd\u3009\u300b\ufe3e\ufe40"
    "\ufe65\uff1e\U00016f3f\U0001d237"
)
# What may stand between a bracket and a tag's name: / \\ | ! ? (closing tags, <!doctype>, <?xml>, <|special|>) and
# their look-alikes.
_BETWEEN = (
    "/\\|!?\u1735\u2041\u2044\u2215\u2571\u27cb\u29f8\u2f03\u31d3\uff0f\U0001d23a\u2216\u27cd\u29f5\u29f9\u2f02"
    "\u31d4\ufe68\uff3c\U0001d20f\U0001d23b\uff5c\ufe15\ufe57\uff01\ua6eb\ufe16\ufe56\uff1f\u203c\u2047\u2048\u2049"
)
_BANGS = "!\ufe15\ufe57\uff01"
_HASHES = "#\ufe5f\uff03"
_EQUALS = "=\u1400\u207c\u208c\u2a75\u2a76\u2e40\u30a0\ua4ff\ufe66\uff1d"
_DASHES = "-\u02d7\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u2500\u2501\u2796\ufe58\ufe63\uff0d"
_SQUARE = "[\ufe47\uff3b"
_STRUCTURAL = frozenset(_OPENERS + _CLOSERS + _BETWEEN + _HASHES + _EQUALS + _DASHES + _SQUARE)


def _class(chars: str) -> str:
    return "".join(re.escape(char) for char in chars)


_BLANK = r"[^\S\n]"  # white space within a line
_FORMATS = re.compile(f"[{_FORMAT}]+")
# Line breaks other than "\n" (str.splitlines and many tokenizers honour them): in data they are only spaces.
_LINE_BREAKS = re.compile("[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# Where a combining mark may hang on nothing or on a bracket, slash, `#`, `=`, `-` or `[` (`<` + U+0338 still reads
# as `<`): a run of characters that are neither ASCII nor word characters after a blank, one of those, or a line start.
_LOOSE = re.compile(rf"(?:^|(?<=[\s{_class(''.join(sorted(_STRUCTURAL)))}]))[^\x00-\x7f\w]+", re.MULTILINE)
# A tag: an opener, maybe blanks and the characters above, then a letter, or a comment's <!--; and its closer, when
# the same line has one before any other bracket.
_TAG = re.compile(
    rf"[{_class(_OPENERS)}](?=[\s{_class(_BETWEEN)}]*[^\W\d_]|[{_class(_BANGS)}][{_class(_DASHES)}]{{2}})"
    rf"[^{_class(_OPENERS + _CLOSERS)}\n]*[{_class(_CLOSERS)}]?"
)
# A line that would start a heading (ATX `#`, or a setext underline of `=` or `-`) or pose as a pin's source line.
_UNDERLINE = _class(_EQUALS + _DASHES)
_PIN_LINE = rf"[{_class(_SQUARE)}]{_BLANK}*[pP\uff50\uff30][iI\uff49\uff29][nN\uff4e\uff2e](?![^\W\d_])"
_POSING = re.compile(
    rf"^({_BLANK}*)(?=[{_class(_HASHES)}]|{_PIN_LINE}|[{_UNDERLINE}](?:[{_UNDERLINE}]|{_BLANK})*$)", re.MULTILINE
)
_POSING_START = re.compile(rf"(?:^|\n){_BLANK}*[{_class(_HASHES + _SQUARE)}{_UNDERLINE}]")


def as_data(text: str) -> str:
    """Return `text` safe to put inside a delimited block: no tag in it can close the block or open another.

    Format characters are removed, tag-like sequences get their brackets escaped (`</memory>` becomes
    `&lt;/memory&gt;`, in any spelling, case, spacing or look-alike bracket), a line that would start a markdown
    heading or a pin's source line starts with a backslash instead (`\\#`, `\\===`, `\\[pin`), and line breaks other
    than `\\n` become spaces. Everything else is left as written, and applying it twice changes nothing.
    """
    if _FORMATS.search(text):
        text = _FORMATS.sub("", text)
    if _LINE_BREAKS.search(text):
        text = _LINE_BREAKS.sub(" ", text)
    text = _LOOSE.sub(_unmarked, text)
    if any(char in text for char in _OPENERS):
        text = _TAG.sub(_escape_tag, text)
    if _POSING_START.search(text):
        text = _POSING.sub(r"\1\\", text)
    return text


def _unmarked(match: re.Match[str]) -> str:
    """The run without the combining marks that hang on nothing or on a structural character (see _LOOSE)."""
    kept: list[str] = []
    loose = True  # the run follows a blank, a structural character or a line start
    for char in match.group():
        if unicodedata.category(char).startswith("M"):
            if not loose:
                kept.append(char)
            continue
        kept.append(char)
        loose = char in _STRUCTURAL or char.isspace()
    return "".join(kept)


def _escape_tag(match: re.Match[str]) -> str:
    tag = match.group()
    return f"&lt;{tag[1:-1]}&gt;" if tag[-1] in _CLOSERS else f"&lt;{tag[1:]}"
