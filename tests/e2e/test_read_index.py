"""main.index end to end: a read through the CLI keeps it beside main.md; `memory export` never carries it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import clean_env, run


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    monkeypatch.setenv("NIGHTWATCH_RECALL_DENSE", "off")
    return home


def test_a_search_keeps_the_index_and_export_and_import_carry_only_markdown(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = home / "agents" / "dev" / "memories" / "api"
    assert run(capsys, "memory", "add", "dev", "Profile the hot loop before optimising it.", "--project", "api")[0] == 0
    assert not (folder / "main.index").exists()  # a write leaves it to the next read
    code, out, _ = run(capsys, "memory", "search", "dev", "hot loop", "--project", "api")
    assert code == 0
    assert "Profile the hot loop" in out
    assert (folder / "main.index").is_file()

    assert run(capsys, "memory", "export", str(tmp_path / "out"))[0] == 0
    out = tmp_path / "out"
    exported = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    assert exported == ["agents/dev/memories/api/main.md"]

    monkeypatch.setenv("NIGHTWATCH_HOME", str(tmp_path / "other"))
    assert run(capsys, "memory", "import", str(home))[0] == 0  # a NIGHTWATCH_HOME with an index in it
    imported = tmp_path / "other" / "agents" / "dev" / "memories" / "api"
    assert (imported / "main.md").read_bytes() == (folder / "main.md").read_bytes()
    assert not (imported / "main.index").exists()
