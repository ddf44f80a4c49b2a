"""Our WordPiece gives the ids Hugging Face `tokenizers` gives for all-MiniLM-L6-v2 (a dev-only reference)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from nightwatch.adapters.encoder import embeddings
from nightwatch.adapters.encoder.wordpiece import WordPiece

pytestmark = pytest.mark.skipif(not embeddings.available(), reason="the all-MiniLM-L6-v2 package is not installed")
PERSONA_SET = Path(__file__).resolve().parents[3] / "bench" / "data" / "persona_lessons.jsonl"
ODD = "aé Ü中文\t\n\r\x00\ufffd\u200b\u2028\u2029\x85\x1c\u00a0\u3000!?¿¡—–…«»“”‘’$+<=>^`|~€£©®™\u0301\u0308ﬁßİı😀Ωж"


@pytest.fixture(scope="module")
def ours() -> WordPiece:
    return WordPiece.from_file(embeddings.model_path() / "tokenizer.json", max_tokens=256)


def texts() -> list[str]:
    found = []
    for line in PERSONA_SET.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        found += [memory["text"] for memory in case["memories"]] + [query["text"] for query in case["queries"]]
    rng = random.Random(20261123)
    found += ["".join(rng.choice(ODD + "abcdefghij klm") for _ in range(rng.randint(1, 60))) for _ in range(1500)]
    return [*found, "x" * 300, " ".join(["word"] * 400), "a" * 101 + " b", "", "   "]


def test_the_ids_match_hugging_face_tokenizers(ours: WordPiece) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    reference = tokenizers.Tokenizer.from_file(str(embeddings.model_path() / "tokenizer.json"))
    reference.enable_truncation(max_length=256)
    reference.no_padding()
    mismatched = [text for text in texts() if reference.encode(text).ids != ours.encode(text)]
    assert mismatched == []


def test_known_pieces(ours: WordPiece) -> None:
    vocabulary = json.loads((embeddings.model_path() / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    piece = {number: text for text, number in vocabulary.items()}
    assert [piece[i] for i in ours.encode("Don't log tokens, ever!")] == [
        *("[CLS]", "don", "'", "t", "log", "token", "##s", ",", "ever", "!", "[SEP]")
    ]
    assert [piece[i] for i in ours.encode("Idempotency")] == ["[CLS]", "id", "##em", "##pot", "##ency", "[SEP]"]
    assert [piece[i] for i in ours.encode("x" * 101)] == ["[CLS]", "[UNK]", "[SEP]"]  # a word too long


def test_a_long_text_is_cut_to_the_limit_with_its_end_marker(ours: WordPiece) -> None:
    ids = ours.encode(" ".join(["deploy"] * 1000))
    assert len(ids) == 256
    assert ids[-1] == 102
