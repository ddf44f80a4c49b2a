"""Secrets known by where they stand, not by their shape: the value of a secret-named setting, the word after
`password is`, the credential of an Authorization header, a CSV column named `secret`, the password in a URL.

A value found this way must also look generated (`looks_generated` / `high_entropy`): long enough, of two kinds of
character or more, of high Shannon entropy (detect-secrets' helper), and not made of words (`bcrypt-12-rounds`,
`authentication-middleware-v2`), a path, a URL, a digest or a placeholder (`${TOKEN}`, `<your key>`, `sk-...4f2a`,
`********`). So the same words in ordinary sentences, and ids, hashes and paths beside them, are left alone.
"""

from __future__ import annotations

import collections
import math
import re
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from detect_secrets.plugins.keyword import DENYLIST

ENTROPY_LIMIT = 3.0  # bits per character
MIN_VALUE_CHARS = 8  # a setting's value
MIN_PROSE_CHARS = 16  # a value found near a word in prose, where a short one is more likely a word or an id
_PLACEHOLDER_START = ("$", "%", "*", "<", "{", "...", "…")
_PLACEHOLDER_INSIDE = ("...", "…", "***", "xxxx", "XXXX", "${", "{{", "<", ">", "your", "YOUR")
_CHARACTER_CLASSES = (string.ascii_lowercase, string.ascii_uppercase, string.digits)
_PARTS = re.compile(r"[-_./@:~+]+")
_WORDISH = re.compile(r"[A-Z]?[a-z]+|[A-Z]+s?|\d+|[A-Za-z]{1,4}\d{1,3}|.{1,6}")  # words, numbers, short parts
_NOT_SECRETS = re.compile(
    r"(?i)(?:sha\d*|md5|h1)[:-]|(?:ssh|ecdsa|sk-ssh)-|[a-z][a-z0-9+.-]*://|0x0*$|[0-9a-f]{1,19}$"
)  # digests, URLs, ids


def high_entropy(value: str, min_chars: int = MIN_VALUE_CHARS) -> bool:
    """Whether a value looks generated: long enough, of mixed characters, of high entropy, and not words or a path.

    Words (`required`, `environment_variable`, `bcrypt-12-rounds`) fall below the limit, use one class of character
    or split into words; placeholders (`${TOKEN}`, `%(password)s`, `***`) and paths are never secrets.
    """
    if len(value) < min_chars or value.startswith(_PLACEHOLDER_START) or value.startswith(("/", "~/", "./", "../")):
        return False
    if any(mark in value for mark in _PLACEHOLDER_INSIDE) or _NOT_SECRETS.match(value) or _wordish(value):
        return False
    classes = sum(any(c in chars for c in value) for chars in _CHARACTER_CLASSES)
    return classes >= 2 and shannon_entropy(value) >= ENTROPY_LIMIT


def shannon_entropy(value: str) -> float:
    """Bits per character of `value`, over all its characters.

    detect-secrets' helper counts only the characters of one alphabet (base64, hex); a password's punctuation is
    part of what makes it hard to guess, so every character counts here (for base64 text the two agree).
    """
    counts = collections.Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_generated(value: str) -> bool:
    """`high_entropy` for a value found in prose: at least MIN_PROSE_CHARS long."""
    return high_entropy(value, MIN_PROSE_CHARS)


def _wordish(value: str) -> bool:
    parts = [part for part in _PARTS.split(value) if part]
    return bool(parts) and all(_WORDISH.fullmatch(part) for part in parts)


Finder = Callable[[str, str], Iterator[tuple[int, int]]]


@dataclass(frozen=True)
class ContextRule:
    """Secrets found by `find(text, lowered)` (spans in `text`), each named `kind`; `hints` gate it as Detector's do."""

    kind: str
    find: Finder
    hints: tuple[str, ...] = ()

    def spans(self, text: str, lowered: str) -> Iterator[tuple[int, int]]:
        """Where this rule's secrets are in `text` (`lowered` is it lower-cased, same length)."""
        if self.hints and not any(hint in lowered for hint in self.hints):
            return
        yield from self.find(text, lowered)


