"""The offline model: a deterministic stand-in for Claude that needs no key and no network.

`OfflineLLM` answers every purpose; the modules behind it read the request (text, topic, reading) and write each
kind of answer (voice for turns, consensus for the lead, lessons for reflections and proactive notes).
"""

from nightwatch.adapters.offline.llm import OfflineLLM

__all__ = ["OfflineLLM"]
