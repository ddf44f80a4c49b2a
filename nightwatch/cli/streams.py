"""The command's output streams: plain ASCII for a terminal that takes only ASCII, and a closed pipe ends quietly.

On an ASCII-only terminal (a C or POSIX locale, or a stream whose encoding is ASCII) every character the stream
cannot take is written as its nearest ASCII: typographic punctuation as its plain form, a letter without its accent,
a known symbol or emoji as a short word, anything else as `?`. So every command prints what it can, never a
UnicodeEncodeError.
"""

from __future__ import annotations

import codecs
import io
import os
import sys
import unicodedata
from typing import TextIO

from nightwatch.environment import c_locale

ERRORS = "nightwatch-ascii"
NEAREST = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"', "\u2033": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "--", "\u2015": "--", "\u2212": "-",
    "\u2026": "...", "\u00b7": "-", "\u2022": "*", "\u2023": ">", "\u2043": "-", "\u00a0": " ",
    "\u2190": "<-", "\u2192": "->", "\u2194": "<->", "\u21d2": "=>", "\u2264": "<=", "\u2265": ">=", "\u2260": "!=",
    "\u00d7": "x", "\u00f7": "/", "\u00b1": "+/-", "\u00b0": " deg", "\u00a9": "(c)", "\u00ae": "(R)",
    "\u2122": "(TM)", "\u00df": "ss", "\u00e6": "ae", "\u00c6": "AE", "\u0153": "oe", "\u0152": "OE",
    "\u00f8": "o", "\u00d8": "O", "\u0142": "l", "\u0141": "L", "\u0111": "d", "\u0110": "D", "\u00fe": "th",
    "\u2605": "*", "\u2606": "*", "\u2713": "[ok]", "\u2714": "[ok]", "\u2705": "[ok]", "\u2717": "[x]",
    "\u2718": "[x]", "\u274c": "[x]", "\u26a0": "[!]", "\u2757": "[!]", "\u2139": "[i]", "\U0001f4cc": "[pin]",
    "\U0001f9e0": "[memory]", "\U0001f512": "[lock]", "\U0001f680": "[launch]", "\U0001f44d": "[+1]",
    "\U0001f44e": "[-1]", "\U0001f600": ":)", "\U0001f642": ":)", "\U0001f641": ":(", "\u263a": ":)",
    "\u2639": ":(", "\U0001f525": "[fire]", "\U0001f4a1": "[idea]", "\U0001f50d": "[search]",
}  # fmt: skip


def nearest_ascii(char: str) -> str:
    """The nearest ASCII for one character: the table above, else its letters without accents, else `?`."""
    if char in NEAREST:
        return NEAREST[char]
    category = unicodedata.category(char)
    if category in ("Mn", "Me", "Cf") or char in "\ufe0e\ufe0f":
        return ""  # combining marks, variation selectors, zero-width characters: nothing to show
    if category == "Zs":
        return " "
    plain = "".join(c for c in unicodedata.normalize("NFKD", char) if c.isascii() and c.isprintable())
    return plain or "?"


def _replace(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(nearest_ascii(char) for char in text), error.end


codecs.register_error(ERRORS, _replace)


def ascii_only(stream: TextIO) -> bool:
    """Whether `stream` takes only ASCII: its encoding is ASCII, or the locale is C / POSIX."""
    encoding = codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name
    return encoding == "ascii" or c_locale()


def fit_streams() -> None:
    """Make standard output and error write the nearest ASCII on an ASCII-only terminal; never fail to encode."""
    for stream in (sys.stdout, sys.stderr):
        if stream not in (sys.__stdout__, sys.__stderr__) or not isinstance(stream, io.TextIOWrapper):
            continue  # a test's capture, or a stream someone replaced: left alone
        if ascii_only(stream):
            stream.reconfigure(encoding="ascii", errors=ERRORS)
        elif stream.errors == "strict":
            stream.reconfigure(errors=ERRORS)  # a Latin-1 terminal still gets the nearest for what it lacks


def close_quietly() -> None:
    """After the reader of standard output went away (`| head`): send what is left nowhere, so exit stays quiet."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