def _groups(pattern: re.Pattern[str], valid: Callable[[str], bool]) -> Finder:
    """A finder of the named group `value` of `pattern`'s matches, kept when `valid(value)`."""

    def find(text: str, lowered: str) -> Iterator[tuple[int, int]]:
        for match in pattern.finditer(text):
            start, end = match.span("value")
            if start < end and valid(text[start:end]):
                yield start, end

    return find


def _assignments(text: str, lowered: str) -> Iterator[tuple[int, int]]:
    reach = 0
    for keyword in _KEYWORD.finditer(lowered):
        if keyword.start() < reach:
            continue
        match = ASSIGNMENT.match(lowered, keyword.end())
        if match is None or _public_name(lowered, keyword.start()) or _inside_word(lowered, keyword):
            continue
        group = "quoted" if match.group("quoted") is not None else "value"
        start, end = match.span(group)
        reach = match.end()
        if start < end and high_entropy(text[start:end]):
            yield start, end


_KEY_PREFIXES = (
    "api",
    "app",
    "secret",
    "private",
    "master",
    "access",
    "auth",
    "account",
    "license",
    "service",
    "client",
    "encryption",
    "session",
    "admin",
    "sdk",
    "signing",
    "write",
    "read",
    "deploy",
)


def _inside_word(lowered: str, keyword: re.Match[str]) -> bool:
    """Whether a bare `key` ends an ordinary word (`monkey`, `hockey`) rather than a name (`apikey`, `DD_API_KEY`)."""
    start = keyword.start()
    if keyword.group() != "key" or start == 0 or not lowered[start - 1].isalpha():
        return False
    return not lowered[:start].endswith(_KEY_PREFIXES)


def _public_name(lowered: str, at: int) -> bool:
    """Whether the setting's name the secret word at `at` is in says `public` (`PublicKey = …` is not a secret)."""
    start = at
    while start > 0 and at - start < 40 and lowered[start - 1] in _NAME_CHARS:
        start -= 1
    return "public" in lowered[start:at]


# The words that name a secret, in a setting's name or in prose (lower case).
_SECRET_NAME = "|".join((*DENYLIST, "token", "key", "passphrase", "auth", "credentials?", "signature"))
_NAME_TAIL = r"[a-z0-9_.-]{0,40}"
_QUOTED = r"(?P<q>['\"`])(?P<quoted>[^'\"`\n]+)(?P=q)"
_BARE = r"['\"`]?(?P<value>[^\s'\"`,;&()\[\]{}<>]*[^\s'\"`,;&()\[\]{}<>.:!?])"
# `password=…`, `api_key: "…"`, `DD-API-KEY: …`, `"SecretAccessKey": "…"`, `db_token := …`, on the lower-cased text:
# from a secret word in a setting's name (found first, so a long run of name characters is not rescanned).
_KEYWORD = re.compile(rf"(?:{_SECRET_NAME})")
ASSIGNMENT = re.compile(rf"{_NAME_TAIL}['\"]?[ \t]*(?::=|=>|==?|:)[ \t]*(?:{_QUOTED}|{_BARE})")
_NAME_CHARS = frozenset(string.ascii_lowercase + string.digits + "_.-")
# Prose: a secret word, then up to 80 characters of the same line, then the value (`the password is …`,
# `datadog api key … and app key …`, `okta api token (super admin): …`).
_WORD = re.compile(rf"(?<![a-z0-9])(?:{_SECRET_NAME}|secrets|tokens|keys|passwords)\d?(?![a-z0-9])")
_CANDIDATE_START = re.compile(r"(?<![\w/+=.%~-])[A-Za-z0-9_]")
_CANDIDATE = re.compile(r"(?<![\w/+=.%~-])[A-Za-z0-9_][A-Za-z0-9_+/.:~%-]*[A-Za-z0-9_]=*")
_ID_WORDS = re.compile(
    r"(?<![a-z])(?:commit|sha\d*|hash|digest|fingerprint|checksum|uuid|request|trace|etag|oid|integrity|public|"
    r"ssh-\w+|ecdsa-\S+|version|account|user(?:name)?|client[ _-]?id|id|ids)(?![a-z])"
)
_REACH = 80
_FIELD_END = re.compile(r"[\"'`][ \t]*[,;}\]]|[&;]")  # the end of a JSON, CSV or URL field


