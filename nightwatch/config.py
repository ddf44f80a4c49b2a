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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError

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

MINUTES_A_WEEK = 7 * 24 * 60


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
    turn_retries: int = 1  # how many times a failed turn is asked again with the problem fed back


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
class OperationsSettings:
    """How an operator watches and sizes a replica: logs, the health and metrics endpoint, the database pool."""

    log_format: Literal["text", "json"] = "text"
    health_host: str = "0.0.0.0"  # noqa: S104 - all addresses: a probe comes from outside the container
    health_port: int | None = None  # None: no health or metrics endpoint
    db_pool_size: int = 15  # most database connections this replica holds at once


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
    log_level: str | None = None  # None: the command's own default (INFO for `run`, WARNING for the rest)
    editor: str | None = None  # the command `nightwatch memory edit` opens, e.g. "vim" or "code --wait"
    notices: tuple[str, ...] = ()
    memory_store: Literal["files", "database"] = "files"  # where persona memory lives
    personas_dir: Path | None = None  # persona YAML files besides the packaged defaults (NIGHTWATCH_PERSONAS_DIR)
    settings_file: Path | None = None  # NIGHTWATCH_SETTINGS_FILE
    # What the settings file set, by name (reloads compare it; it may hold tokens, so it is never shown).
    file_values: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    pins: PinSettings = field(default_factory=PinSettings)
    operations: OperationsSettings = field(default_factory=OperationsSettings)

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
        home = _home(reader)
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
            token_budget=reader.integer("NIGHTWATCH_MEMORY_TOKEN_BUDGET", 2000, minimum=100, maximum=100_000),
            max_lines=reader.integer("NIGHTWATCH_MEMORY_MAX_LINES", 150, minimum=10, maximum=10_000),
            compaction_target=reader.integer("NIGHTWATCH_MEMORY_COMPACTION_TARGET", 50, minimum=5, maximum=5_000),
            half_life_days=reader.number("NIGHTWATCH_MEMORY_HALF_LIFE_DAYS", 30.0, minimum=0.1, maximum=3650.0),
            dense=reader.choice("NIGHTWATCH_RECALL_DENSE", ("on", "off"), "on"),  # type: ignore[arg-type]
            shared_token_budget=reader.integer("NIGHTWATCH_SHARED_TOKEN_BUDGET", 600, minimum=0, maximum=20_000),
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
            lease_seconds=reader.number("NIGHTWATCH_LEASE_SECONDS", 90.0, minimum=1.0, maximum=3600.0),
            turn_retries=reader.integer("NIGHTWATCH_TURN_RETRIES", 1, minimum=0, maximum=3),
        )
        slack = SlackSettings(
            bot_token=reader.token("SLACK_BOT_TOKEN", "xoxb-"),
            app_token=reader.token("SLACK_APP_TOKEN", "xapp-"),
            api_url=reader.url("SLACK_API_URL", DEFAULT_SLACK_API_URL),
            admins=frozenset(a for a in (reader.text("NIGHTWATCH_ADMINS") or "").replace(" ", ",").split(",") if a),
            teachers=reader.teachers("NIGHTWATCH_TEACHERS"),
            workers=reader.integer("NIGHTWATCH_WORKERS", 24, minimum=1, maximum=256),
            proactive_interval_minutes=reader.integer(
                "NIGHTWATCH_PROACTIVE_INTERVAL_MINUTES", 180, minimum=0, maximum=MINUTES_A_WEEK
            ),
            proactive_quiet_minutes=reader.integer(
                "NIGHTWATCH_PROACTIVE_QUIET_MINUTES", 60, minimum=0, maximum=MINUTES_A_WEEK
            ),
            lesson_notes=reader.choice(  # type: ignore[arg-type]
                "NIGHTWATCH_LESSON_NOTES", ("thread", "ephemeral", "off"), "thread"
            ),
        )
        database_url = _database_url(reader, home)
        # One database for several replicas: by default their memory goes there too.
        default_store = "database" if _shared(database_url) else "files"
        memory_store = reader.choice("NIGHTWATCH_MEMORY_STORE", ("files", "database"), default_store)
        settings = cls(
            home=home,
            database_url=database_url,
            llm=llm_name,  # type: ignore[arg-type]
            anthropic_api_key=api_key,
            model=reader.text("NIGHTWATCH_MODEL") or DEFAULT_MODEL,
            llm_timeout_seconds=reader.number("NIGHTWATCH_LLM_TIMEOUT", 60.0, minimum=1.0, maximum=600.0),
            memory=memory,
            deliberation=deliberation,
            slack=slack,
            log_level=reader.optional_choice("NIGHTWATCH_LOG_LEVEL", ("DEBUG", "INFO", "WARNING", "ERROR"), upper=True),
            editor=reader.text("VISUAL") or reader.text("EDITOR"),
            notices=notices,
            memory_store=memory_store,  # type: ignore[arg-type]
            personas_dir=reader.folder("NIGHTWATCH_PERSONAS_DIR", "a folder of persona YAML files (*.yml)"),
            settings_file=settings_file,
            file_values=file_values,
            pins=PinSettings(
                roots=reader.folders("NIGHTWATCH_PIN_ROOTS"),
                token_budget=reader.integer("NIGHTWATCH_PIN_TOKEN_BUDGET", 1500, minimum=100, maximum=20_000),
                url_hosts=reader.names("NIGHTWATCH_PIN_URL_HOSTS"),
            ),
            operations=_operations(reader),
        )
        reader.refuse_unknown()
        local = settings.local_memory_notice
        return dataclasses.replace(settings, notices=(*notices, local)) if local else settings


