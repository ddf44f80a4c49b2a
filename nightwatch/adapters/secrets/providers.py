"""Providers whose tokens carry their own prefix, for the providers detect-secrets has no plugin for.

Each entry is the provider's published token shape: a fixed prefix, then the alphabet and length of the rest. A token
is found only where a token can start (not inside a longer word) and is grown over the characters that continue it
by `Detector`, so a longer token than the documented one leaves no tail. Where detect-secrets has a plugin (Slack,
Stripe, GitHub, GitLab, AWS key ids, Discord, Twilio, Telegram, Mailchimp, npm's .npmrc, SendGrid, PyPI, Square,
Azure storage, JWT) patterns.py uses it instead.
"""

from __future__ import annotations

import re

# (kind, pattern); the pattern is matched where no letter, digit, `_` or `-` comes just before it.
PREFIXED: tuple[tuple[str, str], ...] = (
    ("google api key", r"AIza[0-9A-Za-z_-]{35}"),
    ("google oauth secret", r"GOCSPX-[0-9A-Za-z_-]{28}"),
    ("hugging face token", r"hf_[A-Za-z0-9]{30,}"),
    ("npm token", r"npm_[A-Za-z0-9]{36}"),
    ("groq key", r"gsk_[A-Za-z0-9]{40,}"),
    ("replicate token", r"r8_[A-Za-z0-9]{37}"),
    ("perplexity key", r"pplx-[A-Za-z0-9]{40,}"),
    ("docker token", r"dckr_pat_[A-Za-z0-9_-]{20,}"),
    ("digitalocean token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("heroku key", r"HRKU-[A-Za-z0-9_-]{20,}"),
    ("new relic key", r"NR(?:AK|JS|II|RA)-[A-Z0-9]{27}"),
    ("new relic key", r"[a-f0-9]{36}NRAL"),
    ("sentry token", r"sntry[su]_[A-Za-z0-9_=+/-]{40,}"),
    ("shopify token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("vault token", r"hv[sbr]\.[A-Za-z0-9_-]{20,}"),
    ("terraform token", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}"),
    ("doppler token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{20,}"),
    ("pulumi token", r"pul-[a-f0-9]{40}"),
    ("tailscale key", r"tskey-[a-z]+-[A-Za-z0-9-]{16,}"),
    ("linear key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),
    ("notion token", r"(?:ntn|secret)_[A-Za-z0-9]{43,}"),
    ("airtable token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("cloudflare key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"),
    ("atlassian token", r"ATATT3[A-Za-z0-9_=-]{100,}"),
    ("bitbucket token", r"ATBB[A-Za-z0-9_=.-]{28,}"),
    ("firebase key", r"AAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}"),
    ("supabase token", r"sb(?:p|_secret)_[A-Za-z0-9]{32,}"),
    ("launchdarkly key", r"(?:sdk|mob)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}"),
    ("mailgun key", r"key-[a-f0-9]{32}"),
    ("postman key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    ("figma token", r"fig[dou]_[A-Za-z0-9_-]{30,}"),
    ("mapbox token", r"[sp]k\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
    ("snyk token", r"snyk_[a-z]{2}_[A-Za-z0-9_-]{20,}"),
    ("contentful token", r"CFPAT-[A-Za-z0-9_-]{40,}"),
    ("planetscale token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,}"),
    ("dropbox token", r"sl\.[A-Za-z0-9_-]{100,}"),
    ("age secret key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("1password token", r"ops_eyJ[A-Za-z0-9_=-]{40,}"),
    ("grafana token", r"gl(?:sa|c)_[A-Za-z0-9_=+/-]{32,}"),
    ("netlify token", r"nfp_[A-Za-z0-9]{36,}"),
    ("vercel token", r"vc[pika]_[A-Za-z0-9]{40,}"),
    ("fly token", r"FlyV1 fm[12]_[A-Za-z0-9_+/=,-]{40,}"),
    ("fly token", r"fm[12]_[A-Za-z0-9_+/=]{60,}"),
    ("databricks token", r"dapi[a-f0-9]{32}(?:-\d)?"),
    ("stripe webhook secret", r"whsec_[A-Za-z0-9]{24,}"),
)


def prefixed(pattern: str) -> re.Pattern[str]:
    """`pattern`, matched only where a token may start."""
    return re.compile(rf"(?<![A-Za-z0-9_-]){pattern}")
