"""/nightwatch pin, pins and unpin through the real Bolt app against the fake Slack; and the app's pin watch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nightwatch.domain.pins.models import PinKind, PinStatus
from nightwatch.domain.pins.ports import PinRepository
from tests.adapters.slack.stack import ADMIN, Stack, running_stack
from tests.fake_slack import FakeSlack
from tests.page_server import PageServer
from tests.waiting import wait_until


def text_of(answer: dict[str, object]) -> str:
    return f"{answer.get('text', '')} {answer.get('blocks', '')}"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "docs-root"
    (folder / "docs").mkdir(parents=True)
    (folder / "docs" / "ARCHITECTURE.md").write_text("# Architecture\nThe gateway terminates TLS.\n")
    (tmp_path / "secret.txt").write_text("outside every root\n")
    return folder


@pytest.fixture
def pages() -> Iterator[PageServer]:
    with PageServer() as server:
        yield server


@pytest.fixture
def stack(home: Path, fake: FakeSlack, root: Path) -> Iterator[Stack]:
    fake.add_channel("C1", "night-watch")
    env = {"NIGHTWATCH_PIN_ROOTS": str(root), "NIGHTWATCH_PIN_URL_HOSTS": "127.0.0.1"}
    with running_stack(home, fake, env=env) as running:
        yield running


def test_an_admin_pins_a_text_for_a_persona_and_anyone_lists_it(stack: Stack, fake: FakeSlack) -> None:
    answer = stack.command(fake, "pin Maya Deploys freeze on Fridays.\nNo exceptions.", user=ADMIN)
    assert 'Pinned note "Deploys freeze on Fridays. No exceptions." for Maya as #1' in text_of(answer)
    pin = stack.pins.list()[0].pin
    assert (pin.kind, pin.content, pin.project, pin.added_by) == (
        PinKind.TEXT,
        "Deploys freeze on Fridays.\nNo exceptions.",
        "night-watch",
        ADMIN,
    )
    listed = text_of(stack.command(fake, "pins", user="U3"))
    assert "Pinned context of night-watch" in listed
    assert "`#1` · Maya · note" in listed


def test_a_member_may_not_pin_or_unpin(stack: Stack, fake: FakeSlack) -> None:
    answer = stack.command(fake, "pin all Ship on Tuesdays.", user="U3")
    assert "Only Night Watch admins can pin context to personas" in text_of(answer)
    assert stack.pins.list() == []
    stack.command(fake, "pin all Ship on Tuesdays.", user=ADMIN)
    assert "Only Night Watch admins can unpin context" in text_of(stack.command(fake, "unpin 1", user="U3"))
    assert len(stack.pins.list()) == 1


def test_a_link_alone_is_a_page_fetched_once(stack: Stack, fake: FakeSlack, pages: PageServer) -> None:
    url = pages.text("/runbook", "<h1>Runbook</h1><p>Restart workers one by one.</p>", "text/html")
    answer = stack.command(fake, f"pin all <{url}|the runbook>", user=ADMIN)
    assert f"Pinned page {url} for every persona of night-watch" in text_of(answer)
    assert stack.pins.list()[0].pin.content == "Runbook\n\nRestart workers one by one."


def test_a_private_page_not_allowed_is_refused(home: Path, fake: FakeSlack, pages: PageServer) -> None:
    url = pages.text("/internal", "internal")
    with running_stack(home, fake) as stack:
        answer = stack.command(fake, f"pin Maya {url}", user=ADMIN)
    assert "private, loopback or reserved address" in text_of(answer)
    assert pages.requests == []


def test_a_file_under_a_root_is_pinned_by_its_path_relative_to_the_root(
    stack: Stack, fake: FakeSlack, root: Path
) -> None:
    answer = stack.command(fake, "pin file Maya docs/ARCHITECTURE.md", user=ADMIN)
    assert f"Pinned file {root / 'docs' / 'ARCHITECTURE.md'} for Maya" in text_of(answer)


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("../secret.txt", "climbs up with"),
        ("{outside}", "outside the folders NIGHTWATCH_PIN_ROOTS allows"),
        ("docs/link.md", "symbolic link"),
        ("docs/missing.md", "There is no file at"),
    ],
)
def test_files_outside_the_roots_or_behind_links_are_refused(
    stack: Stack, fake: FakeSlack, root: Path, path: str, says: str
) -> None:
    (root / "docs" / "link.md").symlink_to(root.parent / "secret.txt")
    answer = stack.command(fake, f"pin file Maya {path.format(outside=root.parent / 'secret.txt')}", user=ADMIN)
    assert says in text_of(answer)
    assert stack.pins.list() == []


def test_a_folder_or_a_glob_under_a_root_pins_each_file(stack: Stack, fake: FakeSlack, root: Path) -> None:
    (root / "docs" / "RUNBOOK.md").write_text("Restart the gateway with make restart.\n")
    (root / "docs" / "old").mkdir()
    (root / "docs" / "old" / "NOTES.md").write_text("Old notes.\n")
    (root / "docs" / "link.md").symlink_to(root.parent / "secret.txt")  # never followed
    answer = text_of(stack.command(fake, "pin file Maya docs", user=ADMIN))
    assert answer.count("Pinned file") == 2
    assert "link.md" not in answer
    assert "NOTES.md" not in answer
    answer = text_of(stack.command(fake, "pin file Maya docs/**/*.md recursive", user=ADMIN))
    assert "NOTES.md" in answer
    assert len(stack.pins.list()) == 3


def test_without_roots_slack_cannot_pin_files(home: Path, fake: FakeSlack, root: Path) -> None:
    with running_stack(home, fake) as stack:
        answer = stack.command(fake, f"pin file Maya {root / 'docs' / 'ARCHITECTURE.md'}", user=ADMIN)
    assert "Files can be pinned from Slack only under the folders NIGHTWATCH_PIN_ROOTS names" in text_of(answer)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("pin", "Say whose pin and what to pin"),
        ("pin Maya", "Give a URL or the text after the persona"),
        ("pin file Maya", "Give the file's path after the persona"),
        ("pin Nobody hello", "No persona is called 'Nobody'"),
        ("unpin x", "pin list"),
        ("pin remove 99", "There is no pin #99"),
    ],
)
def test_what_cannot_be_done_is_answered_with_what_to_do(stack: Stack, fake: FakeSlack, text: str, says: str) -> None:
    assert says in text_of(stack.command(fake, text, user=ADMIN))


def test_unpin_and_pin_remove_unpin_by_number(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, "pin Maya First.", user=ADMIN)
    stack.command(fake, "pin Maya Second.", user=ADMIN)
    assert 'Unpinned #1: note "First."' in text_of(stack.command(fake, "unpin #1", user=ADMIN))
    assert 'Unpinned #2: note "Second."' in text_of(stack.command(fake, "pin remove 2", user=ADMIN))
    assert "Nothing is pinned on *night-watch* yet" in text_of(stack.command(fake, "pins"))


def test_context_shows_the_pinned_part(stack: Stack, fake: FakeSlack) -> None:
    stack.command(fake, "pin Maya The admin API is VPN-only.", user=ADMIN)
    answer = text_of(stack.command(fake, "context Maya"))
    assert "pinned context" in answer
    assert '#1 note "The admin API is VPN-only."' in answer


def test_the_help_lists_the_pin_commands(stack: Stack, fake: FakeSlack) -> None:
    helped = text_of(stack.command(fake, "help"))
    for usage in ("pin <persona|all> <url|text>", "pin file <persona|all> <path>", "pins [persona]", "unpin <id>"):
        assert usage in helped


def test_the_app_watches_pinned_files_and_updates_their_snapshots(stack: Stack, fake: FakeSlack, root: Path) -> None:
    stored = stack.container.get(PinRepository)  # type: ignore[type-abstract]  # a Protocol key
    stack.slack.start_background()
    doc = root / "docs" / "ARCHITECTURE.md"
    stack.command(fake, "pin file all docs/ARCHITECTURE.md", user=ADMIN)
    wait_until(
        lambda: stored.list()[0].content.startswith("v2"),  # the stored row: no turn or list reads the file here
        "the watch to update the snapshot",
        nudge=lambda count: doc.write_text(f"v2 ({count}): TLS ends at the mesh.\n"),  # the watch starts on a thread
        nudge_every=0.5,
        timeout=15,
    )
    doc.unlink()
    wait_until(lambda: stored.list()[0].status is PinStatus.MISSING, "the watch to flag the deleted file", timeout=15)
    assert stored.list()[0].content.startswith("v2"), "its last content is kept"
