"""Text analysis for keyword recall: tokens, stop words and stems.

Identifiers stay whole and are also split: `auth_service.py` gives `auth_service.py`, `auth`, `servic` and `py`;
`v2.3.1` gives `v2.3.1`, `2.3.1`, `2`, `3` and `1`; `CVE-2024-1234` gives the id and its parts. So a query
naming the exact file or version matches it best, and a query naming one part still finds it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain

from nightwatch.domain.recall.stemmer import stem

# Runs of letters and digits joined by the separators identifiers use (file names, versions, paths, ids).
# Letters and digits of any script ([^\W_]), so "café" or "Größe" stay words.
_COMPOUND = re.compile(r"[^\W_]+(?:[._\-/:+#@][^\W_]+)*")
_PART = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_VERSION = re.compile(r"v(\d+(?:\.\d+)+)")
_POSSESSIVE = re.compile(r"['\u2019]s\b", re.IGNORECASE)
_APOSTROPHE = re.compile(r"['\u2019]")

STOP_WORDS = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also although always am among
    amongst an and another any anyhow anyone anything anyway anywhere are around as at be became because become becomes
    becoming been before beforehand behind being below beside besides between beyond both but by can cannot could did do
    does doing done down during each eg either else elsewhere enough etc even ever every everyone everything everywhere
    except few for former formerly from further had has have having he hence her here hereafter hereby herein hereupon
    hers herself him himself his how however i ie if in indeed into is it its itself just last latter latterly least
    less ll may me meanwhile might mine more moreover most mostly much must my myself namely neither never nevertheless
    next no nobody none noone nor not nothing now nowhere of off often on once one only onto or other others otherwise
    our ours ourselves out over own per perhaps please rather re same seem seemed seeming seems several she should since
    so some somehow someone something sometime sometimes somewhere still such than that the their theirs them themselves
    then thence there thereafter thereby therefore therein thereupon these they this those though through throughout
    thru thus to together too toward towards under until up upon us ve very via was we well were what whatever when
    whence whenever where whereafter whereas whereby wherein whereupon wherever whether which while whither who whoever
    whole whom whose why will with within without would yet you your yours yourself yourselves
    im ive id youre youve youll youd hes shes weve were theyre theyve isnt arent wasnt werent dont doesnt didnt cant
    couldnt wouldnt shouldnt wont hasnt havent hadnt thats whats lets theres heres
    """.split()
)


def _word_terms(word: str) -> list[str]:
    """Terms for one plain word: its stem, or nothing for a stop word or a lone letter."""
    if word in STOP_WORDS or (len(word) == 1 and not word.isdigit()):
        return []
    return [stem(word)]


def _compound_terms(raw: str) -> list[str]:
    """Terms for an identifier: the whole (not stemmed), a bare version number, then its parts."""
    whole = raw.lower()
    terms = [whole]
    version = _VERSION.fullmatch(whole)
    if version:  # "v2.3.1" also matches "2.3.1", and its parts are the numbers
        raw = version.group(1)
        terms.append(raw)
    for part in _PART.findall(raw):
        terms.extend(_split_part(part))
    return terms


def _split_part(part: str) -> list[str]:
    """A camelCase word gives the whole and its humps; anything else is one word."""
    humps = _CAMEL.findall(part)  # ASCII only: the pattern knows no other script's capitals
    if part.isascii() and len(humps) > 1 and not part.isupper() and not part.islower():
        lowered = part.lower()
        return [lowered, *(term for hump in humps for term in _word_terms(hump.lower()))]
    return _word_terms(part.lower())


@lru_cache(maxsize=131072)
def _token_terms(raw: str) -> tuple[str, ...]:
    """The terms of one token (cached: a memory's words repeat, and stemming is the costly part)."""
    return tuple(_split_part(raw) if _PART.fullmatch(raw) else _compound_terms(raw))


def terms(text: str) -> list[str]:
    """Return the index terms of `text`, in order, repeats kept (term frequency matters)."""
    found: list[str] = []
    for raw in _COMPOUND.findall(_APOSTROPHE.sub("", _POSSESSIVE.sub("", text))):
        found.extend(_token_terms(raw))
    return found


def terms_of(texts: Sequence[str]) -> list[list[str]]:
    """`terms` of each text, the apostrophes of all of them removed in one pass (a big file is indexed at once)."""
    joined = "\n".join(text.replace("\n", " ") for text in texts)
    cleaned = _APOSTROPHE.sub("", _POSSESSIVE.sub("", joined)).split("\n") if texts else []
    return [list(chain.from_iterable(map(_token_terms, _COMPOUND.findall(part)))) for part in cleaned]
