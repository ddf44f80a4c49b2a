from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adapters.slack.stack import ADMIN, Stack, running_stack
from tests.fake_slack import FakeSlack


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack() as slack:
        slack.add_user(ADMIN, name="ada")
        slack.add_user("U2", name="owen", is_owner=True)
        slack.add_user("U3", name="mo")
        yield slack


@pytest.fixture
def stack(home: Path, fake: FakeSlack) -> Iterator[Stack]:
    with running_stack(home, fake) as running:
        yield running
