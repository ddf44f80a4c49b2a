"""Things that stand side by side: staging and production, iOS and Android, reads and writes, free and paid.

A lesson about one side says nothing about the other, so two lessons on two sides of one axis are two facts ("calls
the Surescripts staging endpoint" / "calls the Surescripts production endpoint"), however alike they read: curation
never merges them, and where they are things that stand side by side for good (THINGS, not STATES) it never reads
the newer as the older's update. A lesson naming both sides ("moved from the shared to a dedicated IP pool") is on
neither alone.

Not bounds ("under" / "over") nor times of day: a restatement says "below 8 GiB" for "at least 8 GiB". Not "batch"
/ "streaming": "not from the batch warehouse" restates "from streaming events". Each axis lists its sides, each side
the words that name it (a word counts wherever it stands, hyphenated words whole: "pre-match", "client-side").

Places stand side by side too: the points of the compass ("the North site" / "the South site", as STATES), and two
lessons that each name URL paths or cloud regions, and none in common, are about two places ("GET /v2/rooms/status
is cached" / "GET /v2/rooms/{id}/status is never cached"; "eu-west-2" / "us-east-1"). A restatement keeps its path
or region, or leaves it out. A place may change, so, like STATES, places never stop an update.

So do two names of one pattern with one part exchanged ("gw-wk-01" / "gw-dn-01", "gavel.hammer" / "gavel.bids"):
two components, however alike the lessons that name them read. A name here holds a digit or joins its parts with a
mark prose does not ("_", ".", ":", "@"); "read-only" / "view-only" is prose, and a paraphrase. Where the part
exchanged is a word of letters ("tradedesk-stg" / "tradedesk-uat") they stand side by side for good, as THINGS do;
where it holds a digit ("leafseg-v3" / "leafseg-v4") the newer may be the older's update. A number alone exchanged
("30-day" / "90-day") is another amount, for `amounts` to judge.

Countries are places as well ("the UK retail customer" / "the US department-store customer"; a country and its
people's name are one: "UK" / "British"), and so are two words each lesson quotes, none in common ("the 'received'
status" / "the 'returned' status"): they are never one lesson, but, as places, the newer may be the older's update.
"""

from __future__ import annotations

import re
from collections.abc import Hashable
from functools import lru_cache

from nightwatch.domain.framing import QUOTED

# Things that stand side by side for good: an update never moves a fact from one to the other ("inbound transfers
# use a 0.95 threshold" is not updated by "outbound transfers use 0.75").
THINGS = (
    "staging stage | production prod | dev development | sandbox",
    "inbound incoming | outbound outgoing",
    "upload uploads uploaded | download downloads downloaded",
    "import imports imported | export exports exported",
    "read reads reading | write writes writing",
    "ingress | egress",
    "live in-play | pre-match prematch",
    "free | paid pro premium enterprise",
    "primary | secondary replica replicas",
    "min minimum | max maximum",
    "ios iphone ipad | android",
    "web browser | mobile | desktop",
    "commercial | residential",
    "domestic | international",
    "debit | credit",
    "client clients client-side | server servers server-side",
    "frontend front-end | backend back-end",
    "hot | cold",
    "student students | staff faculty employee employees teacher teachers",
    "adult adults | pediatric paediatric child children",
    "undergraduate undergraduates | postgraduate postgraduates",
    "bronze | silver | gold | platinum",
    "buyer buyers | seller sellers",
    "unit | integration | e2e end-to-end",
    "windows | macos | linux",
    "sender senders | recipient recipients receiver receivers",
    "first-party | third-party",
    "upstream | downstream",
    "inference serving | training",
    "mono | stereo",
    "interstate | intrastate intra-state",
    "official | unofficial",
)
# States one of which may replace the other: two lessons on two of them are never one lesson, but the newer may be the
# older's update ("the bounty opened to the public", "chimes are back on", "moved to a dedicated pool").
STATES = (
    "online | offline",
    "sync synchronous synchronously | async asynchronous asynchronously",
    "sequential sequentially serial | parallel",
    "shared | dedicated",
    "public | private",
    "internal | external",
    "show shows shown | hide hides hidden",
    "cpu cpus | gpu gpus",
    "x86 amd64 | arm arm64 aarch64",
    "email emails | sms",
    "weekday weekdays | weekend weekends",
    "north northern northbound | south southern southbound",
    "east eastern eastbound | west western westbound",
)
AXES = THINGS + STATES
_SIDES = tuple(tuple(frozenset(side.split()) for side in axis.split(" | ")) for axis in AXES)
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_PATH = re.compile(r"(?<![\w./])/[\w{}.:<>-]+(?:/[\w{}.:<>-]*)*")  # "/v2/rooms/{id}/status", not "km/h" nor "24/7"
_COMPASS = "(?:north|south|east|west|central)(?:east|west)?"
_CONTINENT = "(?:europe|asia|australia|northamerica|southamerica|us|me)"
_REGION = re.compile(rf"\b(?:[a-z]{{2}}-{_COMPASS}-\d|{_CONTINENT}-{_COMPASS}\d)\b")  # "eu-west-2", "europe-west1"
_NAMED = re.compile(r"(?<![\w/.@:-])[a-z][a-z0-9]*(?:[-_.:@][a-z0-9]+)+(?![\w-])")  # "gw-wk-01", "gavel.bids"
_PART = re.compile(r"[-_.:@]")
_IDENTIFIER = re.compile(r"\d|[_.:@]")  # a digit or a mark prose does not join words with: "gw-wk-01", "pump_a"
_ONE_WORD = re.compile(r"[A-Za-z][\w-]{0,30}")  # a quoted word: 'received', "DEF" (not 'not guaranteed')
_COUNTRY = {  # each country's words, in the case they are written in (not "us", "polish", "turkey")
    "uk": "UK Britain British England English",
    "us": "US USA American Americans",
    "ca": "Canada Canadian",
    "mx": "Mexico Mexican",
    "br": "Brazil Brazilian",
    "de": "Germany German",
    "fr": "France French",
    "nl": "Netherlands Dutch Holland",
    "be": "Belgium Belgian",
    "pl": "Poland Polish",
    "es": "Spain Spanish",
    "pt": "Portugal Portuguese",
    "it": "Italy Italian",
    "ie": "Ireland Irish",
    "scotland": "Scotland Scottish",
    "wales": "Wales Welsh",
    "au": "Australia Australian",
    "nz": "Zealand",
    "jp": "Japan Japanese",
    "in": "India Indian",
    "cn": "China Chinese",
    "kr": "Korea Korean",
    "sg": "Singapore",
    "se": "Sweden Swedish",
    "no": "Norway Norwegian",
    "dk": "Denmark Danish",
    "fi": "Finland Finnish",
    "ch": "Switzerland Swiss",
    "at": "Austria Austrian",
    "cz": "Czech Czechia",
    "gr": "Greece Greek",
    "eu": "EU European Europe",
}
_COUNTRY_OF = {word: country for country, words in _COUNTRY.items() for word in words.split()}
_COUNTRY_WORD = re.compile(rf"\b(?:{'|'.join(sorted(_COUNTRY_OF, key=len, reverse=True))})\b(?!/)")  # not Europe/London


