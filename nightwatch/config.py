"""Settings: what Night Watch runs with, built from the environment (this module and environment.py, which reads and
checks each variable for it, are the only readers of the environment).

`Settings.from_env()` validates every variable; a bad value raises ConfigError naming the variable and what it
accepts, so start-up stops with a message a person can act on.

`NIGHTWATCH_SETTINGS_FILE` names an optional file of `NAME=value` lines with the same names; what it sets wins over
the environment (it is the place a person edits to change a running app: see live_settings.py), and a name it
leaves out keeps the environment's value. The file is refused whole when any line is wrong.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from nightwatch.domain.errors import ConfigError
from nightwatch.environment import Reader, read_settings_file, settings_file_path

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_SLACK_API_URL = "https://slack.com/api/"
OFFLINE_NOTICE = "ANTHROPIC_API_KEY is not set: using the offline model (deterministic, no network)."
LOCAL_MEMORY_NOTICE = (
    "NIGHTWATCH_MEMORY_STORE=files with a PostgreSQL DATABASE_URL: persona memory stays in files on this machine "
    "({agents}), so other replicas neither see nor change it. Unset NIGHTWATCH_MEMORY_STORE (or set it to database) "
    "to keep memory in the shared database."
)


@dataclass(frozen=True)
class MemoryLimits:
    token_budget: int = 2000
    max_lines: int = 150
    compaction_target: int = 50
    half_life_days: float = 30.0
    dense: Literal["on", "off"] = "on"  # meaning recall (all-MiniLM-L6-v2 vectors)
    shared_token_budget: int = 600  # most tokens of teammates' shared knowledge in one prompt (0: none)
    inject_offline_lessons: bool = False  # lessons the offline model recorded go into a real model's prompts too


@dataclass(frozen=True)
class DeliberationLimits:
    max_rounds: int = 2
    max_contributors: int = 3
    max_replies: int = 12
    reply_chars: int = 1200
    turn_words: int = 120  # the most words a turn asks for (NIGHTWATCH_TURN_WORDS)
    lead: str | None = None  # persona name or slug; None picks the tech-lead persona
    context_tokens: int = 3000
    model_window: int = 200_000
    lease_seconds: float = 90.0  # a Slack replica's lease on its deliberations; another takes over once it lapses


@dataclass(frozen=True)
class PinSettings:
    """Pinned context: where files may be pinned from, its share of a prompt, which hosts may be private."""

    roots: tuple[Path, ...] = ()  # absolute folders; none: only the CLI may pin files (anywhere it can read)
    token_budget: int = 1500  # most tokens of pinned documents in one prompt, shared fairly among them
    url_hosts: frozenset[str] = frozenset()  # hosts a pinned URL may name although they resolve to private addresses


@dataclass(frozen=True)
class SlackSettings:
    bot_token: str | None = field(default=None, repr=False)
    app_token: str | None = field(default=None, repr=False)
    api_url: str = DEFAULT_SLACK_API_URL
    admins: frozenset[str] = frozenset()
    teachers: str = "everyone"  # who may teach personas: everyone, admins, or a user group's id (S0123ABC)
    workers: int = 24
    proactive_interval_minutes: int = 180
    proactive_quiet_minutes: int = 60
    lesson_notes: Literal["thread", "ephemeral", "off"] = "thread"  # where a deliberation's lessons are told


@dataclass(frozen=True)
class Settings:
    home: Path
    database_url: str
    llm: Literal["anthropic", "offline"]
    anthropic_api_key: str | None = field(default=None, repr=False)
    model: str = DEFAULT_MODEL
    llm_timeout_seconds: float = 60.0
    memory: MemoryLimits = field(default_factory=MemoryLimits)
    deliberation: DeliberationLimits = field(default_factory=DeliberationLimits)
    slack: SlackSettings = field(default_factory=SlackSettings)
    log_level: str = "INFO"
    editor: str | None = None  # the command `nightwatch memory edit` opens, e.g. "vim" or "code --wait"
    notices: tuple[str, ...] = ()
    memory_store: Literal["files", "database"] = "files"  # where persona memory lives
    personas_dir: Path | None = None  # persona YAML files besides the packaged defaults (NIGHTWATCH_PERSONAS_DIR)
    settings_file: Path | None = None  # NIGHTWATCH_SETTINGS_FILE
    # What the settings file set, by name (reloads compare it; it may hold tokens, so it is never shown).
    file_values: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    pins: PinSettings = field(default_factory=PinSettings)

    @property
    def local_memory_notice(self) -> str | None:
        """What to tell a person when memory stays on this machine although the database is shared; else None."""
        if self.memory_store == "files" and _shared(self.database_url):
            return LOCAL_MEMORY_NOTICE.format(agents=self.home / "agents")
        return None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Build settings from `env` (default: os.environ); raise ConfigError on any bad value."""
        env = os.environ if env is None else env
        settings_file = settings_file_path(env)
        file_values = read_settings_file(settings_file) if settings_file else {}
        reader = Reader({**env, **file_values}, file=settings_file, from_file=frozenset(file_values))
        home = Path(reader.text("NIGHTWATCH_HOME") or "~/.night-watch").expanduser().resolve()
        api_key = reader.text("ANTHROPIC_API_KEY")
        llm_name = reader.choice("NIGHTWATCH_LLM", ("anthropic", "offline"), "anthropic" if api_key else "offline")
        notices: tuple[str, ...] = ()
        if llm_name == "anthropic" and not api_key:
            raise ConfigError(
                "NIGHTWATCH_LLM=anthropic needs ANTHROPIC_API_KEY; set the key, or set NIGHTWATCH_LLM=offline."
            )
        if reader.text("NIGHTWATCH_LLM") is None and not api_key:
            notices = (OFFLINE_NOTICE,)
        memory = MemoryLimits(
            token_budget=reader.integer("NIGHTWATCH_MEMORY_TOKEN_BUDGET", 2000, minimum=100),
            max_lines=reader.integer("NIGHTWATCH_MEMORY_MAX_LINES", 150, minimum=10),
            compaction_target=reader.integer("NIGHTWATCH_MEMORY_COMPACTION_TARGET", 50, minimum=5),
            half_life_days=reader.number("NIGHTWATCH_MEMORY_HALF_LIFE_DAYS", 30.0, minimum=0.1),
            dense=reader.choice("NIGHTWATCH_RECALL_DENSE", ("on", "off"), "on"),  # type: ignore[arg-type]
            shared_token_budget=reader.integer("NIGHTWATCH_SHARED_TOKEN_BUDGET", 600, minimum=0),
            inject_offline_lessons=reader.choice("NIGHTWATCH_INJECT_OFFLINE_LESSONS", ("0", "1"), "0") == "1",
        )
        if memory.compaction_target >= memory.max_lines:
            raise ConfigError(
                f"NIGHTWATCH_MEMORY_COMPACTION_TARGET={memory.compaction_target} is too large; it accepts a whole "
                f"number below NIGHTWATCH_MEMORY_MAX_LINES ({memory.max_lines})"
                f"{reader.where('NIGHTWATCH_MEMORY_COMPACTION_TARGET', 'NIGHTWATCH_MEMORY_MAX_LINES')}."
            )
        deliberation = DeliberationLimits(
            max_rounds=reader.integer("NIGHTWATCH_MAX_ROUNDS", 2, minimum=1, maximum=5),
            max_replies=reader.integer("NIGHTWATCH_MAX_REPLIES", 12, minimum=2, maximum=40),
            turn_words=reader.integer("NIGHTWATCH_TURN_WORDS", 120, minimum=20, maximum=400),
            lead=reader.text("NIGHTWATCH_LEAD"),
            lease_seconds=reader.number("NIGHTWATCH_LEASE_SECONDS", 90.0, minimum=1.0),
        )
        slack = SlackSettings(
            bot_token=reader.token("SLACK_BOT_TOKEN", "xoxb-"),
            app_token=reader.token("SLACK_APP_TOKEN", "xapp-"),
            api_url=reader.url("SLACK_API_URL", DEFAULT_SLACK_API_URL),
            admins=frozenset(a for a in (reader.text("NIGHTWATCH_ADMINS") or "").replace(" ", ",").split(",") if a),
            teachers=_teachers(reader),
            workers=reader.integer("NIGHTWATCH_WORKERS", 24, minimum=1, maximum=256),
            proactive_interval_minutes=reader.integer("NIGHTWATCH_PROACTIVE_INTERVAL_MINUTES", 180, minimum=0),
            proactive_quiet_minutes=reader.integer("NIGHTWATCH_PROACTIVE_QUIET_MINUTES", 60, minimum=0),
            lesson_notes=reader.choice(  # type: ignore[arg-type]
                "NIGHTWATCH_LESSON_NOTES", ("thread", "ephemeral", "off"), "thread"
            ),
        )
        database_url = reader.text("DATABASE_URL") or f"sqlite:///{home / 'nightwatch.db'}"
        # One database for several replicas: by default their memory goes there too.
        default_store = "database" if _shared(database_url) else "files"
        memory_store = reader.choice("NIGHTWATCH_MEMORY_STORE", ("files", "database"), default_store)
        settings = cls(
            home=home,
            database_url=database_url,
            llm=llm_name,  # type: ignore[arg-type]
            anthropic_api_key=api_key,
            model=reader.text("NIGHTWATCH_MODEL") or DEFAULT_MODEL,
            llm_timeout_seconds=reader.number("NIGHTWATCH_LLM_TIMEOUT", 60.0, minimum=1.0),
            memory=memory,
            deliberation=deliberation,
            slack=slack,
            log_level=reader.choice("NIGHTWATCH_LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR"), "INFO", upper=True),
            editor=reader.text("VISUAL") or reader.text("EDITOR"),
            notices=notices,
            memory_store=memory_store,  # type: ignore[arg-type]
            personas_dir=reader.folder("NIGHTWATCH_PERSONAS_DIR", "a folder of persona YAML files (*.yml)"),
            settings_file=settings_file,
            file_values=file_values,
            pins=PinSettings(
                roots=reader.folders("NIGHTWATCH_PIN_ROOTS"),
                token_budget=reader.integer("NIGHTWATCH_PIN_TOKEN_BUDGET", 1500, minimum=100),
                url_hosts=reader.names("NIGHTWATCH_PIN_URL_HOSTS"),
            ),
        )
        reader.refuse_unknown()
        local = settings.local_memory_notice
        return dataclasses.replace(settings, notices=(*notices, local)) if local else settings


