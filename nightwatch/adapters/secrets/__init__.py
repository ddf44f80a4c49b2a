"""The one redaction step: secrets taken out of text before it is stored, logged or sent to a model."""
