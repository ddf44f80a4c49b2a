"""Pinned context: whole documents (a file, a web page, a text) a person pins to a persona's prompt for a project."""

from nightwatch.domain.pins.block import (
    PackedPin,
    PinBlock,
    PinsSection,
    cut_marker,
    cut_pin_text,
    fair_shares,
    label_of,
    pin_heading,
    pin_text,
    stale_note,
)
from nightwatch.domain.pins.inputs import (
    EVERY_PERSONA,
    PIN_PATH_MAX,
    PIN_TEXT_MAX,
    PIN_URL_MAX,
    PINS_MAX,
    pin_source,
    snapshot_hash,
    validate_pin_id,
    validate_pin_path,
    validate_pin_text,
    validate_pin_url,
)
from nightwatch.domain.pins.source import NoPins, PersonaPins, read_pins
from nightwatch.domain.pins.service import PinOutcome, PinService, PinView

__all__ = [
    "EVERY_PERSONA",
    "PINS_MAX",
    "PIN_PATH_MAX",
    "PIN_TEXT_MAX",
    "PIN_URL_MAX",
    "NoPins",
    "PackedPin",
    "PersonaPins",
    "PinBlock",
    "PinOutcome",
    "PinService",
    "PinView",
    "PinsSection",
    "cut_marker",
    "cut_pin_text",
    "fair_shares",
    "label_of",
    "pin_heading",
    "pin_source",
    "pin_text",
    "read_pins",
    "snapshot_hash",
    "stale_note",
    "validate_pin_id",
    "validate_pin_path",
    "validate_pin_text",
    "validate_pin_url",
]
