"""The all-MiniLM-L6-v2 forward pass in numpy: BERT encoder, mean pooling over real tokens, unit length.

Only numpy and safetensors: the weights are read once from model.safetensors and the sizes from config.json. Weights
are stored pre-transposed (so every projection is `x @ w`), the query, key and value projections are fused into one
matmul, and the attention scale is folded into the query weights. Everything stays float32.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from safetensors.numpy import load_file

from nightwatch.domain.errors import ConfigError
from nightwatch.domain.memory.ports import READING

Floats = NDArray[np.float32]
TokenIds = NDArray[np.int64]
Mask = NDArray[np.bool_]

_GELU_BLOCK = 1 << 16  # floats per GELU block: 256 KB, so each pass over it stays in the L2 cache
_SCORES_BLOCK = 1 << 17  # attention scores computed at once: 512 KB, so softmax's passes stay in the L2 cache
_MASKED = np.float32(-1e9)  # added to the attention scores of padding; exp() of it is 0
UNMATCHED = 0.5  # a word whose best cosine among the other text's words is under this found no partner
# Abramowitz & Stegun 7.1.26: erfc(z) ≈ t·P(t)·exp(-z²), t = 1/(1 + p·z), |error| ≤ 1.5e-7 for z ≥ 0.
_AS_P = 0.3275911
_AS_COEFFS = (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)  # highest power first


@dataclass(frozen=True)
class BertConfig:
    """The sizes of a BERT encoder, as its config.json gives them."""

    hidden: int
    heads: int
    layers: int
    intermediate: int
    eps: float
    positions: int

    @classmethod
    def read(cls, path: Path) -> BertConfig:
        """Read config.json; only the absolute-position, erf-GELU BERT this module implements is accepted."""
        raw: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        if raw.get("hidden_act", "gelu") != "gelu" or raw.get("position_embedding_type", "absolute") != "absolute":
            raise ConfigError(f"{path} is not a BERT with GELU and absolute positions; use all-MiniLM-L6-v2's files.")
        return cls(
            hidden=int(raw["hidden_size"]),
            heads=int(raw["num_attention_heads"]),
            layers=int(raw["num_hidden_layers"]),
            intermediate=int(raw["intermediate_size"]),
            eps=float(raw["layer_norm_eps"]),
            positions=int(raw["max_position_embeddings"]),
        )


@dataclass(frozen=True)
class Layer:
    """One transformer block's weights, each projection as (inputs, outputs)."""

    qkv: Floats
    qkv_bias: Floats
    out: Floats
    out_bias: Floats
    norm1: Floats
    norm1_bias: Floats
    up: Floats
    up_bias: Floats
    down: Floats
    down_bias: Floats
    norm2: Floats
    norm2_bias: Floats