def _teachers(reader: Reader) -> str:
    """NIGHTWATCH_TEACHERS: `everyone` (the default), `admins`, or a Slack user group's id."""
    raw = reader.text("NIGHTWATCH_TEACHERS")
    if raw is None or raw.lower() in ("everyone", "admins"):
        return (raw or "everyone").lower()
    if re.fullmatch(r"S[A-Z0-9]{2,20}", raw):
        return raw
    raise ConfigError(
        f"NIGHTWATCH_TEACHERS={raw!r} is not valid; it accepts everyone, admins, or a Slack user group's id such as "
        f"S0123ABC{reader.where('NIGHTWATCH_TEACHERS')}."
    )


def _shared(database_url: str) -> bool:
    """Whether the database is PostgreSQL, the one several replicas share."""
    return database_url.startswith("postgresql")


def c_locale(env: Mapping[str, str] | None = None) -> bool:
    """Whether the locale asks for plain ASCII (C or POSIX), although Python itself then writes UTF-8 (PEP 538/540).

    The locale's name comes from LC_ALL, else LC_CTYPE, else LANG; an LC_CTYPE of C.UTF-8 beside a C `LANG` is the
    one Python's own locale coercion set, so it does not count. PYTHONIOENCODING or PYTHONUTF8 set by the person wins.
    """
    env = os.environ if env is None else env
    if env.get("PYTHONIOENCODING") or env.get("PYTHONUTF8"):
        return False
    lang = env.get("LANG", "")
    ctype = env.get("LC_CTYPE", "")
    if ctype == "C.UTF-8" and lang in ("C", "POSIX"):
        ctype = ""
    name = env.get("LC_ALL") or ctype or lang
    return name in ("C", "POSIX")
