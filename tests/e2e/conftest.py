from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adapters.slack.stack import ADMIN
from tests.e2e.slack_live import LiveApp, live_app
from tests.fake_slack import FakeSlack


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    with FakeSlack() as slack:
        slack.add_user(ADMIN, name="ada")
        slack.add_channel("C2", "night-watch")
        yield slack


@pytest.fixture
def live(home: Path, fake: FakeSlack) -> Iterator[LiveApp]:
    with live_app(home, fake) as app:
        yield app
