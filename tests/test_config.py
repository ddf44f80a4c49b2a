from __future__ import annotations

from pathlib import Path

import pytest

from nightwatch.config import DEFAULT_MODEL, OFFLINE_NOTICE, Settings
from nightwatch.domain.errors import ConfigError
from nightwatch.environment import c_locale


def test_defaults_without_any_variable_use_the_offline_model_and_say_so(tmp_path: Path) -> None:
    settings = Settings.from_env({"NIGHTWATCH_HOME": str(tmp_path)})
    assert settings.llm == "offline"
    assert settings.notices == (OFFLINE_NOTICE,)
    assert settings.home == tmp_path.resolve()
    assert settings.database_url == f"sqlite:///{tmp_path.resolve() / 'nightwatch.db'}"
    assert settings.model == DEFAULT_MODEL
    limits = settings.memory
    assert (limits.token_budget, limits.max_lines, limits.compaction_target) == (2000, 150, 50)
    assert limits.shared_token_budget == 600


def test_an_api_key_selects_anthropic_without_a_notice() -> None:
    settings = Settings.from_env({"ANTHROPIC_API_KEY": "sk-ant-test"})
    assert settings.llm == "anthropic"
    assert settings.notices == ()


def test_home_defaults_to_dot_night_watch() -> None:
    assert Settings.from_env({}).home == (Path.home() / ".night-watch").resolve()


def test_secrets_do_not_appear_in_repr() -> None:
    settings = Settings.from_env(
        {"ANTHROPIC_API_KEY": "sk-ant-secret", "SLACK_BOT_TOKEN": "xoxb-secret", "SLACK_APP_TOKEN": "xapp-secret"}
    )
    assert "secret" not in repr(settings)


def test_admins_are_split_on_commas_and_spaces() -> None:
    settings = Settings.from_env({"NIGHTWATCH_ADMINS": "U1, U2,U3"})
    assert settings.slack.admins == {"U1", "U2", "U3"}


def test_the_shared_knowledge_budget_may_be_turned_off() -> None:
    assert Settings.from_env({"NIGHTWATCH_SHARED_TOKEN_BUDGET": "0"}).memory.shared_token_budget == 0
    assert Settings.from_env({"NIGHTWATCH_SHARED_TOKEN_BUDGET": "1200"}).memory.shared_token_budget == 1200


def test_slack_api_url_gets_a_trailing_slash() -> None:
    assert Settings.from_env({"SLACK_API_URL": "http://127.0.0.1:9/api"}).slack.api_url == "http://127.0.0.1:9/api/"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"NIGHTWATCH_LLM": "gpt"}, "NIGHTWATCH_LLM"),
        ({"NIGHTWATCH_LLM": "anthropic"}, "ANTHROPIC_API_KEY"),
        ({"NIGHTWATCH_MEMORY_TOKEN_BUDGET": "lots"}, "NIGHTWATCH_MEMORY_TOKEN_BUDGET"),
        ({"NIGHTWATCH_MEMORY_MAX_LINES": "3"}, "NIGHTWATCH_MEMORY_MAX_LINES"),
        ({"NIGHTWATCH_MEMORY_COMPACTION_TARGET": "200"}, "NIGHTWATCH_MEMORY_COMPACTION_TARGET"),
        ({"SLACK_BOT_TOKEN": "xapp-wrong-kind"}, "SLACK_BOT_TOKEN"),
        ({"SLACK_APP_TOKEN": "xoxb-wrong-kind"}, "SLACK_APP_TOKEN"),
        ({"SLACK_API_URL": "ftp://x"}, "SLACK_API_URL"),
        ({"NIGHTWATCH_MAX_ROUNDS": "9"}, "NIGHTWATCH_MAX_ROUNDS"),
        ({"NIGHTWATCH_LOG_LEVEL": "loud"}, "NIGHTWATCH_LOG_LEVEL"),
        ({"NIGHTWATCH_MEMORY_STORE": "s3"}, "NIGHTWATCH_MEMORY_STORE"),
        ({"NIGHTWATCH_SHARED_TOKEN_BUDGET": "-1"}, "NIGHTWATCH_SHARED_TOKEN_BUDGET"),
        ({"NIGHTWATCH_SHARED_TOKEN_BUDGET": "some"}, "NIGHTWATCH_SHARED_TOKEN_BUDGET"),
        ({"NIGHTWATCH_PIN_ROOTS": "docs"}, "NIGHTWATCH_PIN_ROOTS"),
        ({"NIGHTWATCH_PIN_ROOTS": "/srv/docs:relative/too"}, "NIGHTWATCH_PIN_ROOTS"),
        ({"NIGHTWATCH_PIN_TOKEN_BUDGET": "50"}, "NIGHTWATCH_PIN_TOKEN_BUDGET"),
        ({"NIGHTWATCH_PIN_TOKEN_BUDGET": "many"}, "NIGHTWATCH_PIN_TOKEN_BUDGET"),
        ({"NIGHTWATCH_TURN_RETRIES": "4"}, "NIGHTWATCH_TURN_RETRIES"),
        ({"NIGHTWATCH_TURN_RETRIES": "-1"}, "NIGHTWATCH_TURN_RETRIES"),
    ],
)
def test_a_bad_value_names_the_variable_and_what_it_accepts(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named) as caught:
        Settings.from_env(env)
    assert "accepts" in str(caught.value) or "set" in str(caught.value)


PG = "postgresql+psycopg://nightwatch@db.internal/nightwatch"


def test_memory_stays_in_files_with_the_sqlite_default_and_goes_to_a_shared_database() -> None:
    local = Settings.from_env({"NIGHTWATCH_LLM": "offline"})
    assert local.memory_store == "files"
    assert local.local_memory_notice is None
    shared = Settings.from_env({"NIGHTWATCH_LLM": "offline", "DATABASE_URL": PG})
    assert shared.memory_store == "database"
    assert shared.notices == ()


