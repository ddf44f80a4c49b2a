"""Amounts in prose, made one: "ninety days" is "90 days", "a day" is "24 hours", "five hundred euros" is "500 EUR".

Durations become seconds ("a minute and a half" is 90; "a full year" is "a year"), sizes kilobytes, shares percent,
times of day hh:mm, money keeps its currency ("$500" and "500 dollars" are "500usd"), a version its "v" ("v4"). How
often something happens is the time between two times, a duration too: "daily" is "every day" and "every 24 hours",
"four times a minute" is "every 15 seconds", "every minute" is "every 60 seconds", "every Sunday" and "per week" are
weekly, "quarterly" is "every 90 days", "half-hourly" "every 30 minutes", "six-monthly" "every 6 months" (and "three
quarters of an hour" is 45 minutes, never three quarters of a year; "under-16s" are people, not 16 seconds). Whole
years are years however they are written ("24 months" is "two years"), and parts of a year months ("twice a year" is
"every 6 months"). A number word or an article counts only before a unit written out as a word ("a day", "ten
minutes"), never glued to a letter: "as" is not "a s", nor "ones" "one s"; "a second" is the ordinal ("a second
approver"). An update often names its old value beside the new one ("from 150% to 125%", "60 seconds, not 5
minutes"): `replaced` finds it where a figure, a number word or an article starts it. Numbers spelled in several
words are one number ("a hundred and eighty thousand" is 180k, "six hundred fifty" 650), and a capital M after a
figure is a million ("2.5M"; a lower-case "5m" is metres or minutes).
"""

from __future__ import annotations

import re
from functools import lru_cache