def _named(candidate: str, after: str) -> bool:
    return candidate.endswith("=") and after.isalnum()


def _near_words(text: str, lowered: str) -> Iterator[tuple[int, int]]:
    reach = 0  # where the last value looked at ends: a word inside it starts nothing (keeps long runs linear)
    for word in _WORD.finditer(lowered):
        if word.start() < reach:
            continue
        line_end = text.find("\n", word.end())
        line_end = len(text) if line_end < 0 else line_end
        window = min(line_end, word.end() + _REACH)
        for first in _CANDIDATE_START.finditer(text, word.end(), window):
            candidate = _CANDIDATE.match(text, first.start(), line_end)
            if candidate is None:
                continue
            reach = max(reach, candidate.end())
            if _ID_WORDS.search(lowered, word.end(), candidate.start()) or _FIELD_END.search(
                lowered, word.end(), candidate.start()
            ):
                break  # `key id AKIA…`, `token in commit 3f9a…`, `"token": "…", "base": …`: another field's
            if _named(candidate.group(), text[candidate.end() : candidate.end() + 1]):
                continue  # `X-Amz-SignedHeaders=host`: a setting's name, not its value
            start = candidate.start()
            head, colon, tail = candidate.group().rpartition(":")
            if colon and _wordish(head):  # `superseded-by:1a2b3c4d`: a name, then its value
                start = candidate.end() - len(tail)
            if looks_generated(text[start : candidate.end()]):
                yield start, candidate.end()
            if candidate.end() >= window:
                break