@dataclass(frozen=True)
class Bert:
    """A BERT encoder whose `pooled` gives one unit vector per padded row of token ids."""

    config: BertConfig
    words: Floats
    positions: Floats  # position embeddings plus the token-type-0 embedding, which every single text uses
    second: Floats  # the token-type-1 embedding less token-type 0's: what a pair's second text adds to its words
    norm: Floats
    norm_bias: Floats
    layers: tuple[Layer, ...]

    @classmethod
    def load(cls, folder: Path) -> Bert:
        """Read config.json and model.safetensors from a folder."""
        config = BertConfig.read(folder / "config.json")
        stored = {name.removeprefix("bert."): value for name, value in load_file(folder / "model.safetensors").items()}
        scale = 1.0 / math.sqrt(config.hidden // config.heads)
        layers = tuple(_layer(stored, f"encoder.layer.{i}.", scale) for i in range(config.layers))
        types = stored["embeddings.token_type_embeddings.weight"]
        if any(layer.up.shape != (config.hidden, config.intermediate) for layer in layers):
            raise ConfigError(f"The weights in {folder} do not have the sizes its config.json gives.")
        return cls(
            config=config,
            words=_f32(stored["embeddings.word_embeddings.weight"]),
            positions=_f32(stored["embeddings.position_embeddings.weight"] + types[0]),
            second=_f32(types[1] - types[0]),
            norm=_f32(stored["embeddings.LayerNorm.weight"]),
            norm_bias=_f32(stored["embeddings.LayerNorm.bias"]),
            layers=layers,
        )

    def pooled(self, ids: TokenIds, mask: Mask) -> Floats:
        """Unit-length mean of the last hidden states over the unmasked tokens of each row."""
        rows, length = ids.shape
        x = self.words[ids]
        x += self.positions[:length]
        x = x.reshape(rows * length, -1)
        _layer_norm(x, self.norm, self.norm_bias, self.config.eps)
        scores_bias = np.where(mask, np.float32(0), _MASKED)[:, None, None, :]
        for layer in self.layers:
            x = self._block(x, layer, rows, scores_bias)
        return _unit_mean(x.reshape(rows, length, -1), mask)

    def aligned(self, first: list[int], second: list[int]) -> Floats:
        """How well the words of two texts find each other when read as one pair ([CLS] first [SEP] second [SEP]).

        Seven figures (`READING`): of each word's best cosine among the other text's words, the mean and the least,
        first to second and back; the share of words whose best is under `UNMATCHED`, both ways; and the cosine of
        what the two texts say apart (each text's word states weighted by how badly they found a partner)."""
        ids = np.asarray([*first, *second[1:]], dtype=np.int64)  # the second text's [CLS] is dropped
        x = self.words[ids] + self.positions[: len(ids)]
        x[len(first) :] += self.second
        _layer_norm(x, self.norm, self.norm_bias, self.config.eps)
        everything = np.zeros((1, 1, 1, len(ids)), dtype=np.float32)
        for layer in self.layers:
            x = self._block(x, layer, 1, everything)
        mine, theirs = x[1 : len(first) - 1], x[len(first) : -1]
        if not len(mine) or not len(theirs):
            return np.zeros(READING, dtype=np.float32)
        best = _unit_rows(mine) @ _unit_rows(theirs).T
        there, back = best.max(1), best.max(0)
        apart = _unit_rows(np.stack([(1.0 - there) @ mine, (1.0 - back) @ theirs]))
        return np.array(
            [there.mean(), back.mean(), there.min(), back.min(), (there < UNMATCHED).mean(),
             (back < UNMATCHED).mean(), apart[0] @ apart[1]],
            np.float32,
        )  # fmt: skip

    def _block(self, x: Floats, layer: Layer, rows: int, scores_bias: Floats) -> Floats:
        x += self._attention(x, layer, rows, scores_bias)
        _layer_norm(x, layer.norm1, layer.norm1_bias, self.config.eps)
        inner = x @ layer.up
        inner += layer.up_bias
        _gelu(inner)
        x += inner @ layer.down
        x += layer.down_bias
        _layer_norm(x, layer.norm2, layer.norm2_bias, self.config.eps)
        return x

    def _attention(self, x: Floats, layer: Layer, rows: int, scores_bias: Floats) -> Floats:
        heads, tokens = self.config.heads, x.shape[0]
        qkv = x @ layer.qkv
        qkv += layer.qkv_bias
        # (rows, length, 3, heads, size) viewed as (3, rows, heads, length, size): no copy, BLAS takes the strides.
        q, k, v = qkv.reshape(rows, tokens // rows, 3, heads, -1).transpose(2, 0, 3, 1, 4)
        context = _attend(q, k, v, scores_bias).transpose(0, 2, 1, 3).reshape(tokens, -1)
        out: Floats = context @ layer.out
        out += layer.out_bias
        return out


def _attend(q: Floats, k: Floats, v: Floats, scores_bias: Floats) -> Floats:
    """softmax(q·kᵀ + bias)·v over (rows, heads, length, size), a few rows at a time so the scores stay in cache."""
    rows, heads, length, _size = q.shape
    step = max(1, _SCORES_BLOCK // (heads * length * length))
    context = np.empty(q.shape, dtype=np.float32)
    for start in range(0, rows, step):
        part = slice(start, start + step)
        scores = q[part] @ k[part].transpose(0, 1, 3, 2)
        scores += scores_bias[part]
        _softmax(scores)
        np.matmul(scores, v[part], out=context[part])
    return context


def _layer(stored: dict[str, NDArray[Any]], prefix: str, scale: float) -> Layer:
    def get(name: str) -> NDArray[Any]:
        return stored[prefix + name]

    qkv = np.concatenate(
        [
            get("attention.self.query.weight") * scale,
            get("attention.self.key.weight"),
            get("attention.self.value.weight"),
        ]
    )
    qkv_bias = np.concatenate(
        [get("attention.self.query.bias") * scale, get("attention.self.key.bias"), get("attention.self.value.bias")]
    )
    return Layer(
        qkv=_f32(qkv.T),
        qkv_bias=_f32(qkv_bias),
        out=_f32(get("attention.output.dense.weight").T),
        out_bias=_f32(get("attention.output.dense.bias")),
        norm1=_f32(get("attention.output.LayerNorm.weight")),
        norm1_bias=_f32(get("attention.output.LayerNorm.bias")),
        up=_f32(get("intermediate.dense.weight").T),
        up_bias=_f32(get("intermediate.dense.bias")),
        down=_f32(get("output.dense.weight").T),
        down_bias=_f32(get("output.dense.bias")),
        norm2=_f32(get("output.LayerNorm.weight")),
        norm2_bias=_f32(get("output.LayerNorm.bias")),
    )


def _unit_mean(states: Floats, mask: Mask) -> Floats:
    """Mean of each row's states over its real tokens (as sentence-transformers pools), scaled to length 1."""
    weights = mask.astype(np.float32)
    means: Floats = np.matmul(weights[:, None, :], states)[:, 0, :]
    means /= np.maximum(weights.sum(axis=1, keepdims=True), np.float32(1e-9))
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), np.float32(1e-12))
    return means


def _unit_rows(states: Floats) -> Floats:
    unit: Floats = states / np.maximum(np.linalg.norm(states, axis=1, keepdims=True), np.float32(1e-12))
    return unit


def _f32(value: NDArray[Any]) -> Floats:
    return np.ascontiguousarray(value, dtype=np.float32)


def _layer_norm(x: Floats, gain: Floats, bias: Floats, eps: float) -> None:
    """Normalise each row in place."""
    x -= x.mean(axis=1, keepdims=True)
    variance = np.einsum("ij,ij->i", x, x)[:, None] / np.float32(x.shape[1])
    x *= 1 / np.sqrt(variance + np.float32(eps))
    x *= gain
    x += bias


def _softmax(scores: Floats) -> None:
    """Softmax over the last axis, in place."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)


def _gelu(x: Floats) -> None:
    """GELU with erf, in place, a block of rows at a time: its ~20 passes then stay in the core's cache."""
    rows = max(1, _GELU_BLOCK // x.shape[1])
    for start in range(0, x.shape[0], rows):
        _gelu_block(x[start : start + rows])


def _gelu_block(x: Floats) -> None:
    """x·Φ(x) = relu(x) - |x|·Φ(-|x|), in place."""
    size = np.abs(x)
    tail = gaussian_tail(size)
    tail *= size
    np.maximum(x, 0, out=x)
    x -= tail


def gaussian_tail(a: Floats) -> Floats:
    """Φ(-a) = erfc(a/√2)/2 for a ≥ 0, within 3e-7 (A&S's 7.5e-8 plus float32 rounding)."""
    t = a * np.float32(_AS_P / math.sqrt(2))
    t += 1
    np.reciprocal(t, out=t)
    poly = t * np.float32(_AS_COEFFS[0] / 2)
    for coeff in _AS_COEFFS[1:]:
        poly += np.float32(coeff / 2)
        poly *= t
    square = a * a
    square *= np.float32(-0.5)
    np.exp(square, out=square)
    poly *= square
    return poly
