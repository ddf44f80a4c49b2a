"""What a person may ask a deliberation about: the topic, and the personas they want to hear from."""

from __future__ import annotations

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.inputs import check_text, shown
from nightwatch.domain.personas import PERSONA_NAME_MAX, validate_persona_name

TOPIC_MAX = 4000
PERSONAS_MAX = 10

_LIST_RULE = (
    f"Name 1-{PERSONAS_MAX} personas separated by commas, for example maya,carlos (got {{got}}); "
    "each is a persona's name or slug."
)


def validate_topic(raw: object) -> str:
    """Return the topic without outer white space: 1-4,000 characters of printable text (line breaks allowed)."""
    return check_text(raw, what="The topic", limit=TOPIC_MAX, example='"Should we add rate limiting to login?"')


def validate_optional_topic(raw: object) -> str:
    """Return '' for no topic, else the topic as `validate_topic` accepts it (white space alone is refused)."""
    return "" if raw in (None, "") else validate_topic(raw)


def validate_persona_list(raw: object) -> tuple[str, ...]:
    """Return the persona names in a comma-separated list such as 'maya,carlos': 1-10 names, none empty."""
    if not isinstance(raw, str) or len(raw) > PERSONAS_MAX * (PERSONA_NAME_MAX + 1):
        raise InvalidInputError(_LIST_RULE.format(got=shown(raw)))
    names = [part.strip() for part in raw.split(",")]
    if not 1 <= len(names) <= PERSONAS_MAX or not all(names):
        raise InvalidInputError(_LIST_RULE.format(got=shown(raw)))
    return tuple(validate_persona_name(name) for name in names)
