"""Bad input to the `nightwatch` command: exit 2 with a message saying what is accepted, before anything is opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from nightwatch.adapters.db.deliberation_log import SqlDeliberationLog
from nightwatch.adapters.db.schema import make_engine
from nightwatch.cli import main
from nightwatch.domain.deliberation.models import Deliberation
from tests.e2e.cli import clean_env, run


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    return home


BAD_USAGE = [
    (["history", "--limit", "-5"], "--limit must be a whole number from 1 to 200 (got -5)."),
    (["history", "--limit", "0"], "--limit must be a whole number from 1 to 200 (got 0)."),
    (["history", "--limit", "99999999999999999999"], "from 1 to 200 (got 99999999999999999999)"),
    (["history", "--limit", "ten"], "from 1 to 200 (got ten)"),
    (["memory", "search", "maya", "keys", "--limit", "0"], "--limit must be a whole number from 1 to 100"),
    (["memory", "search", "maya", "   "], "The search query cannot be empty"),
    (["memory", "search", "maya", "q" * 501], "shorten it to at most 500"),
    (["memory", "forget", "maya", "zz"], "A lesson id is 8 characters from 0-9 and a-f, such as 3f9a2c1d (got zz)"),
    (["memory", "add", "maya", "Keys \x00 rotate monthly."], "The lesson contains the control character '\\x00'"),
    (["memory", "add", "maya", "x" * 401], "shorten it to at most 400"),
    (["memory", "add", "maya", " "], "A lesson cannot be empty"),
    (
        ["memory", "add", "maya", "Keys rotate monthly.", "--category", "incident"],
        "'incident' is not a lesson category: use one of profile, preferences, entities, events, cases, patterns.",
    ),
    (["memory", "show", "maya", "--project", ""], "The project name '' is not usable; give 1-80 letters"),
    (["memory", "compact", "\udcff"], "The persona name '\\udcff' has characters that are not allowed"),
    (["personas", "show", "\x1b[2J"], "has characters that are not allowed; use only letters A-Z"),
    (["personas", "create", "Zed", "--role", " "], "A persona needs a role"),
    (["personas", "create", "Zed", "--role", "QA\x00lead"], "The role contains the control character"),
    (["personas", "create", "Zed", "--role", "QA", "--avatar", "a cat"], "The avatar 'a cat' is not usable"),
    (["personas", "rename", "maya", "x" * 41], "is 41 characters long; use at most 40"),
    (["personas", "delete", "", "--yes"], "A persona name cannot be empty"),
    (["deliberate", "x" * 4001], "The topic is 4,001 characters long; shorten it to at most 4,000."),
    (["deliberate", "Rotate keys?", "--personas", "maya,,carlos"], "Name 1-10 personas separated by commas"),
    (["context", "maya", "--topic", "  "], "The topic cannot be empty"),
]


@pytest.mark.parametrize(("argv", "says"), BAD_USAGE, ids=[" ".join(a)[:40] for a, _ in BAD_USAGE])
def test_bad_input_exits_2_saying_what_is_accepted_before_anything_is_opened(
    capsys: pytest.CaptureFixture[str], home: Path, argv: list[str], says: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("error: ")
    assert says in err
    assert "usage:" not in err
    assert out == ""
    assert list(home.iterdir()) == []  # no database, no memory folder


def test_argparse_mistakes_still_exit_2_with_the_usage_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["history", "--limit"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "usage: nightwatch history" in err
    assert "argument --limit: expected one argument" in err


def test_history_limit_zero_is_refused_rather_than_claiming_there_are_none(
    capsys: pytest.CaptureFixture[str], home: Path
) -> None:
    assert run(capsys, "personas", "list")[0] == 0  # creates the database
    engine = make_engine(f"sqlite:///{home / 'nightwatch.db'}")
    log = SqlDeliberationLog(engine)
    for number in range(10):
        log.start(Deliberation(f"Topic {number}", "shop", f"terminal:{number}"))
    engine.dispose()

    code, out, err = run(capsys, "history", "--limit", "0")
    assert (code, out) == (2, "")
    assert "No deliberations yet" not in err
    assert "--limit must be a whole number from 1 to 200 (got 0)" in err

    code, out, _ = run(capsys, "history", "--limit", "3")
    assert code == 0
    assert [line.split()[0] for line in out.splitlines()] == ["#10", "#9", "#8"]
    code, out, _ = run(capsys, "history", "--limit", "200")
    assert len(out.splitlines()) == 10
