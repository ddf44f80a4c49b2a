"""What a lesson says: its subject words, and the specifics two lessons must share to say the same thing.

Specifics are numbers (a unit glued on or not: "300ms" and "300 ms" are one value), dates, versions, weekdays and
months, file and component names, and decisions (approve vs reject, enable vs disable, always vs never, do vs do not).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import lru_cache

from nightwatch.domain.amounts import SMALL_NUMBERS, amounts, dimension, replaced
from nightwatch.domain.memory.models import OFFLINE_MARK
from nightwatch.domain.recall import stem
from nightwatch.domain.sides import other_sides

_TOKEN = re.compile(r"`[^`]+`|v?\d+(?:[.\-/:]\d+)*[a-z%]*|[A-Za-z_][A-Za-z0-9_]*(?:[-./:][A-Za-z0-9_]+)*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]")
_ACRONYMS = re.compile(r"^[A-Z]{2,}s$")  # PRs, APIs: plural acronyms, not identifiers
_PLURAL_NAME = re.compile(r"^[a-z]+\d+s$")  # "A100s" are A100 cards: one name
# A kebab-case word is a component's name when it ends like one (charge-api, cart-service); else it is prose.
_COMPONENT_ENDS = frozenset(
    "api apis app bot cli client cluster console db gateway job proxy queue server service svc ui web worker".split()
)
_PREFIXES = frozenset("anti co cross inter intra mid multi non per post pre re self sub".split())
_NUMBER_WORDS = {word: str(n) for word, n in SMALL_NUMBERS.items() if word != "one"}  # "the one" is seldom a number
_FRAME = frozenset({"remind", "reminder", "note", "lesson", "learn", "rule", "exception", "fix", "again"})
# Short forms a paraphrase uses for the same word ("Max panels per string" / "Maximum panels per string"): one word
# in place, never another one exchanged for it. Not "min" (as often minutes) nor "temp" (temporary or temperature).
_SHORT = {
    "max": "maximum",
    "prod": "production",
    "info": "information",
    "config": "configuration",
    "repo": "repository",
}
_UNIT = re.compile(r"^v|[a-z%]+$")
_NOT = re.compile(r"n['’]t\b", re.IGNORECASE)

# Narrower than recall's stop words (keywords.STOP_WORDS): "together", "last", "next" or "whole" can be what a
# lesson is about, and two lessons that differ in them are not restatements.
_FUNCTION_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below between
    both but by ca can could did do does doing down during each either else etc even ever every few for from further
    had has have having he her here hers him his how i if in into is it its itself just let lets may me might more
    most much must my myself nor now of off on once one only or other our ours out over own per same sha she should
    so some such than that the their them then there these they this those through thus to too under until up upon
    us very via was we were what when where which while who whom whose why will with wo would yet you your""".split()
)
_WEEKDAYS_MONTHS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
    september october november december""".split()
)
_NEGATORS = frozenset({"not", "no", "never", "cannot", "avoid", "without", "stop"})
_AXES = {
    "approve": ("approve", "approved", "approves", "approving", "accept", "accepted", "accepts"),
    "-approve": ("reject", "rejected", "rejects", "rejecting", "decline", "declined", "declines"),
    "enable": ("enable", "enabled", "enables", "enabling"),
    "-enable": ("disable", "disabled", "disables", "disabling"),
    "always": ("always",),
    "-always": ("never",),
    "allow": ("allow", "allowed", "allows", "permit", "permitted", "permits"),
    "-allow": ("deny", "denied", "denies", "block", "blocked", "blocks", "forbid", "forbidden", "ban", "banned"),
    "include": ("include", "included", "includes", "add", "added", "adds"),
    "-include": ("exclude", "excluded", "excludes", "remove", "removed", "removes", "drop", "dropped"),
    "raise": ("increase", "increased", "increases", "raise", "raised", "raises"),
    "-raise": ("decrease", "decreased", "decreases", "reduce", "reduced", "reduces", "lower", "lowered", "lowers"),
    "pass": ("pass", "passed", "passes", "passing", "works", "fixed", "stable"),
    "-pass": ("fail", "failed", "fails", "failing", "broken", "breaks", "flaky"),
    "require": ("require", "required", "requires", "mandatory"),
    "-require": ("optional",),
    "true": ("true", "yes"),
    "-true": ("false",),
}
_POLARITY = {word: axis for axis, words in _AXES.items() for word in words}


@dataclass(frozen=True)
class Features:
    """What a lesson says, split into its subject words and the specifics that must match for a restatement."""

    words: frozenset[str]
    values: frozenset[str]
    names: frozenset[str]
    decisions: frozenset[str]
    negated: bool


def _tokens(text: str) -> list[str]:
    """The tokens of a lesson, "n't" read as "not"; the offline model's mark is not a word of what it says."""
    return _TOKEN.findall(_NOT.sub(" not", text.replace(OFFLINE_MARK, " ").replace("’", "'")))


