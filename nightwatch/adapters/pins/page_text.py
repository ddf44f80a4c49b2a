"""A fetched page as the text a pin keeps: its charset, and HTML reduced to its readable text."""

from __future__ import annotations

import re
from html.parser import HTMLParser

_BLANK_LINES = re.compile(r"\n{3,}")


_SPACES = re.compile(r"[ \t\r\f\v]+")


def charset_of(content_type: str) -> str:
    match = re.search(r"charset=\"?([A-Za-z0-9._-]+)", content_type)
    name = match.group(1) if match else "utf-8"
    try:
        "".encode(name)
    except LookupError:
        return "utf-8"
    return name


_SKIPPED = frozenset({"script", "style", "noscript", "template", "svg", "iframe", "object"})


_BLOCKS = frozenset(
    "address article aside blockquote br dd details dialog div dl dt fieldset figcaption figure footer form h1 h2 h3 "
    "h4 h5 h6 header hr li main nav ol p pre section summary table tbody td tfoot th thead title tr ul".split()
)


class _TextOf(HTMLParser):
    """Collects the text of an HTML page: what a reader sees, a line per block, no scripts or styles."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping: list[str] = []
        self._title: list[str] = []
        self._in_title = False
        self._pre = 0  # inside <pre>, line breaks are the text's own

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag == "pre":
            self._pre += 1
        elif tag in _SKIPPED:
            self._skipping.append(tag)
        if tag in _BLOCKS:
            self.parts.append("\n")
        if tag == "li":
            self.parts.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
        elif tag in _SKIPPED and tag in self._skipping:
            while self._skipping and self._skipping.pop() != tag:
                pass
        if tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self._title.append(data)
        elif not self._skipping:
            self.parts.append(data if self._pre else data.replace("\n", " "))

    @property
    def title(self) -> str:
        return " ".join("".join(self._title).split())


def html_to_text(page: str) -> str:
    """The text of an HTML page, simply: its title first, then each block on its own line."""
    parser = _TextOf()
    parser.feed(page)
    parser.close()
    lines = [_SPACES.sub(" ", line).strip() for line in "".join(parser.parts).split("\n")]
    body = _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
    title = parser.title
    return f"{title}\n\n{body}".strip() if title and not body.startswith(title) else body