def test_memory_can_be_put_in_the_database_on_sqlite_too() -> None:
    settings = Settings.from_env({"NIGHTWATCH_MEMORY_STORE": "DataBase", "DATABASE_URL": "sqlite:////tmp/x.db"})
    assert settings.memory_store == "database"
    assert settings.local_memory_notice is None


def test_memory_in_files_beside_a_shared_database_is_a_notice_that_says_what_to_do(tmp_path: Path) -> None:
    env = {"NIGHTWATCH_HOME": str(tmp_path), "NIGHTWATCH_LLM": "offline", "DATABASE_URL": PG}
    settings = Settings.from_env({**env, "NIGHTWATCH_MEMORY_STORE": "files"})
    assert settings.memory_store == "files"
    notice = settings.local_memory_notice
    assert notice is not None
    assert settings.notices == (notice,)
    assert str(tmp_path.resolve() / "agents") in notice
    assert "other replicas neither see nor change it" in notice
    assert "Unset NIGHTWATCH_MEMORY_STORE (or set it to database)" in notice


def test_a_replica_with_local_memory_logs_one_loud_warning(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    from nightwatch.cli.deliberation import warn_when_memory_is_local

    env = {"NIGHTWATCH_HOME": str(tmp_path), "NIGHTWATCH_LLM": "offline", "DATABASE_URL": PG}
    warn_when_memory_is_local(Settings.from_env(env))
    assert caplog.records == []
    warn_when_memory_is_local(Settings.from_env({**env, "NIGHTWATCH_MEMORY_STORE": "files"}))
    [record] = caplog.records
    assert record.levelname == "WARNING"
    assert record.getMessage().startswith("MEMORY IS LOCAL TO THIS MACHINE. NIGHTWATCH_MEMORY_STORE=files")


def test_pins_have_no_roots_a_1500_token_budget_and_no_private_hosts_by_default() -> None:
    pins = Settings.from_env({}).pins
    assert (pins.roots, pins.token_budget, pins.url_hosts) == ((), 1500, frozenset())


def test_pin_roots_are_absolute_folders_separated_by_the_path_separator_and_hosts_by_commas() -> None:
    pins = Settings.from_env(
        {
            "NIGHTWATCH_PIN_ROOTS": "/srv/docs/:/srv//runbooks::/srv/docs",
            "NIGHTWATCH_PIN_URL_HOSTS": "Wiki.Internal, 127.0.0.1 10.0.0.5",
            "NIGHTWATCH_PIN_TOKEN_BUDGET": "4000",
        }
    ).pins
    assert pins.roots == (Path("/srv/docs"), Path("/srv/runbooks"))
    assert pins.url_hosts == {"wiki.internal", "127.0.0.1", "10.0.0.5"}
    assert pins.token_budget == 4000


def test_a_failed_turn_is_retried_once_by_default_and_up_to_three_times() -> None:
    assert Settings.from_env({}).deliberation.turn_retries == 1
    assert Settings.from_env({"NIGHTWATCH_TURN_RETRIES": "0"}).deliberation.turn_retries == 0
    assert Settings.from_env({"NIGHTWATCH_TURN_RETRIES": "3"}).deliberation.turn_retries == 3


def test_offline_lessons_stay_out_of_a_real_models_prompts_unless_a_setting_keeps_them() -> None:
    assert Settings.from_env({}).memory.inject_offline_lessons is False
    assert Settings.from_env({"NIGHTWATCH_INJECT_OFFLINE_LESSONS": "1"}).memory.inject_offline_lessons is True
    with pytest.raises(ConfigError, match="NIGHTWATCH_INJECT_OFFLINE_LESSONS"):
        Settings.from_env({"NIGHTWATCH_INJECT_OFFLINE_LESSONS": "yes"})


@pytest.mark.parametrize(
    ("raw", "teachers"), [(None, "everyone"), ("Everyone", "everyone"), ("ADMINS", "admins"), ("S0123ABC", "S0123ABC")]
)
def test_teachers_are_everyone_admins_or_a_user_group(tmp_path: Path, raw: str | None, teachers: str) -> None:
    env = {"NIGHTWATCH_HOME": str(tmp_path)} | ({"NIGHTWATCH_TEACHERS": raw} if raw else {})
    assert Settings.from_env(env).slack.teachers == teachers


@pytest.mark.parametrize("raw", ["nobody", "s0123abc", "U0123ABC", "@team"])
def test_other_teachers_are_refused_with_what_is_accepted(tmp_path: Path, raw: str) -> None:
    with pytest.raises(ConfigError, match=r"NIGHTWATCH_TEACHERS=.* it accepts everyone, admins, or a Slack user group"):
        Settings.from_env({"NIGHTWATCH_HOME": str(tmp_path), "NIGHTWATCH_TEACHERS": raw})


@pytest.mark.parametrize(
    ("env", "ascii"),
    [
        ({"LANG": "C"}, True),
        ({"LC_ALL": "POSIX", "LANG": "en_US.UTF-8"}, True),
        ({"LANG": "C", "LC_CTYPE": "C.UTF-8"}, True),  # what Python's own locale coercion sets
        ({"LANG": "C", "LC_CTYPE": "en_US.UTF-8"}, False),
        ({"LANG": "C", "PYTHONIOENCODING": "utf-8"}, False),
        ({"LANG": "C.UTF-8"}, False),
        ({}, False),
    ],
)
def test_a_c_locale_asks_for_ascii(env: dict[str, str], ascii: bool) -> None:
    assert c_locale(env) is ascii