def _operations(reader: Reader) -> OperationsSettings:
    port = reader.text("NIGHTWATCH_HEALTH_PORT")
    return OperationsSettings(
        log_format=reader.choice("NIGHTWATCH_LOG_FORMAT", ("text", "json"), "text"),  # type: ignore[arg-type]
        health_host=reader.text("NIGHTWATCH_HEALTH_HOST") or OperationsSettings.health_host,
        health_port=None if port is None else reader.integer("NIGHTWATCH_HEALTH_PORT", 0, minimum=1, maximum=65535),
        db_pool_size=reader.integer("NIGHTWATCH_DB_POOL_SIZE", 15, minimum=1, maximum=200),
    )


_SYSTEM_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))
_HOME_ACCEPTS = "a folder this user can write (created when missing)"


def _home(reader: Reader) -> Path:
    """NIGHTWATCH_HOME resolved; refused when it is a file, below a file, a system folder or not writable."""
    raw = reader.text("NIGHTWATCH_HOME") or "~/.night-watch"
    home = Path(raw).expanduser().resolve()
    problem = _home_problem(home)
    if problem:
        where = reader.where("NIGHTWATCH_HOME")
        raise ConfigError(f"NIGHTWATCH_HOME={raw!r} {problem}; it accepts {_HOME_ACCEPTS}{where}.")
    return home


def _home_problem(home: Path) -> str | None:
    if any(home == folder or folder in home.parents for folder in _SYSTEM_FOLDERS):
        return "is inside a system folder"
    if home.exists() and not home.is_dir():
        return "is a file"
    existing = next(p for p in (home, *home.parents) if p.exists())
    if not existing.is_dir():
        return f"is below a file ({existing})"
    if not os.access(existing, os.W_OK | os.X_OK):
        return "is not writable" if existing == home else f"cannot be created ({existing} is not writable)"
    return None


_DATABASE_ACCEPTS = "sqlite:///PATH, or postgresql://USER@HOST/DATABASE for several replicas"
_DRIVER_EXTRAS = {"psycopg": "install it with pip install 'nightwatch[postgres]'"}


def _database_url(reader: Reader, home: Path) -> str:
    """DATABASE_URL (default: a SQLite file in the home), refused unless SQLAlchemy can load it with its driver."""
    raw = reader.text("DATABASE_URL")
    if raw is None:
        return f"sqlite:///{home / 'nightwatch.db'}"
    where = reader.where("DATABASE_URL")
    if raw.startswith("postgres://"):
        raise ConfigError(f"DATABASE_URL starts with postgres://; write postgresql:// instead{where}.")
    try:
        url = make_url(raw)
        dialect = url.get_dialect()
    except (ArgumentError, NoSuchModuleError, ValueError):
        raise ConfigError(f"DATABASE_URL is not a database URL; it accepts {_DATABASE_ACCEPTS}{where}.") from None
    backend = url.get_backend_name()
    if backend not in ("sqlite", "postgresql"):
        raise ConfigError(
            f"DATABASE_URL names {backend}, which Night Watch does not support; it accepts {_DATABASE_ACCEPTS}{where}."
        )
    try:
        dialect.import_dbapi()
    except ImportError:
        install = _DRIVER_EXTRAS.get(url.get_driver_name(), "install it, or write postgresql:// to use psycopg")
        raise ConfigError(
            f"DATABASE_URL needs the {url.get_driver_name()} driver, which is not installed; {install}{where}."
        ) from None
    return raw


def _shared(database_url: str) -> bool:
    """Whether the database is PostgreSQL, the one several replicas share."""
    return database_url.startswith("postgresql")
