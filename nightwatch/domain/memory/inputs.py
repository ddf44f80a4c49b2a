"""What a person may give memory: a lesson's text and overview, a lesson's id, and a search query with how many hits
to show."""

from __future__ import annotations

import re

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.inputs import check_printable, check_text, shown, whole_number
from nightwatch.domain.memory.answers import OVERVIEW_MAX
from nightwatch.domain.memory.format import clean_lesson_text, clean_overview

LESSON_MAX = 400
QUERY_MAX = 500
SEARCH_MAX = 100

_LESSON_ID = re.compile(r"[0-9a-f]{8}")


def validate_lesson(raw: object, limit: int = LESSON_MAX) -> str:
    """Return the lesson as one clean line, or raise InvalidInputError: 1-`limit` characters of printable text."""
    lesson = clean_lesson_text(raw) if isinstance(raw, str) else ""
    if not lesson:
        raise InvalidInputError("A lesson cannot be empty: write one sentence worth remembering.")
    if len(lesson) > limit:
        raise InvalidInputError(f"That lesson is {len(lesson)} characters long; shorten it to at most {limit}.")
    return check_printable(lesson, what="The lesson")


def validate_overview(raw: object, limit: int = OVERVIEW_MAX) -> str:
    """Return a lesson's overview as one clean line ('' for none), or raise InvalidInputError: at most `limit`
    characters of printable text."""
    overview = clean_overview(raw) if isinstance(raw, str) else ""
    if len(overview) > limit:
        raise InvalidInputError(f"That overview is {len(overview)} characters long; shorten it to at most {limit}.")
    return check_printable(overview, what="The overview") if overview else ""


def validate_lesson_id(raw: object) -> str:
    """Return the lesson id in lower case, or raise InvalidInputError: an id is 8 hex characters like 3f9a2c1d."""
    wanted = raw.strip().lower() if isinstance(raw, str) else ""
    if not _LESSON_ID.fullmatch(wanted):
        raise InvalidInputError(
            f"A lesson id is 8 characters from 0-9 and a-f, such as 3f9a2c1d (got {shown(raw)}); "
            "list the persona's lessons to see their ids."
        )
    return wanted


def validate_query(raw: object) -> str:
    """Return the search query without outer white space: 1-500 characters of printable text."""
    return check_text(raw, what="The search query", limit=QUERY_MAX, example='"session store"')


def validate_search_limit(raw: object) -> int:
    """Return how many hits a search may show: a whole number from 1 to 100."""
    return whole_number(raw, what="The number of search results", low=1, high=SEARCH_MAX)