@lru_cache(maxsize=65536)
def sides(text: str) -> tuple[frozenset[int], ...]:
    """For each axis, the sides this text names (none, one, or several)."""
    words = frozenset(_WORD.findall(text.lower()))
    return tuple(frozenset(i for i, side in enumerate(axis) if side & words) for axis in _SIDES)


@lru_cache(maxsize=65536)
def places(text: str) -> tuple[frozenset[str], ...]:
    """The URL paths, cloud regions, countries and single quoted words a text names, in that order."""
    lower = text.lower()
    paths = frozenset(path.rstrip(".,:;/") for path in _PATH.findall(lower)) - {""}
    return paths, frozenset(_REGION.findall(lower)), countries(text), quoted(text)


def countries(text: str) -> frozenset[str]:
    """The countries a text names, by their names or their people's ("British" is the UK)."""
    return frozenset(_COUNTRY_OF[word] for word in _COUNTRY_WORD.findall(text))


def quoted(text: str) -> frozenset[str]:
    """The single words a text quotes ("the 'received' status")."""
    spans = (span[1:-1] for span in QUOTED.findall(text))
    return frozenset(word.lower() for word in spans if _ONE_WORD.fullmatch(word))


@lru_cache(maxsize=65536)
def named(text: str) -> frozenset[tuple[str, ...]]:
    """The names of several parts a text names ("gw-wk-01", "gavel.bids", "pump_station_a"), each split in its parts."""
    found = (tuple(_PART.split(name)) for name in _NAMED.findall(text.lower()) if _IDENTIFIER.search(name))
    return frozenset(found)


def _siblings(mine: frozenset[tuple[str, ...]], theirs: frozenset[tuple[str, ...]], *, words: bool = False) -> bool:
    """A name only one text names and a name only the other names are one pattern with one word exchanged (with
    `words`, a word of letters alone: "tradedesk-stg" / "tradedesk-uat", not "leafseg-v3" / "leafseg-v4")."""
    return any(_exchanged_word(one, other, words) for one in mine - theirs for other in theirs - mine)


def _exchanged_word(one: tuple[str, ...], other: tuple[str, ...], words: bool) -> bool:
    if len(one) != len(other):
        return False
    exchanged = [(x, y) for x, y in zip(one, other, strict=True) if x != y]
    return len(exchanged) == 1 and all(part.isalpha() if words else _has_letter(part) for part in exchanged[0])


def _has_letter(part: str) -> bool:
    return any(c.isalpha() for c in part)


def other_sides(a: str, b: str) -> bool:
    """Whether the two are about different sides of one axis, or different places, neither naming one the other
    names, or name two names of one pattern."""
    return _apart(sides(a), sides(b)) or _apart(places(a), places(b)) or _siblings(named(a), named(b))


def other_things(a: str, b: str) -> bool:
    """`other_sides` on an axis of things that stand side by side for good (THINGS), not of states, or two names of
    one pattern with a word exchanged."""
    return _apart(sides(a)[: len(THINGS)], sides(b)[: len(THINGS)]) or _siblings(named(a), named(b), words=True)


def _apart(mine: tuple[frozenset[Hashable], ...], theirs: tuple[frozenset[Hashable], ...]) -> bool:
    """Some axis on which each names a side and neither names one of the other's."""
    return any(one and other and not one & other for one, other in zip(mine, theirs, strict=True))