# `Authorization: <scheme> <credential>` (Bearer, Basic, Bot, SSWS, Token, …) or no scheme at all.
_HEADER = re.compile(r"(?im)^[ \t]*(?:proxy-)?authorization[ \t]*:[ \t]*(?:[a-z][a-z0-9-]*[ \t]+)?(?P<value>\S+)")
# `Bearer <opaque token>` or `Basic <base64>` in prose.
_SCHEME = re.compile(r"(?i)(?<![a-z])(?:bearer|basic|token)[ \t]+(?P<value>[a-z0-9._~+/:-]{15,}[a-z0-9]=*)")
_COOKIE = re.compile(r"(?im)^[ \t]*(?:set-)?cookie[ \t]*:[ \t]*[^=;\s]+=(?P<value>[^;\s]+)")
# Command-line flags: `--password X`, `--auth-token=X`, `-pX` / `-p X`, `-u user:X`, `--user 'user:X'`.
_FLAG = re.compile(
    rf"(?i)(?:^|\s)--?[a-z-]*(?:{_SECRET_NAME})[a-z-]*(?:=|[ \t]+)['\"]?(?P<value>[^\s'\"]+)"
    r"|(?:^|\s)-p[ \t]?(?P<short>[^\s'\"-][^\s'\"]*)"
    r"|(?:^|\s)(?:-u|--user)[ \t]+['\"]?[^\s:'\"]+:(?P<user>[^\s'\"]+)"
)
# URLs: a password in the userinfo (`redis://:pw@host`), a token as the whole userinfo (a Sentry DSN's key), and a
# query parameter named like a secret (`sig=`, `X-Amz-Signature=`, `appid=`, `access_token=`).
_URL_PASSWORD = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@?#]*:(?P<value>[^\s/@?#]+)@")
_URL_USER = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*://(?P<value>[^\s:/@?#]{16,})(?::[^\s/@?#]*)?@")
_QUERY = re.compile(
    rf"(?i)[?&;][a-z0-9_.-]{{0,40}}(?:{_SECRET_NAME}|sig|appid|access|code)[a-z0-9_.-]{{0,40}}=(?P<value>[^&#\s\"'<>]+)"
)
# ~/.pgpass: `host:port:database:user:password`.
_PGPASS = re.compile(r"(?m)^[^\s:#]+:(?:\d+|\*):[^\s:]+:[^\s:]+:(?P<value>\S+)$")
# An AWS secret access key (40 characters of base64) in a text that names AWS or holds an access key id.
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])(?P<value>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_DISCORD_WEBHOOK = re.compile(r"discord(?:app)?\.com/api/webhooks/\d+/(?P<value>[A-Za-z0-9_-]{40,})")


def _aws_secret(value: str) -> bool:
    classes = sum(any(c in chars for c in value) for chars in _CHARACTER_CLASSES)
    return (classes == 3 or "/" in value or "+" in value) and high_entropy(value)


def _csv(text: str, lowered: str) -> Iterator[tuple[int, int]]:
    """The cells of a CSV column whose header names a secret (`password`, `Secret access key`, `automation_token`)."""
    secret_columns: list[int] = []
    width = 0  # the header's cells; 0 outside a table
    at = 0
    for line in text.split("\n"):
        cells = line.split(",")
        if len(cells) < 2 or (width and len(cells) != width):
            secret_columns, width = [], 0
        elif not width:  # the first line of a table is its header
            header = lowered[at : at + len(line)].split(",")
            secret_columns = [i for i, name in enumerate(header) if _WORD.search(name) and "public" not in name]
            width = len(cells)
        else:
            offset = at
            for i, cell in enumerate(cells):
                value = cell.strip().strip("\"'")
                if i in secret_columns and value and not any(c.isspace() for c in value) and high_entropy(value, 6):
                    start = offset + cell.index(value)
                    yield start, start + len(value)
                offset += len(cell) + 1
        at += len(line) + 1


def _placeholder(value: str) -> bool:
    return value.startswith(_PLACEHOLDER_START) or any(mark in value for mark in _PLACEHOLDER_INSIDE)


def _flags(text: str, lowered: str) -> Iterator[tuple[int, int]]:
    for match in _FLAG.finditer(text):
        for group in ("value", "short", "user"):
            start, end = match.span(group)
            if start >= 0 and high_entropy(text[start:end]):
                yield start, end


def _always(_value: str) -> bool:
    return True


RULES: tuple[ContextRule, ...] = (
    ContextRule("secret", _groups(_URL_PASSWORD, lambda value: not _placeholder(value)), hints=("://",)),
    ContextRule("secret", _groups(_URL_USER, looks_generated), hints=("://",)),
    ContextRule("secret", _groups(_QUERY, looks_generated), hints=("=",)),
    ContextRule("discord webhook", _groups(_DISCORD_WEBHOOK, _always), hints=("discord",)),
    ContextRule("aws secret key", _groups(_AWS_SECRET, _aws_secret), hints=("aws", "akia", "asia", "secret access")),
    ContextRule("secret", _groups(_HEADER, high_entropy), hints=("authorization",)),
    ContextRule("secret", _groups(_SCHEME, looks_generated), hints=("bearer", "basic", "token")),
    ContextRule("secret", _groups(_COOKIE, looks_generated), hints=("cookie",)),
    ContextRule("secret", _groups(_PGPASS, high_entropy), hints=(":",)),
    ContextRule("secret", _flags, hints=(" -",)),
    ContextRule("secret", _assignments),
    ContextRule("secret", _near_words),
    ContextRule("secret", _csv, hints=(",",)),
)
