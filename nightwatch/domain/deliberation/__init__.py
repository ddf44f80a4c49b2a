"""Deliberation: personas take turns in a thread and the lead decides.

The engine picks the panel, runs the rounds (context read, soul compiled, reply shaped and posted), asks the lead for
a verdict and has every participant reflect afterwards; deliberations whose process is gone are closed as
interrupted by the next command, and those a Slack replica ran are taken over by another (takeover.py, resume.py),
or handed over when it stops; a replica posts only while it holds the deliberation's lease (lease_guard.py).
A turn whose answer fails is asked for once more with the problem fed back, then skipped with a notice (answers.py);
each deliberation runs with the bounds it started with, however the settings are reloaded meanwhile (policy.py).
"""

from nightwatch.domain.deliberation.abandoned import STALE_AFTER
from nightwatch.domain.deliberation.engine import DeliberationEngine
from nightwatch.domain.deliberation.inputs import (
    PERSONAS_MAX,
    TOPIC_MAX,
    validate_optional_topic,
    validate_persona_list,
    validate_topic,
)
from nightwatch.domain.deliberation.lease_guard import HandedOverError, LeaseEndedError, LeaseLostError
from nightwatch.domain.deliberation.models import DeliberationRequest, DeliberationResult
from nightwatch.domain.deliberation.participants import find_persona
from nightwatch.domain.deliberation.policy import DeliberationPolicy
from nightwatch.domain.deliberation.replies import shape_reply
from nightwatch.domain.deliberation.takeover import LEASE_FOR, MAX_TAKEOVERS, renew_every

__all__ = [
    "LEASE_FOR",
    "MAX_TAKEOVERS",
    "PERSONAS_MAX",
    "STALE_AFTER",
    "TOPIC_MAX",
    "DeliberationEngine",
    "DeliberationPolicy",
    "DeliberationRequest",
    "DeliberationResult",
    "HandedOverError",
    "LeaseEndedError",
    "LeaseLostError",
    "find_persona",
    "renew_every",
    "shape_reply",
    "validate_optional_topic",
    "validate_persona_list",
    "validate_topic",
]
