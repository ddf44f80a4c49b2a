"""Pinned sources outside the process: files (no links, within the roots), web pages (SSRF-guarded), their watch."""

from nightwatch.adapters.pins.files import SafePinFiles
from nightwatch.adapters.pins.pages import PageFetcher
from nightwatch.adapters.pins.watch import PinWatch

__all__ = [
    "PageFetcher",
    "PinWatch",
    "SafePinFiles",
]
