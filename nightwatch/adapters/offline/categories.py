"""The category the offline model gives a lesson, from cues in its words (deterministic, no model).

Checked in order, the first that fits wins:

- events: something dated or that happened once: a date (2026-03-02, 2 March, March 2nd), an incident, an outage,
  a release or a decision said in the past tense ("went down", "was rolled back", "we decided");
- cases: a problem and its fix: "fixed by", "caused by", "root cause", "the fix", "workaround", "resolved";
- preferences: how the team likes things done: "prefer", "convention", "we always", "we never", "our style";
- profile: who owns or does what: "owns", "is responsible for", "on call", "maintainer", "the team is";
- entities: a named thing and its state: a version number (Redis 7.2, v3.1.0) or a service, database, queue or
  environment said to run, live or be on something;
- patterns: anything else, the reusable ways of working that most reflections are.

`bench/retrieval --write-path --categories` gives the persona lessons their categories the same way.
"""

from __future__ import annotations

import re

from nightwatch.domain.memory import Category

_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec"
_EVENT = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b\d{{1,2}}(?:st|nd|rd|th)? (?:{_MONTHS})[a-z]*\b|\b(?:{_MONTHS})[a-z]* \d{{1,2}}"
    r"(?:st|nd|rd|th)?\b|\b(?:incident|outage|postmortem|post-mortem)s?\b|\bwent (?:down|out|live)\b|"
    r"\bwas (?:rolled back|reverted|released|shipped|deployed)\b|\bwe decided\b|"
    r"\b(?:yesterday|last (?:week|month|night))\b",
    re.IGNORECASE,
)
_CASE = re.compile(
    r"\b(?:fixed|solved|resolved|cured) (?:by|with|it)\b|\bcaused by\b|\broot cause\b|\bthe fix\b|\bworkaround\b|"
    r"\bturned out\b|\bwas due to\b",
    re.IGNORECASE,
)
_PREFERENCE = re.compile(
    r"\bprefers?\b|\bpreferred\b|\bconventions?\b|\bwe (?:always|never|like|use)\b|\bour style\b|"
    r"\bthe team (?:likes|wants|uses)\b",
    re.IGNORECASE,
)
_PROFILE = re.compile(
    r"\bowns?\b|\bowner of\b|\bis responsible for\b|\bon[- ]call\b|\bmaintainers?\b|\bthe team is\b|\bworks on\b",
    re.IGNORECASE,
)
_ENTITY = re.compile(
    r"\bv?\d+\.\d+(?:\.\d+)?\b|\b(?:service|database|queue|cluster|bucket|environment|staging|production)\b"
    r".{0,40}\b(?:runs?|lives?|is on|sits on|uses|version)\b",
    re.IGNORECASE,
)
_RULES: tuple[tuple[Category, re.Pattern[str]], ...] = (
    ("events", _EVENT),
    ("cases", _CASE),
    ("preferences", _PREFERENCE),
    ("profile", _PROFILE),
    ("entities", _ENTITY),
)


def category_for(text: str) -> Category:
    """The category of a lesson, by the first cue that fits (see the module docstring)."""
    return next((category for category, cue in _RULES if cue.search(text)), "patterns")
