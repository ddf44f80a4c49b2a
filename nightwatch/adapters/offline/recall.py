"""When the offline model looks something up: a persona asked about the past recalls from its memory first.

A topic asks about the past when it says so in words a person would use ("last time", "did we ever", "what did we
decide", "previously", "remember when", "have we seen this before?"; `asks_about_the_past`). Then the first call of a
persona's round-1 turn that offers `memory_recall` answers with that call alone, its query the topic without those
words (`recall_query`); the next call, which carries the lessons found, answers in the persona's voice led by
"From memory: <the best match>." (or by saying nothing was noted). It never calls `remember`: reflection records
what a deliberation taught. Plain string work, so the same topic always recalls the same way.
"""

from __future__ import annotations

import re

from nightwatch.adapters.offline.text import MARK, clip, round_number, sentence, unmark
from nightwatch.domain.llm import LLMRequest, Purpose
from nightwatch.domain.memory import QUERY_MAX, RECALL_TOOL
from nightwatch.domain.tool_use import ToolCall

CALL_ID = "offline-recall-1"
QUOTE_WORDS = 25
MAX_WORDS = 110  # the voice's own cap, and room for the sentence from memory

_PAST = re.compile(
    r"""\b(?:
        what\s+(?:did|have)\s+we\s+(?:(?:ever|already|finally)\s+)?(?:decide|agree|say|choose|pick|settle|do|conclude)d?
      | what\s+was\s+(?:decided|agreed|concluded)
      | (?:did|have)\s+we\s+(?:ever|already|once|previously)
      | (?:did|have)\s+we\s+(?:decide|agree|settle|discuss|try|tri)\w*
      | (?:the\s+)?last\s+(?:time|week|month|quarter|sprint|year|release|incident|outage)
      | previously | in\s+the\s+past | earlier\s+on
      | (?:do\s+(?:you|we)\s+)?remember\s+(?:when|what|how|why|the)
      | (?:seen|done|tried|had|hit|discussed|decided|used)\s+(?:this|that|it|something\s+like\s+(?:this|that))\s+before
      | before\s*[?.!]*\s*$
    )""",
    re.IGNORECASE | re.VERBOSE,
)
_WORD = re.compile(r"[\w@#%+./:'-]+")
# Words left at either end of a topic once its look back is taken out, which say nothing about what to look for.
_FILLER = frozenset(
    """what which when why how who did do does have has had was were is are we you i our us about on regarding re
    with for of to ever already once again there any anything decide decided agree agreed say said choose chose
    pick picked settle settled do done discuss discussed try tried conclude concluded seen and or so then""".split()
)
_FOUND = re.compile(r"^- \[([0-9a-f]{8})\] (.+)$")


def asks_about_the_past(topic: str) -> bool:
    """True when the topic asks what happened, was decided or was tried before."""
    return bool(_PAST.search(topic))


def recall_query(topic: str) -> str:
    """What to search memory for: the topic without its look back and the filler words around it."""
    words = _WORD.findall(_PAST.sub(" ", topic))
    words = [word.strip(".,;:!?'\"") for word in words]
    words = [word for word in words if word]
    while words and words[0].lower() in _FILLER:
        words.pop(0)
    while words and words[-1].lower() in _FILLER:
        words.pop()
    query = " ".join(words) or " ".join(topic.split())
    return query[:QUERY_MAX].strip()


def recall_call(request: LLMRequest) -> ToolCall | None:
    """The `memory_recall` call this request should get instead of an answer, or None (see the module docstring)."""
    offered = any(tool.name == RECALL_TOOL for tool in request.tools)
    first_call = not request.tool_rounds and not request.answer_now
    if request.purpose is not Purpose.TURN or request.persona is None or not offered or not first_call:
        return None
    if round_number(request) > 1 or not asks_about_the_past(request.topic):
        return None
    return ToolCall(CALL_ID, RECALL_TOOL, {"query": recall_query(request.topic)})


def recalled(request: LLMRequest) -> tuple[str, list[str]] | None:
    """The query and the lessons (best first) of the recall this request reports back; None when it made none."""
    for round_ in request.tool_rounds:
        for call, result in zip(round_.calls, round_.results, strict=False):
            if call.name == RECALL_TOOL and not result.is_error:
                lessons = [unmark(m.group(2)) for line in result.content.splitlines() if (m := _FOUND.match(line))]
                return str(call.input.get("query", "")), lessons
    return None


def from_memory(query: str, lessons: list[str], said: str) -> str:
    """The turn `said` (or SKIP), led by the best lesson recalled, or by saying that nothing was noted on it."""
    if lessons:
        lead = sentence(f"From memory: {clip(lessons[0], QUOTE_WORDS)}")
    else:
        lead = f"From memory: nothing noted on {clip(query, 8)} yet."
    rest = "" if said.strip() == "SKIP" else unmark(said)
    text = f"{MARK} {lead} {rest}".strip()
    return text if len(text.split()) <= MAX_WORDS else clip(text, MAX_WORDS)