@lru_cache(maxsize=65536)
def features(text: str) -> Features:
    """Split a lesson into content words (stemmed), values, names, decision words and negation."""
    words, values, names, decisions = set[str](), set[str](), set[str](), set[str]()
    negations = 0
    for token in _tokens(text):
        lower = token.lower().strip("`")
        numeric = lower[:1].isdigit() or (lower[:1] == "v" and lower[1:2].isdigit())
        if numeric:  # "42", "v2.3", "300ms": the number is the value, a unit or a "v" around it is not
            values.add(_UNIT.sub("", lower))
        elif "-" in lower and not token.startswith("`") and not _is_component(lower) and not _PATH_MARK.search(lower):
            _prose(lower.split("-"), words, decisions)  # read-only, hand-rolled: words, not a name
        elif _is_name(token, lower):
            names.add(lower[:-1] if _PLURAL_NAME.match(lower) else lower)
        elif lower in _NUMBER_WORDS:
            values.add(_NUMBER_WORDS[lower])
        elif _is_date(token, lower):
            values.add(lower.rstrip("s"))
        else:
            negations += lower in _NEGATORS
            if lower in _POLARITY:
                decisions.add(_POLARITY[lower])
            elif lower not in _FUNCTION_WORDS and lower not in _NEGATORS:
                words.add(stem(lower))
    return Features(frozenset(words), frozenset(values), frozenset(names), frozenset(decisions), negations % 2 == 1)


@lru_cache(maxsize=65536)
def subject_tokens(text: str) -> tuple[str, ...]:
    """A lesson's content words and names in order, stemmed, with every number, weekday and month as "#" (a changed
    number or date is not another subject), for aligning two lessons word by word."""
    out: list[str] = []
    for token in _tokens(text):
        lower = token.lower().strip("`")
        numeric = lower[:1].isdigit() or (lower[:1] == "v" and lower[1:2].isdigit()) or lower in _NUMBER_WORDS
        if numeric or _is_date(token, lower):
            out.append("#")
        elif len(token) > 1 and token.isupper() and lower in _FUNCTION_WORDS:
            out.append(lower)  # "US", "IT": a region or a team, not "us" or "it"
        elif lower not in _FUNCTION_WORDS and lower not in _NEGATORS and lower not in _POLARITY:
            lower = _SHORT.get(lower, lower)
            out.append(stem(lower) if _TOKEN_WORD.match(lower) else lower)
    return tuple(out)


_TOKEN_WORD = re.compile(r"^[a-z]+$")
_PATH_MARK = re.compile(r"[./_:]")  # "routes/resolve-partial", "k8s-upgrade.md": a name, hyphen and all


def _is_date(token: str, lower: str) -> bool:
    """A weekday or a month ("Tuesdays", "March"; "May" only with its capital)."""
    return lower.rstrip("s") in _WEEKDAYS_MONTHS and (lower != "may" or token[0] == "M")


@lru_cache(maxsize=65536)
def token_opcodes(a: str, b: str) -> tuple[tuple[str, int, int, int, int], ...]:
    """How the two lessons' `subject_tokens` line up in order (difflib's opcodes): read once per pair, by curation's
    test for another subject and the judge's for words exchanged in place."""
    return tuple(SequenceMatcher(None, subject_tokens(a), subject_tokens(b), autojunk=False).get_opcodes())


def exchanged(a: str, b: str) -> bool:
    """A subject word (not a number) of one has another or none in its place in the other: "for captains" / "for
    cabin crew", "Admin passwords" / "Passwords"."""
    mine, theirs, ops = subject_tokens(a), subject_tokens(b), token_opcodes(a, b)
    return any(tag != "equal" and (set(mine[i1:i2]) | set(theirs[j1:j2])) - {"#"} for tag, i1, i2, j1, j2 in ops)


def in_place(a: str, b: str) -> float:
    """The share of the two lessons' subject words that stand in place in both (1.0: one sentence)."""
    alike = sum(i2 - i1 for tag, i1, i2, _, _ in token_opcodes(a, b) if tag == "equal")
    return 2 * alike / max(len(subject_tokens(a)) + len(subject_tokens(b)), 1)


def flipped_in_place(a: str, b: str, share: float) -> bool:
    """One sentence (`share` of subject words in place) with a decision flipped: "Always pin ..." / "Never pin ...".
    A paraphrase that words a decision the other way round ("never trusted" / "always recalculated") rewords more."""
    return flips(features(a), features(b)) and in_place(a, b) >= share


def only_exchanged(a: str, b: str, most: int) -> bool:
    """The two are one sentence with words exchanged in place, one for one (up to `most` in all, in one place or in
    several: "EU keys stay in the Frankfurt HSM" / "Swiss keys stay in the Zurich HSM"), and nothing else changed."""
    changed = [op for op in token_opcodes(a, b) if op[0] != "equal"]
    if not changed or any(tag != "replace" or i2 - i1 != j2 - j1 for tag, i1, i2, j1, j2 in changed):
        return False
    return sum(i2 - i1 for _, i1, i2, _, _ in changed) <= most


