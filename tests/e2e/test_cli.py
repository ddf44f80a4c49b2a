"""The `nightwatch` command end to end: a fresh data root, the offline model, real SQLite and memory files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from freezegun import freeze_time

from nightwatch.adapters.encoder import embeddings
from tests.e2e.cli import clean_env, run
from tests.fake_anthropic import FakeAnthropic, unauthorized

TOPIC = "Should we add rate limiting to the login endpoint?"


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    return home


def test_a_fresh_install_deliberates_offline_in_the_terminal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "deliberate", TOPIC, "--project", "demo")
    assert code == 0, err
    assert "offline model" in err  # the one-line notice
    assert "Carlos (Tech Lead / Architect)" in out
    assert "decision:" in out
    assert "remembered:" in out
    assert "[offline]" in out


def test_a_second_run_injects_the_lessons_the_first_recorded(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    code, out, _ = run(capsys, "deliberate", TOPIC, "--project", "demo", "--json")
    assert code == 0
    first = json.loads(out)
    assert first["verdict"]["decision"] in {"APPROVE", "CHANGES", "HUMAN"}
    assert first["lessons"], "the first run should record lessons"
    assert all(turn["lessons_injected"] == 0 for turn in first["turns"])
    assert {"persona", "id", "text"} <= set(first["lessons"][0])

    code, out, _ = run(capsys, "deliberate", TOPIC, "--project", "demo", "--json")
    second = json.loads(out)
    assert code == 0
    assert any(turn["lessons_injected"] > 0 for turn in second["turns"])
    recorded_by = {lesson["persona"].lower() for lesson in first["lessons"]}
    assert all((home / "agents" / slug / "memories" / "demo" / "main.md").exists() for slug in recorded_by)


def test_named_personas_take_part(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "deliberate", "Flaky test in CI", "--personas", "priya,maya", "--json")
    assert code == 0
    speakers = {turn["persona"] for turn in json.loads(out)["turns"]}
    assert {"Priya", "Maya"} <= speakers


def test_persona_lifecycle_moves_and_archives_memory(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    assert run(capsys, "personas", "create", "Nova", "--role", "Data Engineer")[0] == 0
    assert run(capsys, "memory", "add", "nova", "Backfills run on replicas only.", "--project", "etl")[0] == 0
    code, out, _ = run(capsys, "personas", "list")
    assert code == 0
    assert "Nova" in out
    assert "Maya" in out

    code, out, _ = run(capsys, "personas", "rename", "NOVA", "Nova Prime")
    assert code == 0
    assert "nova-prime" in out
    moved = home / "agents" / "nova-prime" / "memories" / "etl" / "main.md"
    assert "Backfills run on replicas only." in moved.read_text()
    assert not (home / "agents" / "nova").exists()

    code, _, err = run(capsys, "personas", "delete", "Nova Prime")
    assert code == 2
    assert "--yes" in err
    assert run(capsys, "personas", "delete", "nova-prime", "--yes")[0] == 0
    archived = list((home / "agents" / ".archived").glob("nova-prime-*"))
    assert len(archived) == 1
    assert "Backfills" in (archived[0] / "memories" / "etl" / "main.md").read_text()


def test_memory_commands(capsys: pytest.CaptureFixture[str]) -> None:
    lesson = "The auth module couples to the session store."
    code, out, _ = run(capsys, "memory", "add", "Carlos", lesson, "--project", "p")
    assert code == 0
    lesson_id = out.split()[1].rstrip(":")
    run(capsys, "memory", "add", "Carlos", "Release branches are cut on Thursdays.", "--project", "p")

    code, out, _ = run(capsys, "memory", "search", "carlos", "session store", "--project", "p", "--json")
    assert code == 0
    results = json.loads(out)["results"]
    assert results[0]["id"] == lesson_id
    assert set(results[0]["parts"]) == {"keyword", "meaning", "recency", "use"}
    assert results[0]["parts"]["keyword"] > 0

    code, out, _ = run(capsys, "memory", "show", "carlos", "--project", "p")
    assert lesson_id in out
    assert "2 lessons" in out

    assert run(capsys, "memory", "forget", "carlos", lesson_id, "--project", "p")[0] == 0
    code, out, _ = run(capsys, "memory", "show", "carlos", "--project", "p")
    assert lesson_id not in out


def test_a_lesson_added_on_the_command_line_says_so_and_keeps_saying_so(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    run(capsys, "personas", "create", "Nova", "--role", "Data Engineer")
    run(capsys, "memory", "add", "nova", "Backfills run on replicas only.", "--project", "etl")
    file = home / "agents" / "nova" / "memories" / "etl" / "main.md"
    assert "- Backfills run on replicas only. <!-- by:cli -->\n" in file.read_text()
    code, out, _ = run(capsys, "memory", "show", "nova", "--project", "etl")
    assert code == 0
    assert "Backfills run on replicas only.  · added from the CLI" in out
    code, out, _ = run(capsys, "memory", "search", "nova", "backfills", "--project", "etl", "--json")
    assert json.loads(out)["results"][0]["author"] == "cli"

    run(capsys, "personas", "rename", "nova", "Nova Prime")
    code, out, _ = run(capsys, "memory", "show", "Nova Prime", "--project", "etl")
    assert "added from the CLI" in out
    run(capsys, "personas", "delete", "nova-prime", "--yes")
    [archived] = (home / "agents" / ".archived").glob("nova-prime-*")
    assert "<!-- by:cli -->" in (archived / "memories" / "etl" / "main.md").read_text()


def test_a_lesson_added_with_a_category_shows_it_and_search_gives_category_and_overview(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    code, out, _ = run(
        capsys, "memory", "add", "Maya", "The 2026-03-02 leak forced a key rotation.", "--category", "EVENTS"
    )
    assert code == 0
    assert out.startswith("Remembered ")
    assert "(events): The 2026-03-02 leak forced a key rotation." in out
    file = home / "agents" / "maya" / "memories" / "default" / "main.md"
    file.write_text(
        file.read_text().replace(
            "<!-- cat:events by:cli -->\n", "<!-- cat:events by:cli -->\n  > A gist exposed it; rotated in an hour.\n"
        )
    )
    run(capsys, "memory", "add", "Maya", "Audit the vault after every key rotation.")

    code, out, _ = run(capsys, "memory", "search", "maya", "key rotation leak", "--json")
    assert code == 0
    results = {row["text"]: row for row in json.loads(out)["results"]}
    leak = results["The 2026-03-02 leak forced a key rotation."]
    assert (leak["category"], leak["overview"]) == ("events", "A gist exposed it; rotated in an hour.")
    audit = results["Audit the vault after every key rotation."]
    assert (audit["category"], audit["overview"]) == (None, audit["text"])  # no overview reads as the abstract

    code, out, _ = run(capsys, "memory", "show", "maya")
    assert "[events] The 2026-03-02 leak forced a key rotation.  · added from the CLI\n" in out
    assert "\n                        A gist exposed it; rotated in an hour.\n" in out


def test_memory_show_and_search_filter_by_category(capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "memory", "add", "Maya", "The 2026-03-02 leak forced a key rotation.", "--category", "events")
    run(
        capsys, "memory", "add", "Maya", "Review dependency upgrades against their changelog.", "--category", "patterns"
    )
    run(capsys, "memory", "add", "Maya", "Dependency upgrade scripts live in ops/deps.")

    code, out, _ = run(capsys, "memory", "show", "maya", "--category", "events")
    assert code == 0
    assert "1 lesson in events" in out
    assert "leak forced a key rotation" in out
    assert "changelog" not in out
    assert "ops/deps" not in out

    code, out, _ = run(capsys, "memory", "search", "maya", "dependency upgrades", "--category", "patterns", "--json")
    assert code == 0
    found = json.loads(out)
    assert found["category"] == "patterns"
    assert [row["text"] for row in found["results"]] == ["Review dependency upgrades against their changelog."]

    code, out, _ = run(capsys, "memory", "search", "maya", "dependency upgrades", "--category", "cases")
    assert (code, out.strip()) == (0, "No lessons in cases match 'dependency upgrades'.")

    code, _, err = run(capsys, "memory", "show", "maya", "--category", "gossip")
    assert code == 2
    assert "gossip" in err


def test_memory_show_reports_the_lines_it_could_not_read(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    file = home / "agents" / "carlos" / "memories" / "p" / "main.md"
    file.parent.mkdir(parents=True)
    file.write_text(
        "# Carlos · memory for p\n\n## 2026-11-20 · manual\n"
        "1. Release branches are cut on Thursdays.\n-\n  * Hotfixes go to main first.\nsee the wiki\n"
    )
    code, out, _ = run(capsys, "memory", "show", "carlos", "--project", "p")
    assert code == 0
    assert "2 lessons" in out
    assert "Hotfixes go to main first." in out
    assert out.rstrip().endswith('2 lines not understood: line 5 "-", line 7 "see the wiki"')


@pytest.mark.skipif(not embeddings.available(), reason="the all-MiniLM-L6-v2 package is not installed")
def test_search_finds_a_lesson_by_meaning_with_no_shared_word(capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "memory", "add", "Maya", "Rotate the signing keys after every incident.", "--project", "p")
    run(capsys, "memory", "add", "Maya", "The cafeteria serves soup on Fridays.", "--project", "p")
    query = "replace the secrets when something goes wrong"
    code, out, _ = run(capsys, "memory", "search", "maya", query, "--project", "p")
    assert code == 0
    assert "signing keys" in out
    assert "cafeteria" not in out
    code, out, _ = run(capsys, "memory", "search", "maya", query, "--project", "p", "--json")
    [hit] = json.loads(out)["results"]
    assert hit["parts"]["keyword"] == 0
    assert hit["parts"]["meaning"] > 0
    assert (Path(os.environ["NIGHTWATCH_HOME"]) / "agents/maya/memories/p/main.vectors").is_file()


def test_compaction_keeps_the_previous_version(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NIGHTWATCH_MEMORY_MAX_LINES", "40")
    monkeypatch.setenv("NIGHTWATCH_MEMORY_COMPACTION_TARGET", "5")
    topics = [
        "payments",
        "login",
        "search",
        "exports",
        "billing",
        "uploads",
        "webhooks",
        "reports",
        "imports",
        "sessions",
        "invoices",
        "notifications",
    ]
    for area in topics:
        run(capsys, "memory", "add", "priya", f"The {area} suite needs its own fixture cleanup.", "--project", "q")
    code, out, _ = run(capsys, "memory", "compact", "priya", "--project", "q")
    assert code == 0, out
    code, out, _ = run(capsys, "memory", "show", "priya", "--project", "q")
    assert "5 lessons" in out
    assert run(capsys, "memory", "rollback", "priya", "--project", "q")[0] == 0
    code, out, _ = run(capsys, "memory", "show", "priya", "--project", "q")
    assert "12 lessons" in out


def test_context_shows_the_budget(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "context", "maya", "--project", "demo", "--topic", "login")
    assert code == 0
    for part in ("identity and soul", "memory", "thread", "remaining"):
        assert part in out


@pytest.mark.parametrize(
    ("argv", "code", "says"),
    [
        (["personas", "show", "nobody"], 1, "Known personas"),
        (["memory", "show", "maya", "--project", "../../etc"], 2, "project name"),
        (["personas", "create", "../../etc", "--role", "x"], 2, "persona name"),
        (["personas", "create", "MAYA", "--role", "Another"], 1, "already"),
        (["deliberate", "  "], 2, "topic"),
        (["deliberate", "x", "--llm", "anthropic"], 2, "ANTHROPIC_API_KEY"),
    ],
)
def test_errors_exit_non_zero_and_say_what_to_do(
    capsys: pytest.CaptureFixture[str], home: Path, argv: list[str], code: int, says: str
) -> None:
    got, _, err = run(capsys, *argv)
    assert got == code
    assert says in err
    assert not (home.parent / "etc").exists()


def test_the_console_script_runs(home: Path) -> None:
    script = Path(sys.executable).parent / "nightwatch"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "NIGHTWATCH", "DATABASE"))}
    env["NIGHTWATCH_HOME"] = str(home)
    done = subprocess.run(
        [str(script), "personas", "list"], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert {"Maya", "Carlos", "Priya", "Dev"} <= set(done.stdout.split())


def test_deliberation_through_the_real_sdk_against_the_fake_anthropic(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        code, out, err = run(capsys, "deliberate", TOPIC, "--project", "demo", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["verdict"]["decision"] in {"APPROVE", "CHANGES", "HUMAN"}
    assert result["usage"]["input_tokens"] > 0
    bodies = [r.body for r in fake.requests]
    assert all(body["model"] == "claude-sonnet-5-5" for body in bodies)
    cached = [block for body in bodies for block in body["system"] if "cache_control" in block]
    assert cached, "the stable prefix carries cache_control"
    assert "[offline]" not in out


def test_the_api_key_never_reaches_the_logs_even_at_debug(home: Path) -> None:
    secret = "sk-ant-api03-supersecretvalue"
    script = Path(sys.executable).parent / "nightwatch"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "NIGHTWATCH", "DATABASE"))}
    with FakeAnthropic() as fake:
        env |= {
            "NIGHTWATCH_HOME": str(home),
            "NIGHTWATCH_LOG_LEVEL": "DEBUG",
            "ANTHROPIC_API_KEY": secret,
            "ANTHROPIC_BASE_URL": fake.url,
        }
        done = subprocess.run(
            [str(script), "deliberate", TOPIC, "--personas", "maya"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "DEBUG" in done.stderr  # the SDK did log its requests
    assert "supersecretvalue" not in done.stderr + done.stdout


def test_lessons_are_filed_under_the_day_they_were_recorded(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    with freeze_time("2030-01-02 23:59:00"):
        assert (
            run(capsys, "memory", "add", "dev", "Barrel exports need updating with new files.", "--project", "x")[0]
            == 0
        )
    text = (home / "agents" / "dev" / "memories" / "x" / "main.md").read_text()
    assert "## 2030-01-02 · manual" in text


def test_history_shows_how_deliberations_ended_including_one_cut_off(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    from sqlalchemy import create_engine, update

    from nightwatch.adapters.db.schema import deliberations

    assert run(capsys, "deliberate", "Flaky checkout test in CI", "--project", "shop")[0] == 0
    assert run(capsys, "deliberate", "Rotate the signing key", "--project", "shop")[0] == 0
    engine = create_engine(f"sqlite:///{home / 'nightwatch.db'}")
    with engine.begin() as conn:  # as if the process died mid-way
        conn.execute(update(deliberations).where(deliberations.c.id == 2).values(status="running", verdict=None))
    engine.dispose()
    code, out, _ = run(capsys, "history")
    assert code == 0
    lines = out.splitlines()
    assert "running" in lines[0]
    assert "Rotate the signing key" in lines[0]
    assert any(word in lines[1] for word in ("APPROVE", "CHANGES", "HUMAN"))


def test_memory_clear_needs_yes_and_rollback_brings_the_lessons_back(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    run(capsys, "memory", "add", "Maya", "Rotate every signing key after a leak.", "--project", "api")
    run(capsys, "memory", "add", "Maya", "Audit the vault after every key rotation.", "--project", "api")
    file = home / "agents" / "maya" / "memories" / "api" / "main.md"
    before = file.read_text()

    code, _, err = run(capsys, "memory", "clear", "maya", "--project", "api")
    assert code == 2
    assert "add --yes to confirm" in err
    assert file.read_text() == before

    code, out, _ = run(capsys, "memory", "clear", "maya", "--project", "api", "--yes")
    assert code == 0
    assert out.startswith("Cleared Maya's memory of api (2 lessons). Undo: nightwatch memory rollback maya")
    assert "0 lessons" in run(capsys, "memory", "show", "maya", "--project", "api")[1]

    code, out, _ = run(capsys, "memory", "rollback", "maya", "--project", "api")
    assert code == 0
    assert file.read_text() == before
    assert "2 lessons" in run(capsys, "memory", "show", "maya", "--project", "api")[1]

    code, _, err = run(capsys, "memory", "clear", "carlos", "--project", "api", "--yes")
    assert code != 0
    assert "Carlos has no memory of api to clear." in err


def test_deliberate_exits_3_when_no_persona_got_an_answer_from_the_model(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeAnthropic(responder=lambda _body: unauthorized()) as fake:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
        code, out, err = run(capsys, "deliberate", TOPIC, "--personas", "maya", "--json")
    assert code == 3, err
    assert json.loads(out)["verdict"]["decision"] == "HUMAN"
    assert "error: no persona got an answer from the model" in err
    assert "Traceback" not in err


def test_the_offline_note_shows_only_where_a_model_answers(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "personas", "list")
    assert code == 0
    assert err == ""  # no offline note, no INFO lines from start-up
    code, _, err = run(capsys, "-v", "personas", "list")
    assert code == 0
