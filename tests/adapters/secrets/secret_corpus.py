"""A corpus of secrets (synthetic values of the right shape, never real keys) and of look-alikes that are not secrets.

Values are made from a seeded generator at import, so no token-shaped string sits in the source for a scanner to
flag, and every run sees the same corpus.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

_RANDOM = random.Random(20261121)
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
URLSAFE = ALNUM + "-_"
BASE64 = ALNUM + "+/"


def fake(alphabet: str, length: int) -> str:
    """A made-up value: `length` characters drawn from `alphabet`."""
    return "".join(_RANDOM.choice(alphabet) for _ in range(length))


def digits(length: int) -> str:
    return fake(string.digits[1:], 1) + fake(string.digits, length - 1)


def _b64url_json(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


def jwt(claims: dict[str, object]) -> str:
    """A JWT of the usual shape: header and payload are base64url JSON; the signature is made up."""
    return f"{_b64url_json({'alg': 'HS256', 'typ': 'JWT'})}.{_b64url_json(claims)}.{fake(URLSAFE, 43)}"


def pem(label: str, *, end: bool = True, sep: str = "\n") -> str:
    """A private key block with a made-up base64 body."""
    body = sep.join([fake(BASE64, 64) for _ in range(3)] + [fake(BASE64, 20) + "=="])
    block = f"-----BEGIN {label}-----{sep}{body}"
    return f"{block}{sep}-----END {label}-----" if end else block


@dataclass(frozen=True)
class Secret:
    """A text `before + value + after` whose `value` is a secret of `kind`."""

    name: str
    before: str
    value: str
    after: str
    kind: str

    @property
    def text(self) -> str:
        return self.before + self.value + self.after

    @property
    def redacted(self) -> str:
        return f"{self.before}[redacted {self.kind}]{self.after}"


SECRETS = (
    Secret(
        "slack bot token",
        "Our bot token ",
        f"xoxb-{digits(12)}-{digits(13)}-{fake(ALNUM, 24)}",
        " leaked.",
        "slack token",
    ),
    Secret(
        "slack user token",
        "",
        f"xoxp-{digits(12)}-{digits(12)}-{digits(13)}-{fake('0123456789abcdef', 32)}",
        " is mine",
        "slack token",
    ),
    Secret("slack workspace token", "use ", f"xoxa-2-{digits(12)}-{fake(ALNUM, 24)}", "", "slack token"),
    Secret("slack refresh token", "refresh with ", f"xoxr-{digits(12)}-{fake(ALNUM, 30)}", ".", "slack token"),
    Secret(
        "slack browser token",
        "(",
        f"xoxc-{digits(10)}-{digits(10)}-{digits(13)}-{fake('0123456789abcdef', 64)}",
        ")",
        "slack token",
    ),
    Secret("slack config token", "config: ", f"xoxe-1-{fake(ALNUM, 40)}", "", "slack token"),
    Secret("slack rotating token", "", f"xoxe.xoxp-1-{fake(ALNUM, 60)}", " expires in 12h", "slack token"),
    Secret(
        "slack app token",
        "app token ",
        f"xapp-1-A{fake(UPPER_DIGITS, 10)}-{digits(13)}-{fake('0123456789abcdef', 64)}",
        ".",
        "slack token",
    ),
    Secret(
        "slack webhook",
        "post to ",
        f"https://hooks.slack.com/services/T{fake(UPPER_DIGITS, 8)}/B{fake(UPPER_DIGITS, 8)}/{fake(ALNUM, 24)}",
        " nightly",
        "slack webhook",
    ),
    Secret("anthropic key", "key ", f"sk-ant-api03-{fake(URLSAFE, 93)}AA", " leaked, rotate?", "anthropic key"),
    Secret("anthropic admin key", "", f"sk-ant-admin01-{fake(URLSAFE, 93)}AA", "", "anthropic key"),
    Secret("openai legacy key", "OPENAI ", f"sk-{fake(ALNUM, 20)}T3BlbkFJ{fake(ALNUM, 20)}", ".", "openai key"),
    Secret("openai project key", "", f"sk-proj-{fake(URLSAFE, 74)}T3BlbkFJ{fake(URLSAFE, 74)}", "", "openai key"),
    Secret("openai service account key", "", f"sk-svcacct-{fake(URLSAFE, 60)}", " in CI", "openai key"),
    Secret("github classic token", "token ", f"ghp_{fake(ALNUM, 36)}", " in the repo", "github token"),
    Secret("github oauth token", "", f"gho_{fake(ALNUM, 36)}", "", "github token"),
    Secret("github app token", "", f"ghs_{fake(ALNUM, 36)}", ".", "github token"),
    Secret("github refresh token", "", f"ghr_{fake(ALNUM, 76)}", "", "github token"),
    Secret("github fine-grained token", "", f"github_pat_{fake(ALNUM, 22)}_{fake(ALNUM, 59)}", "", "github token"),
    Secret("gitlab token", "", f"glpat-{fake(URLSAFE, 20)}", " for the runner", "gitlab token"),
    Secret("gitlab runner token", "", f"GR1348941{fake(URLSAFE, 20)}", "", "gitlab token"),
    Secret("aws access key id", "id ", f"AKIA{fake(UPPER_DIGITS, 16)}", " was public", "aws access key"),
    Secret("aws temporary key id", "", f"ASIA{fake(UPPER_DIGITS, 16)}", "", "aws access key"),
    Secret("aws secret key", 'aws_secret_access_key = "', fake(BASE64, 40), '"', "aws secret key"),
    Secret(
        "jwt", "session ", jwt({"sub": "1234567890", "name": "Ada", "iat": 1516239022}), " expired", "json web token"
    ),
    Secret(
        "jwt bearer header",
        "Authorization: Bearer ",
        jwt({"sub": "svc-deploy", "scope": "admin"}),
        "",
        "json web token",
    ),
    Secret("jwt in a cookie", "Cookie: session=", jwt({"uid": 42, "exp": 1795000000}), "; Path=/", "json web token"),
    Secret("rsa private key", "Key:\n", pem("RSA PRIVATE KEY"), "\nrotate it", "private key"),
    Secret("openssh private key", "", pem("OPENSSH PRIVATE KEY"), "", "private key"),
    Secret("encrypted private key", "", pem("ENCRYPTED PRIVATE KEY"), "", "private key"),
    Secret("private key on one line", "pasted ", pem("EC PRIVATE KEY", sep=" "), " by mistake", "private key"),
    Secret("private key cut short", "half a key:\n", pem("RSA PRIVATE KEY", end=False), "\nThanks", "private key"),
    Secret("basic auth url", "git remote https://deploy:", fake(ALNUM, 16), "@git.example.com/app.git", "password"),
    Secret("database url", "postgresql+psycopg://app:", fake(ALNUM, 20), "@db.internal:5432/nightwatch", "password"),
    Secret("password assignment", "password=", fake(ALNUM, 16), " for staging", "secret"),
    Secret("quoted api key", 'api_key: "', fake(ALNUM, 32), '"', "secret"),
    Secret("token in an env line", "SLACK_SIGNING_TOKEN=", fake(ALNUM, 32), "", "secret"),
    Secret("client secret", "client_secret := ", fake(URLSAFE, 40), "", "secret"),
    Secret("yaml db password", "db_password: ", fake(ALNUM, 20), "\nhost: db", "secret"),
    Secret(
        "opaque bearer token",
        "curl -H 'Authorization: Bearer ",
        fake(URLSAFE, 40),
        "' https://api.example.com",
        "secret",
    ),
    Secret(
        "basic auth header",
        "Authorization: Basic ",
        base64.b64encode(f"deploy:{fake(ALNUM, 16)}".encode()).decode(),
        "",
        "secret",
    ),
    Secret("stripe live key", "", f"sk_live_{fake(ALNUM, 24)}", "", "stripe key"),
    Secret("sendgrid key", "", f"SG.{fake(URLSAFE, 22)}.{fake(URLSAFE, 43)}", "", "sendgrid key"),
    Secret("pypi token", "", f"pypi-AgEIcHlwaS5vcmc{fake(URLSAFE, 80)}", "", "pypi token"),
    Secret("square secret", "", f"sq0csp-{fake(URLSAFE, 43)}", "", "square secret"),
)

NOT_SECRETS = (
    "Fixed in commit 3f9a1c2b4d5e6f708192a3b4c5d6e7f809102a3b.",
    "Reverted 3f9a1c2 after the incident.",
    "Request 123e4567-e89b-12d3-a456-426614174000 failed twice.",
    "Forget lesson 3f9a1c2b; it was superseded.",
    "Pin detect-secrets==1.5.0 and slack-bolt>=1.18,<2.",
    "Upgrade to v2.0.0-rc.1 before the freeze.",
    "See https://docs.example.com/guide?page=2&lang=en#setup for details.",
    "Clone ssh://git@github.com/example/night-watch.git to start.",
    "The admin UI lives at https://admin.example.com:8443/login.",
    "password=required is enforced on the signup form.",
    "Set token=none in the local profile.",
    "password: optional for service accounts.",
    "secret=${DB_SECRET} comes from the vault at deploy time.",
    "api_key=<your key here> in the example config.",
    "token_ttl=3600 and max_tokens=4096 are the defaults.",
    "Post in C0123ABCDEF, ping U012ABCDEF, thread 1700000000.123456.",
    "Set SLACK_BOT_TOKEN=xoxb-… and ANTHROPIC_API_KEY=sk-ant-… before running.",
    "Rotate the xoxb-tokens and the xapp-token monthly.",
    "Branch fix/xoxb-token-leak is merged; so is fix/xoxb-token-2024.",
    "Use Bearer authentication, not Basic authentication, for the public API.",
    "AWS access key ids start with AKIA and are 20 characters long.",
    "Classic GitHub tokens start with ghp_ and fine-grained ones with github_pat_.",
    "A JWT starts with eyJ because its header is JSON; eyJhbGciOiJub25lIn0 alone is a header.",
    "eyJub3Q.eyJqc29u is not a token at all.",
    "Never paste a BEGIN RSA PRIVATE KEY block into Slack.",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCo\n-----END PUBLIC KEY-----",
    "Image digest sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.",
    "Allow 10.0.0.1 and 203.0.113.7 through the firewall.",
    "Mail alice@example.com about the outage.",
    "Tracked as SEC-1234 and PR #1234.",
    "The file is agents/maya/memories/default/main.md.",
    "Password reset tokens expire after 15 minutes.",
    "Use python:3.11-slim as the base image.",
    "- 📌 Never merge a migration without a rollback script. <!-- seen:3 -->",
    "## 2026-11-21 · deliberation · https://example.slack.com/archives/C1/p1700000000123456",
    "Deployed at 2026-11-21T09:00:00Z.",
    "api_key: environment_variable",
    "pwd: /home/deploy/app",
    "secret_key_base: development",
    "Stripe test keys start with sk_test_ and live keys with sk_live_.",
    "The OpenAI SDK reads sk- keys from OPENAI_API_KEY.",
    "Commit message: 'bump token=abc123'",
    "Use the ASIA-Pacific region and the ACCA exam notes.",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "Our bot token [redacted slack token] leaked; [redacted anthropic key] too.",
    "password=[redacted secret] and https://deploy:[redacted password]@git.example.com",
)
