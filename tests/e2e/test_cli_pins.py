"""`nightwatch pin` end to end: real SQLite, real files, the real Anthropic SDK against the fake server, a local page.

A pinned file reaches the prompts of the next deliberation; an edit reaches the one after; a deletion is flagged in
`pin list` and in the prompt, never a crash. Bad arguments exit 2 before any database is opened.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env, run
from tests.fake_anthropic import FakeAnthropic
from tests.page_server import PageServer

TOPIC = "Should the gateway terminate TLS?"


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    monkeypatch.setenv("NIGHTWATCH_LLM", "offline")
    return home


@pytest.fixture
def doc(tmp_path: Path) -> Path:
    path = tmp_path / "repo" / "docs" / "ARCHITECTURE.md"
    path.parent.mkdir(parents=True)
    path.write_text("# Architecture\nThe gateway terminates TLS; services talk over mTLS.\n")
    return path


@pytest.fixture
def claude(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        monkeypatch.setenv("NIGHTWATCH_LLM", "anthropic")
        yield fake


def maya_prompts(fake: FakeAnthropic, since: int = 0) -> list[str]:
    """The system prompts of Maya's turns (her soul comes first; reflections have their own), from request `since`."""
    systems = ("\n\n".join(block["text"] for block in r.body["system"]) for r in fake.requests[since:])
    return [system for system in systems if system.startswith("# You are Maya")]


def test_a_pinned_file_follows_the_disk_from_one_deliberation_to_the_next(
    capsys: pytest.CaptureFixture[str], claude: FakeAnthropic, doc: Path
) -> None:
    code, out, err = run(capsys, "pin", "add", "maya", str(doc), "--project", "demo")
    assert code == 0, err
    assert out.startswith(f"Pinned file {doc} for Maya as #1")

    code, out, _ = run(capsys, "deliberate", TOPIC, "--project", "demo", "--personas", "maya", "--json")
    assert code == 0
    turns = {turn["persona"]: turn["pins_injected"] for turn in json.loads(out)["turns"]}
    assert turns["Maya"] == 1
    first = maya_prompts(claude)
    assert first
    assert f"[pin 1 · file {doc}]\n\\# Architecture\nThe gateway terminates TLS" in first[0]

    seen = len(claude.requests)
    doc.write_text("# Architecture\nThe gateway moved to Envoy; TLS ends at the mesh.\n")
    assert run(capsys, "deliberate", TOPIC, "--project", "demo", "--personas", "maya")[0] == 0
    second = maya_prompts(claude, seen)
    assert "The gateway moved to Envoy" in second[0]
    assert "services talk over mTLS" not in second[0]

    seen = len(claude.requests)
    doc.unlink()
    code, out, _ = run(capsys, "pin", "list")
    assert code == 0
    assert "FILE MISSING since" in out
    assert run(capsys, "deliberate", TOPIC, "--project", "demo", "--personas", "maya")[0] == 0
    third = maya_prompts(claude, seen)
    assert "· file missing since" in third[0]
    assert "The gateway moved to Envoy" in third[0], "the last content stays, marked stale"


def test_context_shows_the_pins_their_tokens_and_cuts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, doc: Path
) -> None:
    doc.write_text("\n".join(f"Line {n}: the gateway terminates TLS for every service." for n in range(400)))
    monkeypatch.setenv("NIGHTWATCH_PIN_TOKEN_BUDGET", "300")
    assert run(capsys, "pin", "add", "maya", str(doc), "--project", "demo")[0] == 0
    assert run(capsys, "pin", "add", "--shared", "--text", "Deploys freeze on Fridays.", "--project", "demo")[0] == 0
    code, out, _ = run(capsys, "context", "maya", "--project", "demo")
    assert code == 0
    assert "pinned context" in out
    assert "2 pinned (budget 300), 1 cut to fit" in out
    assert f"#1 file {doc} · " in out
    assert "· cut" in out
    assert '#2 note "Deploys freeze on Fridays." (every persona) · 8 of 8 tokens' in out


