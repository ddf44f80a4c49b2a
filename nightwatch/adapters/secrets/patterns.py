"""Which secrets Night Watch recognises in free text, each with its kind in words: detect-secrets' rules, then ours.

Where detect-secrets (Yelp's, kept in pyproject) has a plugin for a provider, its own compiled patterns (`denylist`)
and checks (a JWT must decode to JSON) are used as they are, not rewritten: Slack, Stripe, GitHub, GitLab, AWS key
ids and secrets beside `aws`, OpenAI, JWT, SendGrid, PyPI, Square, Basic-auth URLs, Discord bot tokens, Twilio SIDs
and API keys, Telegram bot tokens, Mailchimp keys, npm's `.npmrc` `_authToken`, and Azure storage `AccountKey=`. A
plugin's maintainers track its provider's format, so a change there reaches us with the library; its keyword list
(`DENYLIST`) and Shannon entropy helper drive our context rules too. Its `analyze_string` is not called, because it
yields values, not places, and for some plugins not the secret: the GitHub and GitLab patterns yield their first
group (`ghp`, `glpat`) and the JWT pattern stops before the signature. So each `Detector` says which part of a match
is the secret, and grows a token's match over the characters that continue it, so no tail of a token is left behind.

Ours cover only what it lacks: providers with their own token prefix (providers.py: Google, Hugging Face, npm,
Groq, Docker Hub, DigitalOcean, Vault, Shopify, Sentry, ...), Anthropic keys, OpenAI project keys, Slack tokens its
plugin misses, GitHub fine-grained tokens, the whole body of a private key (its plugin finds only the BEGIN line),
and secrets known by where they stand (context.py: settings, prose, headers, flags, URLs, CSV columns, .pgpass).
Its generic hex and base64 high-entropy plugins are left out on purpose: on free text they would eat commit hashes,
UUIDs and lesson ids; context.py asks for entropy only next to a word that names a secret. No plugin's network
`verify` is ever called.

Speed: patterns that start with a literal are searched fast by `re`; case-insensitive ones are not, so they run only
when the lower-cased text holds one of their `hints`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.basic_auth import BasicAuthDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from nightwatch.adapters.secrets.context import RULES, ContextRule, high_entropy
from nightwatch.adapters.secrets.providers import PREFIXED, prefixed

Pattern = re.Pattern[str]
__all__ = ["DETECTORS", "FINDERS", "Detector", "Finder", "high_entropy"]

_TOKEN_TAIL = re.compile(r"[A-Za-z0-9_-]*")  # what continues a token


def _always(_secret: str) -> bool:
    return True


@dataclass(frozen=True)
class Detector:
    """One pattern for one kind of secret; `group` is the part of a match that is the secret (0: all of it)."""

    kind: str
    pattern: Pattern
    group: int = 0
    extend: bool = True  # grow the match over the token characters that follow it
    valid: Callable[[str], bool] = _always  # a last check of the secret's text
    hints: tuple[str, ...] = ()  # lower-case; the pattern runs only on texts that hold one of them
    on_lowered: bool = False  # the pattern is written in lower case and runs on the lower-cased text
    starts: Pattern | None = None  # where a secret may begin: the pattern is tried there only

    def spans(self, text: str, lowered: str) -> Iterator[tuple[int, int]]:
        """Where this detector's secrets are in `text` (`lowered` is it lower-cased, same length), as (start, end)."""
        if self.hints and not any(hint in lowered for hint in self.hints):
            return
        reach = 0  # a match inside the last (grown) one adds nothing: skipping it keeps long runs linear
        for match in self._matches(lowered if self.on_lowered else text):
            start, end = match.span(self.group)
            if start < reach or start == end or not self.valid(text[start:end]):
                continue
            tail = _TOKEN_TAIL.match(text, end) if self.extend else None
            reach = tail.end() if tail else end
            yield start, reach

    def _matches(self, haystack: str) -> Iterator[re.Match[str]]:
        if self.starts is None:
            yield from self.pattern.finditer(haystack)
            return
        for start in self.starts.finditer(haystack):  # one try per start, not one per character
            match = self.pattern.match(haystack, start.start())
            if match:
                yield match


Finder = Detector | ContextRule  # both say `kind` and yield `spans(text, lowered)`


