"""The offline model: a deterministic stand-in for Claude that needs no key and no network.

`OfflineLLM` answers every purpose; the modules behind it read the request (text, topic, reading) and write each
kind of answer (voice for turns, consensus for the lead, lessons for reflections, extraction and proactive notes);
`category_for` is how it gives a lesson its category.
"""

from nightwatch.adapters.offline.categories import category_for
from nightwatch.adapters.offline.llm import OfflineLLM

__all__ = ["OfflineLLM", "category_for"]
