"""`nightwatch memory export|import|edit` end to end: markdown stays a person's tool, and nothing is lost."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.e2e.cli import clean_env, run

HAND_MADE = """# Maya · memory for demo

- Undated note under the title.

## 2026-11-20 · deliberation · https://example.slack.com/archives/C1/p1
- 📌 Never log session tokens. <!-- seen:3 injected:2 -->
- Admin endpoints need an audit trail. <!-- by:U123ABC -->
a line a person wrote by hand

## Superseded
- ~~Rotate the webhook secret yearly.~~ <!-- superseded-by:1a2b3c4d on:2026-11-20 -->
"""


@pytest.fixture(autouse=True)
def fresh_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> Path:
    clean_env(monkeypatch, home)
    monkeypatch.setenv("NIGHTWATCH_RECALL_DENSE", "off")
    return home


def memory_file(home: Path, persona: str = "maya", project: str = "demo") -> Path:
    return home / "agents" / persona / "memories" / project / "main.md"


def seeded(capsys: pytest.CaptureFixture[str], home: Path) -> None:
    assert run(capsys, "memory", "add", "dev", "Profile the hot loop before optimising it.", "--project", "api")[0] == 0
    memory_file(home).parent.mkdir(parents=True)
    memory_file(home).write_text(HAND_MADE, encoding="utf-8")


def test_export_then_import_into_a_new_home_is_lossless(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded(capsys, home)
    code, out, _ = run(capsys, "memory", "export", str(tmp_path / "out"))
    assert code == 0
    assert "Exported 2 memory files" in out
    assert memory_file(tmp_path / "out").read_text(encoding="utf-8") == HAND_MADE

    other = tmp_path / "other-home"
    monkeypatch.setenv("NIGHTWATCH_HOME", str(other))
    code, out, _ = run(capsys, "memory", "import", str(tmp_path / "out"))
    assert code == 0, out
    assert "maya · demo: 4 added" in out
    for persona, project in (("maya", "demo"), ("dev", "api")):
        assert memory_file(other, persona, project).read_bytes() == memory_file(home, persona, project).read_bytes()
    shown = run(capsys, "memory", "show", "maya", "--project", "demo")[1]
    assert "(seen 3×) Never log session tokens." in shown
    assert "added by U123ABC" in shown


def test_import_merges_by_id_and_never_drops_a_lesson_only_memory_has(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path
) -> None:
    seeded(capsys, home)
    run(capsys, "memory", "export", str(tmp_path / "out"))
    exported = memory_file(tmp_path / "out")
    edited = exported.read_text(encoding="utf-8").replace("<!-- seen:3 injected:2 -->", "<!-- seen:5 injected:2 -->")
    exported.write_text(edited + "\n## 2026-11-22 · manual\n- Pin the base image digest.\n", encoding="utf-8")
    assert run(capsys, "memory", "add", "maya", "Review CORS settings before launch.", "--project", "demo")[0] == 0

    code, out, _ = run(capsys, "memory", "import", str(tmp_path / "out"))
    assert code == 0
    assert "maya · demo: 1 added, 1 updated, 1 kept that only memory had" in out
    merged = memory_file(home).read_text(encoding="utf-8")
    assert "Review CORS settings before launch." in merged  # only memory had it
    assert "- Pin the base image digest." in merged  # only the file had it
    assert "<!-- seen:5 injected:2 -->" in merged  # the file's marks win
    assert "a line a person wrote by hand" in merged
    assert merged.count("Never log session tokens.") == 1


def test_import_skips_what_it_cannot_use_and_says_why(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "in"
    memory_file(folder, "zed").parent.mkdir(parents=True)
    memory_file(folder, "zed").write_text("# Zed\n\n- Something.\n", encoding="utf-8")
    memory_file(folder, "maya").parent.mkdir(parents=True)
    memory_file(folder, "maya").symlink_to(tmp_path / "elsewhere.md")
    code, out, _ = run(capsys, "memory", "import", str(folder))
    assert code == 1
    assert "skipped zed · demo: no persona has that slug" in out
    assert "is a symbolic link; import never follows links" in out
    assert not memory_file(home, "zed").exists()


def test_export_refuses_a_folder_that_holds_anything(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    code, _, err = run(capsys, "memory", "export", str(tmp_path / "full"))
    assert code == 2
    assert "is not an empty folder" in err
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"


def editor(tmp_path: Path, body: str) -> str:
    """An EDITOR command: a small Python script that edits the file it is given."""
    script = tmp_path / "editor.py"
    script.write_text("import pathlib, subprocess, sys\npath = pathlib.Path(sys.argv[1])\n" + body, encoding="utf-8")
    return f"{sys.executable} {script}"


def test_edit_saves_what_the_editor_wrote(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded(capsys, home)
    monkeypatch.setenv("EDITOR", editor(tmp_path, "path.write_text(path.read_text() + '- Added in the editor.\\n')\n"))
    code, out, _ = run(capsys, "memory", "edit", "maya", "--project", "demo")
    assert code == 0
    assert "Saved Maya's memory of demo." in out
    # appended at the end, under the history's header: a live lesson of its own, not a superseded one
    live, history = HAND_MADE.split("## Superseded\n")
    today = datetime.now(UTC).date().isoformat()
    added = f"## {today} · edit\n- Added in the editor.\n\n"
    assert memory_file(home).read_text(encoding="utf-8") == f"{live}{added}## Superseded\n{history}"
    shown = run(capsys, "memory", "show", "maya", "--project", "demo")[1]
    assert shown.index("Added in the editor.") < shown.index("Superseded:")


def test_a_line_put_among_the_superseded_ones_stays_superseded(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded(capsys, home)
    among = (
        "path.write_text(path.read_text().replace('## Superseded\\n', '## Superseded\\n- Old way of doing it.\\n'))\n"
    )
    monkeypatch.setenv("EDITOR", editor(tmp_path, among))
    assert run(capsys, "memory", "edit", "maya", "--project", "demo")[0] == 0
    shown = run(capsys, "memory", "show", "maya", "--project", "demo")[1]
    assert shown.index("Superseded:") < shown.index("Old way of doing it.")


def test_edit_keeps_both_versions_when_someone_wrote_meanwhile(
    capsys: pytest.CaptureFixture[str], home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seeded(capsys, home)
    meanwhile = (
        "subprocess.run([sys.executable, '-m', 'nightwatch.cli', 'memory', 'add', 'maya', "
        "'Written by a teammate meanwhile.', '--project', 'demo'], check=True, capture_output=True)\n"
        "path.write_text(path.read_text() + '- Mine, from the editor.\\n')\n"
    )
    monkeypatch.setenv("EDITOR", editor(tmp_path, meanwhile))
    code, out, _ = run(capsys, "memory", "edit", "maya", "--project", "demo")
    assert code == 1
    assert "changed while you edited it, so it was not overwritten" in out
    assert "Written by a teammate meanwhile." in memory_file(home).read_text(encoding="utf-8")
    (kept,) = (home / "edits").iterdir()
    assert kept.read_text(encoding="utf-8").endswith("- Mine, from the editor.\n")


def test_edit_without_an_editor_says_how_to_set_one(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "memory", "edit", "maya", "--project", "demo")
    assert code == 2
    assert "Set EDITOR" in err