def _is_component(kebab: str) -> bool:
    """cart-service, charge-api are components; cross-service, per-service are prose."""
    first, last = kebab.split("-", 1)[0], kebab.rsplit("-", 1)[1]
    return last in _COMPONENT_ENDS and first not in _PREFIXES


def _is_name(token: str, lower: str) -> bool:
    """File and component names: code, camelCase, dotted, snake_case, kebab-case components, words with digits."""
    if token.startswith("`") or any(mark in lower for mark in "./_:-") or any(c.isdigit() for c in lower):
        return True  # "service12", "ec2", "p95" are names
    return bool(_CAMEL.search(token)) and not _ACRONYMS.match(token)


def _prose(parts: list[str], words: set[str], decisions: set[str]) -> None:
    for part in parts:
        if part in _POLARITY:
            decisions.add(_POLARITY[part])
        elif part and part not in _FUNCTION_WORDS and part not in _NEGATORS:
            words.add(stem(part))


def heads(text: str) -> tuple[str, ...]:
    """`subject_tokens` without framing ("Reminder:", "Rule:") and identifiers: what a lesson is about, in order."""
    return tuple(t for t in subject_tokens(text) if t not in _FRAME and not any(c.isdigit() for c in t))


def flips(fa: Features, fb: Features) -> bool:
    """Whether a decision only one lesson makes is the opposite of one only the other makes (always/never...)."""
    pairs = ((mine, theirs) for mine in fa.decisions - fb.decisions for theirs in fb.decisions - fa.decisions)
    return any(mine.lstrip("-") == theirs.lstrip("-") for mine, theirs in pairs)


def same_specifics(fa: Features, fb: Features) -> bool:
    """Whether two lessons agree on every number, name and decision."""
    return fa.values == fb.values and fa.names == fb.names and not conflict(fa, fb)


def conflict(fa: Features, fb: Features) -> bool:
    """Whether one lesson reverses the other: one is negated and the other not, or a decision flips."""
    return fa.negated != fb.negated or flips(fa, fb)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two word sets."""
    return len(a & b) / len(a | b) if a or b else 0.0


def days_named(text: str) -> frozenset[str]:
    """The weekdays and months a lesson names (its values that are not numbers)."""
    return frozenset(value for value in features(text).values if not value[:1].isdigit())


def amounts_agree(a: str, b: str) -> bool:
    """The amounts and named days of one are a part of the other's (a restatement may leave some out), once units
    are made one ("ninety days" is "90 days")."""
    mine, theirs = amounts(a), amounts(b)
    days_a, days_b = days_named(a), days_named(b)
    return (mine <= theirs or theirs <= mine) and (days_a <= days_b or days_b <= days_a)


def changed_amount(older: str, newer: str) -> bool:
    """The newer lesson states another amount of a kind the older one states (a duration, a size, a share...), or
    names another day or month where the older one names one. An amount the newer names as the old value ("from
    150% to 125%") is not one it states."""
    old, new = amounts(older), amounts(newer) - replaced(newer)
    kinds = {dimension(amount) for amount in old}
    if any(dimension(amount) in kinds for amount in new - old) and bool(old - new):
        return True
    days_old, days_new = days_named(older), days_named(newer)
    return bool(days_old - days_new) and bool(days_new - days_old)


def names_old_value(older: str, newer: str) -> bool:
    """The newer names as its old value an amount of a unit the older states ("45 minutes instead of eight hours" of
    "sessions time out after 8 hours"): it says it changes the older. Not a bare number nor a time of day ("null
    rather than 0", "from 2 PM to 6 PM" is a range)."""
    old = amounts(older) - replaced(older)
    return any(dimension(amount) not in ("", ":") for amount in replaced(newer) & old)


def agree(a: str, b: str) -> bool:
    """No amount, day, name, side or decision of one contradicts the other's (one may leave some out)."""
    fa, fb = features(a), features(b)
    return amounts_agree(a, b) and names_agree(fa, fb) and not (flips(fa, fb) or other_sides(a, b))


def names_agree(fa: Features, fb: Features) -> bool:
    """Both name the same things, one perhaps fewer."""
    return fa.names <= fb.names or fb.names <= fa.names


def same_things(older: str, newer: str, share: float) -> bool:
    """Both name the same things (one may name fewer) and share at least `share` of their subject words."""
    old, new = features(older), features(newer)
    return names_agree(old, new) and overlap(old.words, new.words) >= share


def covers(older: str, newer: str, share: float) -> bool:
    """Both name the same things (one may name fewer), and at least `share` of the shorter one's subject words are
    in the other: a newer lesson that adds why or since when is still about the same thing."""
    old, new = features(older), features(newer)
    shorter = min(len(old.words), len(new.words))
    return names_agree(old, new) and shorter > 0 and len(old.words & new.words) / shorter >= share
