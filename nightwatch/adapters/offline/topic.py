"""How the offline model names a topic in a sentence: the topic's own phrase, as a clean noun phrase.

"Should we add rate limiting to the login endpoint?" reads as "rate limiting on the login endpoint" (what is
discussed) about "the login endpoint" (what changes); "Migrate the sessions table to PostgreSQL 16" as "migrating
the sessions table to PostgreSQL 16" about "the sessions table"; "Flaky checkout test in CI" as "the flaky checkout
test in CI" about "the flaky checkout test". Plain string work, so the same topic always reads the same way.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

MAX_WORDS = 12
SHORT_WORDS = 8
FALLBACK = "this proposal"
FALLBACK_SUBJECT = "this area"

# Openings that ask for a decision rather than name the subject ("Should we ...", "Let's ...", "Maya: ...").
_ADDRESS = re.compile(r"^(?:@?[A-Z][\w-]*(?:\s*(?:,|&|\band\b)\s*@?[A-Z][\w-]*)*\s*[,:]\s+)+")
_LEAD_IN = re.compile(
    r"^(?:(?:should|shall|can|could|would|must)\s+we\s+(?:(?:really|now|also|still|finally|just)\s+)?"
    r"|(?:do|does)\s+(?:we|it)\s+(?:really\s+)?(?:need|want)\s+(?:to\s+)?"
    r"|is\s+it\s+(?:time|worth\s+it|worth)\s+(?:to\s+)?"
    r"|let'?s\s+|let\s+us\s+|please\s+|why\s+not\s+"
    r"|we\s+(?:should|must|could|need\s+to|want\s+to)\s+"
    r"|i\s+(?:want|propose|suggest)\s+(?:to\s+|that\s+we\s+|we\s+)?"
    r"|(?:proposal|rfc|idea|question|plan)\s*:\s*)",
    re.IGNORECASE,
)
# A verb that opens a proposed change, and its -ing form.
_GERUNDS = dict(
    pair.split(":", 1)
    for pair in """add:adding introduce:introducing enable:enabling disable:disabling migrate:migrating
        move:moving upgrade:upgrading downgrade:downgrading bump:bumping rename:renaming remove:removing
        delete:deleting drop:dropping replace:replacing switch:switching store:storing cache:caching
        split:splitting merge:merging rewrite:rewriting refactor:refactoring deprecate:deprecating
        rotate:rotating fix:fixing use:using adopt:adopting build:building ship:shipping release:releasing
        deploy:deploying revert:reverting support:supporting allow:allowing expose:exposing log:logging
        encrypt:encrypting limit:limiting change:changing update:updating make:making run:running put:putting
        set:setting stop:stopping start:starting keep:keeping turn:turning convert:converting extract:extracting
        implement:implementing require:requiring retire:retiring archive:archiving cut:cutting pin:pinning
        host:hosting send:sending apply:applying patch:patching publish:publishing schedule:scheduling
        quarantine:quarantining skip:skipping disallow:disallowing reduce:reducing raise:raising
        increase:increasing lower:lowering test:testing document:documenting automate:automating
        containerize:containerizing shard:sharding index:indexing backfill:backfilling""".split()
)
# Verbs whose object is what is added: "add X to Y" is about X on Y, and what changes is Y.
_ADDING = frozenset({"add", "introduce", "enable", "put", "apply"})
_PREPOSITION = re.compile(
    r"\s+\b(to|into|in|on|for|after|from|with|instead|behind|across|at|by|via|before|without)\b\s+"
)
_DETERMINERS = frozenset("the a an our this that these those my your its their some any every each no all".split())
_ADJECTIVE_ENDINGS = ("y", "ed", "al", "ous", "ive", "ful", "less", "ble", "ic", "ary", "ory")
# "CI is slow", "The nightly build keeps failing": a statement, read as "CI being slow".
_CLAUSE = re.compile(r"^(.+?)\s+(is|are|keeps|keep)\s+(.+)$", re.IGNORECASE)
_QUESTION_WORDS = frozenset(
    "is are was were does do did can could should will would what why how which who when where".split()
)
# Topics that touch what outlives the code (data, names, public contracts): one-way doors, in a tech lead's words.
_ONE_WAY = re.compile(
    r"\b(migrat\w*|schema\w*|tables?|databases?|columns?|public|apis?|renam\w*|delet\w*|drop\w*|remov\w*|"
    r"deprecat\w*|data model\w*|retir\w*)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class TopicPhrase:
    """A topic as words for a sentence: what is discussed, what it changes, and whether it is a proposed change."""

    phrase: str  # "rate limiting on the login endpoint"
    subject: str  # "the login endpoint"
    is_change: bool  # the topic proposes an action (a verb opens it)
    one_way: bool  # it touches data, names or public contracts
    text: str = ""  # the topic as written

    @property
    def short(self) -> str:
        """The phrase when it is short, else "this change" (or what it is about), for a sentence that says more."""
        if len(self.phrase.split()) <= SHORT_WORDS:
            return self.phrase
        return "this change" if self.is_change else self.subject

    @property
    def proposal(self) -> str:
        """What goes ahead when the team agrees: the change itself, or the plan for a topic that is not one."""
        return self.phrase if self.is_change or self.phrase == FALLBACK else f"the plan for {self.phrase}"


def topic_phrase(topic: str) -> TopicPhrase:
    """Read `topic` as a noun phrase (see the module docstring); FALLBACK when it is a question it cannot turn."""
    return replace(_read(topic), text=topic)


def _read(topic: str) -> TopicPhrase:
    text = _core(topic)
    words = text.split()
    if not words or words[0].lower() in _QUESTION_WORDS:
        return TopicPhrase(FALLBACK, FALLBACK_SUBJECT, False, bool(_ONE_WAY.search(topic)))
    verb = words[0].lower()
    one_way = bool(_ONE_WAY.search(text))
    if verb in _GERUNDS and len(words) > 1:
        rest = " ".join(words[1:])
        obj, preposition, target = _split_at_preposition(rest)
        if verb in _ADDING and target:
            joined = {"to": "on", "into": "in"}.get(preposition, preposition)
            return TopicPhrase(_clip(f"{obj} {joined} {target}"), target, True, one_way)
        phrase = _clip(f"{_GERUNDS[verb]} {rest}")
        return TopicPhrase(phrase, obj or rest, True, one_way)
    clause = _CLAUSE.match(text)
    if clause:
        subject = _with_article(clause.group(1))
        being = "being " if clause.group(2).lower() in ("is", "are") else ""  # "keeps failing" -> "failing"
        return TopicPhrase(_clip(f"{subject} {being}{clause.group(3)}"), _clip(subject), False, one_way)
    noun = _with_article(text)
    obj, _, _ = _split_at_preposition(noun)
    return TopicPhrase(_clip(noun), _clip(obj or noun), False, one_way)


def capitalised(text: str) -> str:
    """`text` with its first letter in upper case (for a sentence that starts with a phrase)."""
    return text[:1].upper() + text[1:]


def _core(topic: str) -> str:
    """The topic without addressing, lead-ins, trailing punctuation or a lowered-case-able first capital."""
    text = " ".join(topic.split()).strip()
    text = _ADDRESS.sub("", text)
    for _ in range(2):  # "Maya: should we ..." and "Let's please ..." both come in two layers at most
        text = _LEAD_IN.sub("", text).strip()
    text = text.rstrip(" ?!.;:")
    first, _, rest = text.partition(" ")
    if first.lower() in _GERUNDS or first.lower() in _DETERMINERS:
        first = first.lower()
    return f"{first} {rest}".strip()


def _split_at_preposition(text: str) -> tuple[str, str, str]:
    """(object, preposition, target): "rate limiting to the login endpoint" -> ("rate limiting", "to", ...)."""
    found = _PREPOSITION.search(text)
    if not found:
        return text, "", ""
    return text[: found.start()].strip(), found.group(1).lower(), text[found.end() :].strip()


def _with_article(text: str) -> str:
    """`text` with "the" in front when it reads as a common noun phrase ("flaky checkout test", not "Redis")."""
    first, _, rest = text.partition(" ")
    lowered = first.lower()
    if lowered.endswith("ing") or lowered in _DETERMINERS:
        return f"{lowered} {rest}".strip()
    head, _, _ = _split_at_preposition(text)
    common = first.isalpha() and first[1:].islower()
    if common and (len(head.split()) >= 2 or lowered.endswith(_ADJECTIVE_ENDINGS)):
        return f"the {lowered} {rest}".strip()
    return text


def _clip(text: str) -> str:
    words = text.split()
    return " ".join(words[:MAX_WORDS]) + ("…" if len(words) > MAX_WORDS else "")
