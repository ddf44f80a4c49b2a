"""The settings file (NIGHTWATCH_SETTINGS_FILE) and the personas folder (NIGHTWATCH_PERSONAS_DIR), read by config.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nightwatch.config import Settings
from nightwatch.domain.errors import ConfigError
from nightwatch.environment import read_settings_file


def settings_with(tmp_path: Path, text: str, **env: str) -> Settings:
    path = tmp_path / "nightwatch.env"
    path.write_text(text, encoding="utf-8")
    return Settings.from_env({"NIGHTWATCH_SETTINGS_FILE": str(path), **env})


def test_the_file_sets_settings_and_wins_over_the_environment(tmp_path: Path) -> None:
    settings = settings_with(
        tmp_path,
        "# night watch\n\nNIGHTWATCH_MAX_ROUNDS=3\nexport NIGHTWATCH_ADMINS = 'U1, U2'\nNIGHTWATCH_LEAD=\"Priya\"\n",
        NIGHTWATCH_MAX_ROUNDS="1",
        NIGHTWATCH_MAX_REPLIES="20",
    )
    assert settings.deliberation.max_rounds == 3  # the file wins
    assert settings.deliberation.max_replies == 20  # what the file leaves out comes from the environment
    assert settings.slack.admins == {"U1", "U2"}
    assert settings.deliberation.lead == "Priya"
    assert settings.settings_file == tmp_path / "nightwatch.env"
    assert dict(settings.file_values) == {
        "NIGHTWATCH_MAX_ROUNDS": "3",
        "NIGHTWATCH_ADMINS": "U1, U2",
        "NIGHTWATCH_LEAD": "Priya",
    }


def test_settings_only_a_restart_applies_may_be_in_the_file_too(tmp_path: Path) -> None:
    settings = settings_with(tmp_path, "NIGHTWATCH_WORKERS=4\nSLACK_BOT_TOKEN=xoxb-from-the-file\n")
    assert settings.slack.workers == 4
    assert settings.slack.bot_token == "xoxb-from-the-file"
    assert "xoxb-from-the-file" not in repr(settings)  # the file's values are never shown


def test_without_the_variable_no_file_is_read(tmp_path: Path) -> None:
    settings = Settings.from_env({"NIGHTWATCH_HOME": str(tmp_path)})
    assert (settings.settings_file, dict(settings.file_values)) == (None, {})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("NIGHTWATCH_MAX_ROUNDS 3\n", "line 1: write NAME=value"),
        ("# ok\nNIGHTWATCH_MAX_ROUNDS=2\n= 3\n", "line 3: write NAME=value"),
        (
            "NIGHTWATCH_MAX_ROUNDS=2\nNIGHTWATCH_MAX_ROUNDS=3\n",
            "line 2: NIGHTWATCH_MAX_ROUNDS is set twice (line 1 too)",
        ),
        ("NIGHTWATCH_SETTINGS_FILE=/elsewhere\n", "can only be set in the environment"),
        ("NIGHTWATCH_MAX_ROUND=3\n", "sets NIGHTWATCH_MAX_ROUND, which is not a Night Watch setting"),
        ("NIGHTWATCH_MAX_ROUNDS=9\n", "NIGHTWATCH_MAX_ROUNDS=9 is out of range; it accepts a whole number from 1 to 5"),
        ("NIGHTWATCH_LOG_LEVEL=loud\n", "NIGHTWATCH_LOG_LEVEL='loud' is not valid"),
        ("NIGHTWATCH_MEMORY_COMPACTION_TARGET=500\n", "NIGHTWATCH_MEMORY_COMPACTION_TARGET=500 is too large"),
    ],
)
def test_a_bad_file_is_refused_naming_the_file_and_what_to_fix(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        settings_with(tmp_path, text)
    assert message in str(caught.value)
    assert str(tmp_path / "nightwatch.env") in str(caught.value)


def test_a_bad_value_from_the_environment_does_not_blame_the_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        settings_with(tmp_path, "NIGHTWATCH_MAX_ROUNDS=2\n", NIGHTWATCH_MAX_REPLIES="1")
    assert "NIGHTWATCH_MAX_REPLIES=1 is out of range" in str(caught.value)
    assert "nightwatch.env" not in str(caught.value)


def test_a_missing_file_says_to_create_it_or_unset_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"could not be read .*; create it, or unset NIGHTWATCH_SETTINGS_FILE"):
        Settings.from_env({"NIGHTWATCH_SETTINGS_FILE": str(tmp_path / "missing.env")})


def test_a_symbolic_link_is_not_followed(tmp_path: Path) -> None:
    real = tmp_path / "real.env"
    real.write_text("NIGHTWATCH_MAX_ROUNDS=3\n", encoding="utf-8")
    link = tmp_path / "link.env"
    link.symlink_to(real)
    with pytest.raises(ConfigError, match="is a symbolic link; point NIGHTWATCH_SETTINGS_FILE at the file itself"):
        read_settings_file(link)


def test_a_file_that_is_not_utf8_or_too_big_is_refused(tmp_path: Path) -> None:
    binary = tmp_path / "binary.env"
    binary.write_bytes(b"NIGHTWATCH_LEAD=\xff\xfe\n")
    with pytest.raises(ConfigError, match="is not UTF-8 text"):
        read_settings_file(binary)
    big = tmp_path / "big.env"
    big.write_text("# padding\n" * 10_000, encoding="utf-8")
    with pytest.raises(ConfigError, match="is over 64 KB"):
        read_settings_file(big)


def test_a_folder_given_as_the_settings_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is not a file; point NIGHTWATCH_SETTINGS_FILE at a file"):
        read_settings_file(tmp_path)
    fifo = tmp_path / "fifo.env"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="is not a file"):  # and does not wait for a writer
        read_settings_file(fifo)


# --- NIGHTWATCH_PERSONAS_DIR ---------------------------------------------------------------------------------------


def test_the_personas_folder_must_be_a_folder(tmp_path: Path) -> None:
    assert Settings.from_env({"NIGHTWATCH_PERSONAS_DIR": str(tmp_path)}).personas_dir == tmp_path
    assert Settings.from_env({}).personas_dir is None
    with pytest.raises(
        ConfigError, match=r"NIGHTWATCH_PERSONAS_DIR=.* is not a folder; it accepts a folder of persona"
    ):
        Settings.from_env({"NIGHTWATCH_PERSONAS_DIR": str(tmp_path / "nope")})


def test_the_personas_folder_may_come_from_the_settings_file(tmp_path: Path) -> None:
    folder = tmp_path / "ours"
    folder.mkdir()
    assert settings_with(tmp_path, f"NIGHTWATCH_PERSONAS_DIR={folder}\n").personas_dir == folder
