"""BERT's uncased WordPiece tokenizer, as all-MiniLM-L6-v2's tokenizer.json describes it, in plain Python.

It gives the same ids as Hugging Face `tokenizers` for this model (tests/adapters/encoder/test_wordpiece.py compares
them when that library is installed) without its dependencies, which include a client for the Hugging Face Hub: Night
Watch never downloads a model. The steps are BERT's: clean the text (control characters out, every white space a space),
put spaces around CJK ideographs, strip accents, lower-case; split on white space and on each punctuation character;
then greedy longest-match word pieces ("##" marks a continuation), a word of over 100 characters or with no match being
[UNK]; [CLS] first and [SEP] last, truncated to `max_tokens` with both kept.
"""

from __future__ import annotations

import json
import unicodedata
from functools import lru_cache
from pathlib import Path

_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


class WordPiece:
    """Text to token ids for one vocabulary."""

    def __init__(self, vocabulary: dict[str, int], *, max_tokens: int = 256, max_word_chars: int = 100) -> None:
        self._vocabulary = vocabulary
        self._max_tokens = max_tokens
        self._max_word_chars = max_word_chars
        self._unknown = vocabulary["[UNK]"]
        self._first = vocabulary["[CLS]"]
        self._last = vocabulary["[SEP]"]
        self._pieces = lru_cache(maxsize=65536)(self._word_pieces)

    @classmethod
    def from_file(cls, path: Path, *, max_tokens: int = 256) -> WordPiece:
        """Read the vocabulary and the word length limit from a tokenizer.json."""
        model = json.loads(path.read_text(encoding="utf-8"))["model"]
        return cls(model["vocab"], max_tokens=max_tokens, max_word_chars=model.get("max_input_chars_per_word", 100))

    def encode(self, text: str) -> list[int]:
        """[CLS], the word pieces of `text`, [SEP]: at most `max_tokens` ids."""
        ids = [self._first]
        room = self._max_tokens - 2
        for word in _words(_normalise(text)):
            ids.extend(self._pieces(word))
            if len(ids) > room:
                break
        return [*ids[: room + 1], self._last]

    def _word_pieces(self, word: str) -> tuple[int, ...]:
        if len(word) > self._max_word_chars:
            return (self._unknown,)
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else f"##{word[start:end]}"
                found = self._vocabulary.get(piece)
                if found is not None:
                    pieces.append(found)
                    break
                end -= 1
            else:
                return (self._unknown,)
            start = end
        return tuple(pieces)


def _normalise(text: str) -> str:
    """Clean, space out CJK ideographs, strip accents, lower-case."""
    kept = []
    for char in text:
        code = ord(char)
        if code in (0, 0xFFFD) or _is_control(char):
            continue
        if _is_whitespace(char):
            kept.append(" ")
        elif any(low <= code <= high for low, high in _CJK):
            kept.append(f" {char} ")
        else:
            kept.append(char)
    decomposed = unicodedata.normalize("NFD", "".join(kept))
    return "".join(char for char in decomposed if unicodedata.category(char) != "Mn").lower()


def _words(text: str) -> list[str]:
    """Split on white space, and around every punctuation character."""
    words: list[str] = []
    for chunk in text.split():
        current = ""
        for char in chunk:
            if _is_punctuation(char):
                if current:
                    words.append(current)
                    current = ""
                words.append(char)
            else:
                current += char
        if current:
            words.append(current)
    return words


def _is_whitespace(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
    return char not in "\t\n\r" and unicodedata.category(char).startswith("C")


def _is_punctuation(char: str) -> bool:
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")