def test_a_relative_path_is_pinned_as_the_file_in_the_current_folder(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, doc: Path
) -> None:
    monkeypatch.chdir(doc.parent.parent)
    code, out, err = run(capsys, "pin", "add", "maya", "docs/ARCHITECTURE.md", "--project", "demo")
    assert code == 0, err
    assert str(doc) in out


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["pin", "add", "maya", "../../etc/passwd"], "climbs up with '..'"),
        (["pin", "add", "maya", "docs/a.md", "--shared"], "--shared pins for every persona"),
        (["pin", "add", "maya"], "Name the persona (or all) and what to pin"),
        (["pin", "add", "maya", "docs/a.md", "--text", "x"], "not both"),
        (["pin", "add", "maya", "ftp://example.com/a"], "Only http:// and https://"),
        (["pin", "add", "maya", "https://user:pw@example.com/"], "user name or password"),
        (["pin", "add", "m@ya", "docs/a.md"], "characters that are not allowed"),
        (["pin", "add", "all", "--text", "bell\x07"], "control character"),
        (["pin", "remove", "abc"], "pin list"),
        (["pin", "refresh", "0"], "pin list"),
        (["pin", "list", "--project", "a/b"], "not usable"),
    ],
)
def test_bad_arguments_exit_2_before_the_database_is_opened(
    capsys: pytest.CaptureFixture[str], home: Path, argv: list[str], says: str
) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("error: ")
    assert says in err
    assert not (home / "nightwatch.db").exists()