_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
SMALL_NUMBERS = {word: number for number, word in enumerate(  # the number words below twenty
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen".split())}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1000000}
_SECONDS = {"ms": 0.001, "millisecond": 0.001, "s": 1, "sec": 1, "second": 1, "min": 60, "minute": 60, "h": 3600,
            "hr": 3600, "hour": 3600, "day": 86400, "week": 604800, "fortnight": 1209600, "month": 2592000,
            "quarter": 7776000, "year": 31536000}  # fmt: skip
_SIZES = {"kb": 1, "mb": 1000, "gb": 1000000, "tb": 1000000000, "kilobyte": 1, "megabyte": 1000, "gigabyte": 1000000,
          "terabyte": 1000000000}  # fmt: skip
_CURRENCIES = {"eur": "eur", "euro": "eur", "€": "eur", "usd": "usd", "dollar": "usd", "$": "usd", "gbp": "gbp",
               "pound": "gbp", "£": "gbp"}  # fmt: skip
_UNIT_WORDS = "|".join(word for word, number in SMALL_NUMBERS.items() if 0 < number < 10)
_WORD = (  # a number word: "forty-five", "seventeen" (the longer first: "seventeen", not "seven" of it)
    rf"(?:{'|'.join(_TENS)})(?:[- ](?:{_UNIT_WORDS}))?|" + "|".join(sorted(SMALL_NUMBERS, key=len, reverse=True))
)
_SCALE = "|".join(_SCALES)
_SUFFIX = {"": 1, "k": 1000, "K": 1000, "M": 1000000}  # "180k", "2.5M"
_SPELLED = (  # "fifteen hundred", "a hundred and eighty thousand", "one hundred twenty": one number
    rf"(?:(?:{_WORD}|an?) )?(?:{_SCALE})(?:(?: and)? (?:(?:{_WORD})(?: (?:{_SCALE}))?|(?:{_SCALE})))*"
)
_NUMBER = (
    r"(?P<cur>[$€£])?(?P<num>\d+(?:,\d{3})*(?:\.\d+)?)(?P<k>k\b|(?-i:M)\b)?\+?"  # "180k", "2.5M" (not "5m")
    rf"|(?P<word>{_SPELLED}|{_WORD})|(?P<half>half an?|half)|(?P<a>an?)"
)
_WORD_UNITS = (
    r"milliseconds?|seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|fortnights?|months?|quarters?|years?|"
    r"percent|euros?|dollars?|pounds?|kilobytes?|megabytes?|gigabytes?|terabytes?"
)
_WITH_UNIT = re.compile(
    rf"(?<![\w.])(?:{_NUMBER})(?P<gap>[ -]?(?:(?:full|whole|entire) )?)"  # "a full year" is "a year"
    rf"(?P<unit>{_WORD_UNITS}|ms|s|h|kb|mb|gb|tb|%|eur|usd|gbp|x)(?!\w)",
    re.IGNORECASE,
)
_BARE = re.compile(rf"(?<![\w.])(?:{_NUMBER})(?![\w])", re.IGNORECASE)
_CLOCK = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s?(am\b|pm\b|a\.m\.|p\.m\.)|\b(\d{1,2}):(\d{2})\b", re.IGNORECASE)
_QUARTER_HOUR = re.compile(  # "three quarters of an hour", "every quarter hour"; not quarters of a year
    rf"\b(?:(?P<n>an?|{_WORD}|\d+)|every|each|per) quarters?(?: of an |-| )hour\b", re.IGNORECASE
)
_EVERY_SO_MANY = re.compile(  # "half-hourly", "six-monthly": every half hour, every six months (not "400 weekly")
    rf"\b(?:(half)[- ]?|(\d+|{_WORD})-)(hour|day|week|month|year)ly\b", re.IGNORECASE
)
_AGE_GROUP = re.compile(r"\b((?:under|over)-\d+)s\b", re.IGNORECASE)  # "under-16s" are people, not 16 seconds
_ONE_OF_A_THING = re.compile(
    r"(?<![\w-])(?<!the )(?<!no )(?<!any )(?<!each )(?<!that )(?<!this )(?<!which )(?<!every )(?<!at )one "
    r"(?!(?:of|more|another|or|and|by|at|to|in|on|way|thing|is|was|that|which|who|day|time)\b)"
    rf"(?!(?:{_SCALE})\b)[a-z]",  # "one hundred" is a hundred
    re.IGNORECASE,
)
_AND_A_HALF = re.compile(  # "a minute and a half", "two and a half hours", "every minute and a half": one more half
    rf"(?<![\w.])(?P<n>\d+|{_WORD}|an?|every(?= (?:{_WORD_UNITS}) and))(?: (?P<before>[a-z]+))? and a half"
    r"(?: (?P<after>[a-z]+))?\b",
    re.IGNORECASE,
)
_VERSION = re.compile(r"(?<![\w.])v(\d+(?:\.\d+)*)\b", re.IGNORECASE)
_EVERY = re.compile(
    r"\b(?:(hourly|daily|nightly|weekly|fortnightly|monthly|quarterly|yearly|annually)|(?:every|each|per) "
    r"(second|minute|hour|day|night|week|fortnight|month|quarter|year|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b",
    re.IGNORECASE,
)
_PERIOD_UNITS = r"(?P<unit>minute|hour|day|week|fortnight|month|quarter|year)s?"
_TIMES = re.compile(  # "twice a year", "three times per week"
    rf"\b(?:(?P<once>once|twice|thrice)|(?P<n>\d+|{_WORD}) times) (?:a|an|per|every|each) {_PERIOD_UNITS}\b",
    re.IGNORECASE,
)
_PERIODS = {"hourly": "hour", "daily": "day", "nightly": "day", "night": "day", "weekly": "week",
            "fortnightly": "fortnight", "monthly": "month", "quarterly": "quarter", "yearly": "year",
            "annually": "year"}  # fmt: skip
_FIGURE = rf"(?:[$€£]|-?\d|(?:{_WORD}|an?)\b)"  # a figure ("-16" too), a number word or an article
_OLD_AMOUNT = rf"({_FIGURE}[^,;:()]{{0,24}}?)"  # an amount, up to where the sentence goes on
_REPLACED = re.compile(  # the old value an update names: "from X to", "not X", "instead of X", "down from X"
    rf"\bfrom {_OLD_AMOUNT} (?:down |up |back )?to\b|"
    rf"\b(?:not|instead of|rather than|(?:down|up) from|previously|formerly|replacing)\s+{_OLD_AMOUNT}"
    r"(?=[,;:.()]|$| now| before| as)",
    re.IGNORECASE,
)
_SPELLED_UNIT = re.compile(rf"^(?:{_WORD_UNITS})$", re.IGNORECASE)
_ONCE = {"once": 1.0, "twice": 2.0, "thrice": 3.0}


def _count(spelled: str) -> float:
    """ "6" or "six" (or "twenty-one") as a number; 1 for none or zero."""
    match = _BARE.fullmatch(spelled)
    return (_number(match) if match else None) or 1.0


def _number(match: re.Match[str]) -> float | None:
    if match.group("num"):
        value = float(match.group("num").replace(",", ""))
        return value * _SUFFIX[match.group("k") or ""]
    if match.group("word"):
        total, current = 0.0, 0.0
        for part in re.split(r"[- ]", match.group("word").lower()):
            if part == "hundred":  # "a hundred and eighty thousand": hundreds of what the next scale counts
                current = max(current, 1.0) * _SCALES[part]
            elif part in _SCALES:
                total, current = total + max(current, 1.0) * _SCALES[part], 0.0
            elif part != "and":
                current += _TENS.get(part, SMALL_NUMBERS.get(part, 1 if part in ("a", "an") else 0))
        return total + current
    if match.group("half"):
        return 0.5
    return 1.0 if match.group("a") else None


@lru_cache(maxsize=65536)
def amounts(text: str) -> frozenset[str]:
    """The numbers a lesson states, with their units made one (see the module docstring)."""
    found: set[str] = set()
    lowered = _AGE_GROUP.sub(r"\1", _EVERY_SO_MANY.sub(_every_so_many, text.replace("’", "'")))
    lowered = _AND_A_HALF.sub(_half_more, _QUARTER_HOUR.sub(_quarter_hour, lowered))
    for clock in _CLOCK.finditer(lowered):
        hour, minute = int(clock.group(1) or clock.group(4)), int(clock.group(2) or clock.group(5) or 0)
        if (clock.group(3) or "").lower().startswith("p") and hour < 12:
            hour += 12
        found.add(f"{hour:02d}:{minute:02d}")
    lowered = _CLOCK.sub(" ", lowered)
    found.update(f"v{version.group(1)}" for version in _VERSION.finditer(lowered))
    for match in _TIMES.finditer(lowered):  # "twice a year": every half year
        count = _ONCE.get((match.group("once") or "").lower()) or _count(match.group("n"))
        found.add(_normalised(1 / count, match.group("unit").lower()))
    lowered = _TIMES.sub(" ", lowered)
    for every in _EVERY.finditer(lowered):  # "daily", "every Sunday": every so long
        word = (every.group(1) or every.group(2)).lower()
        period = _PERIODS.get(word, word if word in _SECONDS else "week")  # every <weekday> is weekly
        found.add(f"{_SECONDS[period]:g}s")
    for match in _WITH_UNIT.finditer(lowered):
        value, unit = _number(match), match.group("unit").lower()
        spelled = match.group("num") or (match.group("gap") and _SPELLED_UNIT.match(unit))
        ordinal = match.group("a") and unit.startswith("sec")  # "a second approver"
        if value is not None and spelled and not ordinal:
            found.add(_normalised(value, unit if unit in ("s", "ms") else unit.rstrip("s"), match.group("cur")))
    bare = _WITH_UNIT.sub(" ", lowered)
    for match in _BARE.finditer(bare):
        if match.group("num") or (match.group("word") and match.group("word").lower() != "one"):
            found.add(_normalised(_number(match) or 0.0, "", match.group("cur")))
    if _ONE_OF_A_THING.search(bare):  # "needs one approval" (but not "the one dashboard", "one of them")
        found.add("1")
    return frozenset(found)


def replaced(text: str) -> frozenset[str]:
    """The amounts a lesson names as what was true before ("from 150% to 125%", "60 seconds, not 5 minutes",
    "instead of 14 days", "down from 40"): the old values an update names beside its new ones."""
    return frozenset().union(*(amounts(match.group(1) or match.group(2)) for match in _REPLACED.finditer(text)))


def _every_so_many(match: re.Match[str]) -> str:
    """ "half-hourly" is "every half hours", "six-monthly" "every six months"."""
    return f"every {match.group(1) or match.group(2)} {match.group(3)}s"


def _quarter_hour(match: re.Match[str]) -> str:
    """ "a quarter hour" is "15 minutes", "three quarters of an hour" "45 minutes"; "every quarter hour" is "every 15
    minutes", not every quarter of a year."""
    return f"{15 * _count(match.group('n')):g} minutes" if match.group("n") else "every 15 minutes"


def _half_more(match: re.Match[str]) -> str:
    """ "a minute and a half" is "1.5 minutes", "two and a half hours" "2.5 hours"; else left as written."""
    before, after = match.group("before"), match.group("after")
    unit = before if before else after or ""
    if not _SPELLED_UNIT.match(unit):
        return match.group(0)
    spelled = match.group("n").lower()
    count = 1.0 if spelled in ("a", "an", "every") else _count(spelled)
    every = "every " if spelled == "every" else ""  # "every minute and a half" is every 90 seconds
    return f"{every}{count + 0.5:g} {unit}" + (f" {after}" if before and after else "")


def _normalised(value: float, unit: str, currency: str | None = None) -> str:
    if currency or unit in _CURRENCIES:
        return f"{value:g}{_CURRENCIES[currency or unit]}"
    if unit in _SECONDS:
        return f"{_calendar(value, unit):g}s"
    if unit in _SIZES:
        return f"{value * _SIZES[unit]:g}kb"
    if unit in ("percent", "%"):
        return f"{value:g}%"
    if unit == "x":  # "12x" is "twelve times": a number
        return f"{value:g}"
    return f"{value:g}{unit}"


def _calendar(value: float, unit: str) -> float:
    """Seconds in `value` of `unit`, where whole years count as years ("12 months" is "a year", "24 months" "two
    years") and parts of a year as months ("half a year" is "6 months", "twice a year" "every 6 months"): a month is
    30 days, a year 365."""
    if unit == "month" and value % 12 == 0:
        return value / 12 * _SECONDS["year"]
    if unit == "year" and value % 1 and (value * 12) % 1 == 0:
        return value * 12 * _SECONDS["month"]
    return value * _SECONDS[unit]


def dimension(amount: str) -> str:
    """What an amount measures: "s", "kb", "%", "eur", "v" (a version), "" (a bare number), ":" (a time of day)."""
    if amount.startswith("v"):
        return "v"
    return ":" if ":" in amount else re.sub(r"^[\d.e+-]+", "", amount)
