"""The sentence encoder: all-MiniLM-L6-v2 in numpy, with its WordPiece tokenizer."""

from nightwatch.adapters.encoder.embeddings import MiniLMEncoder

__all__ = [
    "MiniLMEncoder",
]