def _plugin(
    kind: str,
    patterns: Iterable[Pattern],
    *,
    group: int = 0,
    extend: bool = True,
    valid: Callable[[str], bool] = _always,
    hints: tuple[str, ...] = (),
    starts: Pattern | None = None,
) -> tuple[Detector, ...]:
    """A detector for every pattern of a detect-secrets plugin's `denylist`."""
    return tuple(Detector(kind, pattern, group, extend, valid, hints, starts=starts) for pattern in patterns)


def _word_start(prefix: str) -> Pattern:
    """Where a token that begins with `prefix` can start: not inside another token (the literal first is fast)."""
    return re.compile(rf"{re.escape(prefix)}(?<![A-Za-z0-9_-]{re.escape(prefix)})")


_SLACK_TOKEN, _SLACK_WEBHOOK = SlackDetector.denylist
_AWS_KEY_ID, _AWS_SECRET = AWSKeyDetector.denylist

_PRIVATE_KEY = re.compile(
    r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:(?:(?!-----BEGIN).)*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"  # the whole block, or one cut short:
    r"|(?:\s*[A-Za-z][A-Za-z-]*:[^\n]*)*(?:\s*[A-Za-z0-9+/=]{16,})*)",  # its header lines and base64 lines
    re.DOTALL,
)
_PUTTY_KEY = re.compile(r"PuTTY-User-Key-File-\d:.*?(?:Private-MAC:\s*[0-9a-fA-F]+|\Z)", re.DOTALL)
_SLACK_ANY = re.compile(r"x(?:oxe\.xox[a-z]|ox[a-z]|app)-\d[A-Za-z0-9]*(?:-[A-Za-z0-9]+)+")  # a number, then parts
_ANTHROPIC = re.compile(r"sk-ant-[A-Za-z0-9_-]{8,}")
_OPENAI_PROJECT = re.compile(r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}")
_GITHUB_FINE_GRAINED = re.compile(r"github_pat_[A-Za-z0-9_]{22,}")

# Most specific first: when findings overlap, the earlier detector's kind names the merged one.
DETECTORS: tuple[Detector, ...] = (
    Detector("private key", _PRIVATE_KEY, extend=False),
    Detector("private key", _PUTTY_KEY, extend=False),
    Detector("slack token", _SLACK_TOKEN, hints=("xox",)),
    Detector("slack token", _SLACK_ANY),
    Detector("slack webhook", _SLACK_WEBHOOK, hints=("hooks.slack.com",)),
    Detector("anthropic key", _ANTHROPIC),
    # The OpenAI and JWT patterns retry at every `sk-` / `eyJ` of a long run (quadratic); words start them instead.
    *_plugin("openai key", OpenAIDetector.denylist, hints=("t3blbkfj",), starts=_word_start("sk-")),
    Detector("openai key", _OPENAI_PROJECT),
    *_plugin("github token", GitHubTokenDetector.denylist),
    Detector("github token", _GITHUB_FINE_GRAINED),
    *_plugin("gitlab token", GitLabTokenDetector.denylist),
    Detector("aws access key", _AWS_KEY_ID),
    Detector("aws secret key", _AWS_SECRET, group=1, hints=("aws",)),
    *_plugin(
        "json web token", JwtTokenDetector.denylist, valid=JwtTokenDetector.is_formally_valid, starts=_word_start("eyJ")
    ),
    *_plugin("stripe key", StripeDetector.denylist, hints=("k_live_",)),
    *_plugin("sendgrid key", SendGridDetector.denylist),
    *_plugin("pypi token", PypiTokenDetector.denylist),
    *_plugin("square secret", SquareOAuthDetector.denylist),
    *_plugin("discord token", DiscordBotTokenDetector.denylist),
    *_plugin("twilio key", TwilioKeyDetector.denylist, hints=("ac", "sk")),
    *_plugin("telegram token", TelegramBotTokenDetector.denylist, hints=(":",)),
    *_plugin("mailchimp key", MailchimpDetector.denylist, hints=("-us",)),
    *_plugin("azure storage key", AzureStorageKeyDetector.denylist, hints=("accountkey",)),
    *_plugin("npm token", NpmDetector.denylist, group=1, hints=("_authtoken",)),
    *(Detector(kind, prefixed(pattern)) for kind, pattern in PREFIXED),
    *_plugin("password", BasicAuthDetector.denylist, group=1, extend=False),
)
"""Every finder, most specific first: the shapes above, then what context.py knows by where a secret stands."""
FINDERS: tuple[Finder, ...] = (*DETECTORS, *RULES)
