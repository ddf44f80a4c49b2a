"""The sentence encoder: all-MiniLM-L6-v2 in numpy, with its WordPiece tokenizer."""