def test_with_roots_set_the_cli_is_held_to_them(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, doc: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("not for the model\n")
    monkeypatch.setenv("NIGHTWATCH_PIN_ROOTS", str(doc.parent.parent))
    code, _, err = run(capsys, "pin", "add", "maya", str(outside), "--project", "demo")
    assert code == 2
    assert "outside the folders NIGHTWATCH_PIN_ROOTS allows" in err
    assert run(capsys, "pin", "add", "maya", str(doc), "--project", "demo")[0] == 0
    link = doc.parent / "link.md"
    link.symlink_to(outside)
    code, _, err = run(capsys, "pin", "add", "maya", str(link), "--project", "demo")
    assert code == 2
    assert "symbolic link" in err
    assert "not for the model" not in run(capsys, "pin", "list")[1]


def test_a_page_is_pinned_from_an_allowed_local_host_and_refused_otherwise(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with PageServer() as server:
        url = server.text("/threat-model", "<h1>Threat model</h1><p>The admin API is VPN-only.</p>", "text/html")
        code, _, err = run(capsys, "pin", "add", "maya", url, "--project", "demo")
        assert code == 2
        assert "private, loopback or reserved address" in err
        assert server.requests == []
        monkeypatch.setenv("NIGHTWATCH_PIN_URL_HOSTS", "127.0.0.1")
        code, out, err = run(capsys, "pin", "add", "maya", url, "--project", "demo")
        assert code == 0, err
        assert f"Pinned page {url} for Maya" in out
        server.text("/threat-model", "Threat model v2: the admin API is gone.")
        code, out, _ = run(capsys, "pin", "refresh")
        assert code == 0
        assert "fetched again" in out
    code, out, _ = run(capsys, "pin", "refresh")
    assert code == 1, "the server is gone: the pin keeps its snapshot and the exit code says so"
    assert "not fetched, the pin keeps its snapshot" in out
    code, out, _ = run(capsys, "pin", "list", "maya")
    assert f"page {url}" in out


def test_project_wide_pins_reach_every_persona_and_a_persona_s_own_go_with_it(
    capsys: pytest.CaptureFixture[str], doc: Path
) -> None:
    assert run(capsys, "pin", "add", "all", "--text", "Deploys freeze on Fridays.", "--project", "demo")[0] == 0
    assert run(capsys, "pin", "add", "--shared", str(doc), "--project", "demo")[0] == 0
    assert run(capsys, "personas", "create", "Nova", "--role", "Data engineer")[0] == 0
    assert run(capsys, "pin", "add", "nova", "--text", "Backfills run on replicas.", "--project", "demo")[0] == 0
    code, out, _ = run(capsys, "pin", "list", "nova", "--project", "demo")
    assert code == 0
    assert [line.split()[1] for line in out.splitlines()] == ["every", "every", "Nova"]
    assert run(capsys, "personas", "rename", "nova", "Nova Prime")[0] == 0
    assert "Nova Prime" in run(capsys, "pin", "list", "--project", "demo")[1]
    code, out, _ = run(capsys, "personas", "delete", "Nova Prime", "--yes")
    assert code == 0
    assert "its pin was removed" in out
    listed = run(capsys, "pin", "list")[1]
    assert "Backfills" not in listed
    assert listed.count("every persona") == 2
    code, out, _ = run(capsys, "pin", "remove", "2")
    assert (code, out.strip()) == (0, f"Unpinned #2: file {doc}")
    code, _, err = run(capsys, "pin", "remove", "2")
    assert code == 1
    assert "There is no pin #2" in err


def test_context_full_lists_what_went_in_and_show_prints_the_system_prompt(
    capsys: pytest.CaptureFixture[str], doc: Path
) -> None:
    doc.write_text("The gateway terminates TLS for every service.")
    assert run(capsys, "pin", "add", "maya", str(doc), "--project", "demo")[0] == 0
    run(capsys, "memory", "add", "maya", "Rotate every signing key after a leak.", "--category", "patterns")
    run(capsys, "memory", "add", "priya", "The login tests cover token expiry.", "--project", "demo")
    run(capsys, "memory", "add", "maya", "Audit the vault after every key rotation.", "--project", "demo")
    assert run(capsys, "share", "priya", "--with", "maya", "--project", "demo")[0] == 0

    code, out, _ = run(capsys, "context", "maya", "--project", "demo", "--topic", "key rotation", "--full")
    assert code == 0
    assert "Injected lessons (1):" in out
    assert "Audit the vault after every key rotation." in out
    assert "Rotate every signing key" not in out  # another project's
    assert f"#1  file {doc} · " in out
    assert "· whole" in out
    assert "Shared by teammates (1):" in out
    assert "from Priya (lesson): The login tests cover token expiry." in out

    code, shown, _ = run(capsys, "context", "maya", "--project", "demo", "--topic", "key rotation", "--show")
    assert code == 0
    assert "<memory>" in shown
    assert "Audit the vault after every key rotation." in shown
    assert "The gateway terminates TLS for every service." in shown
    assert "The login tests cover token expiry." in shown
    assert "key rotation" in shown  # the interaction context, topic included
    assert "Injected lessons" not in shown


def test_a_folder_pins_each_text_file_in_it_and_skips_what_is_not_text(
    capsys: pytest.CaptureFixture[str], doc: Path
) -> None:
    docs = doc.parent
    (docs / "RUNBOOK.md").write_text("Restart the gateway with make restart.\n")
    (docs / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (docs / "deep").mkdir()
    (docs / "deep" / "NOTES.md").write_text("Deep notes.\n")
    code, out, err = run(capsys, "pin", "add", "maya", str(docs), "--project", "demo")
    assert code == 0, err
    assert out.count("Pinned file") == 2
    assert f"Skipped {docs / 'logo.png'}:" in out
    listed = run(capsys, "pin", "list", "maya", "--project", "demo")[1]
    assert "ARCHITECTURE.md" in listed
    assert "RUNBOOK.md" in listed
    assert "NOTES.md" not in listed  # not recursive unless asked

    code, out, _ = run(capsys, "pin", "add", "maya", str(docs), "--recursive", "--project", "demo")
    assert code == 0
    assert "NOTES.md" in run(capsys, "pin", "list", "maya", "--project", "demo")[1]


def test_a_glob_pins_the_files_it_matches_and_more_than_50_are_refused(
    capsys: pytest.CaptureFixture[str], doc: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = doc.parent
    (docs / "notes.txt").write_text("Not markdown.\n")
    code, out, err = run(capsys, "pin", "add", "maya", f"{docs}/*.md", "--project", "demo")
    assert code == 0, err
    assert out.count("Pinned file") == 1
    assert "notes.txt" not in run(capsys, "pin", "list", "maya", "--project", "demo")[1]

    many = docs / "many"
    many.mkdir()
    for n in range(51):
        (many / f"note{n}.md").write_text(f"Note {n}.\n")
    code, _, err = run(capsys, "pin", "add", "maya", str(many), "--project", "demo")
    assert code == 2
    assert "names 51 files; at most 50 can be pinned at once" in err

    monkeypatch.setenv("NIGHTWATCH_PIN_ROOTS", str(many))
    code, _, err = run(capsys, "pin", "add", "maya", f"{docs}/*.md", "--project", "demo")
    assert code == 2
    assert "outside the folders NIGHTWATCH_PIN_ROOTS allows" in err


def test_a_removed_pin_s_number_is_never_given_to_the_next_pin(capsys: pytest.CaptureFixture[str]) -> None:
    for text in ("Deploys freeze on Fridays.", "Every migration is reversible."):
        assert run(capsys, "pin", "add", "maya", "--text", text, "--project", "demo")[0] == 0
    assert run(capsys, "pin", "remove", "2")[1].strip() == 'Unpinned #2: note "Every migration is reversible."'
    code, out, _ = run(capsys, "pin", "add", "maya", "--text", "Backfills run on replicas.", "--project", "demo")
    assert code == 0
    assert " as #3 " in out
    code, out, err = run(capsys, "pin", "remove", "2")
    assert (code, out) == (1, "")
    assert err.startswith("error: There is no pin #2")
    assert [line.split()[0] for line in run(capsys, "pin", "list")[1].splitlines()] == ["#1", "#3"]
