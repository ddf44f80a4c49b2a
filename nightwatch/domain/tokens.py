"""A conservative token estimate for budgets, without a provider tokenizer.

Claude-family tokenizers spend roughly one token per short English word, more on long words, digits, punctuation
and non-ASCII text. We count pieces the way a BPE tokenizer splits them, take the larger of that and characters/4,
and add a safety margin, so an estimate errs high: a block packed to a budget stays under it when the provider counts.
"""

from __future__ import annotations

import math
import re

_PIECES = re.compile(r"[A-Za-z]+|[0-9]{1,3}|[^\sA-Za-z0-9]")
_MARGIN = 1.1


def estimate_tokens(text: str) -> int:
    """Return an upper-leaning estimate of how many tokens `text` costs in a prompt."""
    if not text:
        return 0
    count = 0
    for piece in _PIECES.findall(text):
        if not piece.isascii():
            count += len(piece.encode("utf-8"))  # a non-ASCII char may cost a token per byte
        elif piece.isalpha():
            count += 1 if len(piece) <= 6 else math.ceil(len(piece) / 4)
        else:
            count += 1
    count += text.count("\n")
    # Prose of short common words can tokenise denser than one per word; never go under the characters/4 rule.
    count = max(count, math.ceil(len(text) / 4))
    return math.ceil(count * _MARGIN)
