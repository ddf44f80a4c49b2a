"""Replicas: N `nightwatch run` processes on one PostgreSQL database against one alone, under a burst of mentions.

    python -m bench.replicas [--replicas 3] [--mentions 60] [--delay 1.0] [--workers N] [--json]

Each replica is a real `python -m nightwatch.cli run` process (its own NIGHTWATCH_HOME, as if on its own machine;
one DATABASE_URL) connected over Socket Mode to one local fake Slack (tests/fake_slack.py), whose envelopes go
round-robin over the connected replicas as Slack spreads them (`FakeSlack(round_robin=True)`). The model is the
real Anthropic client against tests/fake_anthropic.py, answering every call after `--delay` seconds. Replicas start
one after another (each once the previous is connected), then every replica is warmed up (auth.test and a Home
tab), then `--mentions` mentions are sent at once, each in its own thread, spread over 6 channels (so 6 projects).
Figures per configuration, side by side from one run:

- ack latency p50 / p99 / max (from the fake sending each envelope to receiving its ack);
- wall time from the first mention sent until every mention is settled: its deliberation finished in the database,
  or the app answered "I'm busy" (the worker pool was full);
- deliberations done, refused busy, and how they spread over the replicas (by the `owner` column);
- database connections: the peak of `pg_stat_activity` rows for the benchmark database during the burst, in all and
  for the busiest replica (each replica connects with its own `application_name`), and how many were open when idle;
- model calls made, and ERROR lines / tracebacks the replicas logged.

Configurations: N replicas; 1 replica with the same workers; and, when the mentions are more than one replica's
workers, 1 replica with NIGHTWATCH_WORKERS = mentions (the same work as the N replicas, on one process).

Each configuration gets a fresh database `nw_bench_replicas_<random>` on `--postgres` (default the local server,
user postgres), dropped afterwards. No PostgreSQL, no benchmark: exit 2 (several machines cannot share one SQLite
file). NIGHTWATCH_PROACTIVE_INTERVAL_MINUTES=0 so only mentions call the model.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psycopg
from sqlalchemy.engine import URL, make_url

from tests import payloads
from tests.fake_anthropic import FakeAnthropic, Planned, Recorded
from tests.fake_slack import BOT_USER_ID, FakeSlack
from tests.fake_slack_socket import wait_until as wait_on

APP_DEFAULT_WORKERS = 24  # NIGHTWATCH_WORKERS' default (nightwatch/config.py)
CHANNELS = 6
BOT_TOKEN = "xoxb-1-bench-token"
APP_TOKEN = "xapp-1-bench-token"
BUSY_TEXT = "I'm busy"
LISTEN_BACKLOG = 128  # the fakes' http.server listens with a backlog of 5; a burst of connects would overflow it
SAMPLE_SECONDS = 0.05
ROOT = Path(__file__).resolve().parent.parent


# --- the fakes, as the benchmark needs them ----------------------------------------------------------------------


class SlowAnthropic(FakeAnthropic):
    """The fake Anthropic server answering every call (as its default responder would) after `delay` seconds."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self._server.socket.listen(LISTEN_BACKLOG)

    def _next(self, recorded: Recorded) -> Planned:
        planned = super()._next(recorded)
        return planned if planned.delay else replace(planned, delay=self.delay)


# --- PostgreSQL --------------------------------------------------------------------------------------------------


class Postgres:
    """The server: create and drop the benchmark's databases, and sample who is connected to one."""

    def __init__(self, url: str) -> None:
        self.admin: URL = make_url(url)

    def _connect(self) -> psycopg.Connection[Any]:
        a = self.admin
        return psycopg.connect(
            host=a.host or "127.0.0.1",
            port=a.port or 5432,
            user=a.username or "postgres",
            password=a.password or None,
            dbname=a.database or "postgres",
            autocommit=True,
            connect_timeout=5,
        )

    def check(self) -> str:
        with self._connect() as conn:
            row = conn.execute("SHOW server_version").fetchone()
            limit = conn.execute("SHOW max_connections").fetchone()
        return f"PostgreSQL {row[0] if row else '?'} (max_connections {limit[0] if limit else '?'})"

    def create(self) -> str:
        name = f"nw_bench_replicas_{secrets.token_hex(4)}"
        with self._connect() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    def drop(self, name: str) -> None:
        with self._connect() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def app_url(self, name: str, application_name: str) -> str:
        url = self.admin.set(
            drivername="postgresql+psycopg", database=name, query={"application_name": application_name}
        )
        return url.render_as_string(hide_password=False)

    def rows(self, name: str, sql: str) -> list[tuple[Any, ...]]:
        a = self.admin
        with psycopg.connect(
            host=a.host or "127.0.0.1",
            port=a.port or 5432,
            user=a.username or "postgres",
            password=a.password or None,
            dbname=name,
            autocommit=True,
            connect_timeout=5,
            application_name="bench-monitor",
        ) as conn:
            return list(conn.execute(sql).fetchall())


@dataclass
class Sampler:
    """Samples pg_stat_activity for one database every SAMPLE_SECONDS from a thread (on the admin database)."""

    postgres: Postgres
    database: str
    samples: list[tuple[float, Counter[str]]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="pg-sampler", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def _loop(self) -> None:
        sql = "SELECT application_name, count(*) FROM pg_stat_activity WHERE datname = %s GROUP BY 1"
        with self.postgres._connect() as conn:
            while not self._stop.is_set():
                rows = conn.execute(sql, (self.database,)).fetchall()
                self.samples.append((time.monotonic(), Counter({str(a): int(n) for a, n in rows})))
                self._stop.wait(SAMPLE_SECONDS)

    def peak(self, since: float, until: float) -> tuple[int, int]:
        """(most connections in all, most for one replica) between two monotonic times; the monitor excluded."""
        window = [c for t, c in self.samples if since <= t <= until]
        total = max((sum(n for a, n in c.items() if a.startswith("replica-")) for c in window), default=0)
        one = max((n for c in window for a, n in c.items() if a.startswith("replica-")), default=0)
        return total, one

    def last_before(self, moment: float) -> int:
        before = [c for t, c in self.samples if t <= moment]
        return sum(n for a, n in before[-1].items() if a.startswith("replica-")) if before else 0


# --- replicas ----------------------------------------------------------------------------------------------------


@dataclass
class Replica:
    number: int
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self, timeout: float = 60.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        return int(self.process.returncode)

    def errors(self) -> list[str]:
        """The ERROR lines and tracebacks it logged (the last line of each traceback says what was raised)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return [line for line in text.splitlines() if line.startswith(("ERROR ", "CRITICAL ", "Traceback"))]


def replica_env(
    home: Path, database_url: str, fake: FakeSlack, model: FakeAnthropic, workers: int | None
) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "NIGHTWATCH", "DATABASE", "SLACK"))}
    env = keep | {
        "NIGHTWATCH_HOME": str(home),
        "DATABASE_URL": database_url,
        "NIGHTWATCH_LLM": "anthropic",
        "ANTHROPIC_API_KEY": "sk-ant-bench",
        "ANTHROPIC_BASE_URL": model.url,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_API_URL": fake.api_url,
        "NIGHTWATCH_PROACTIVE_INTERVAL_MINUTES": "0",
        "NIGHTWATCH_LOG_LEVEL": "WARNING",
    }
    if workers is not None:
        env["NIGHTWATCH_WORKERS"] = str(workers)
    return env


def start_replica(
    number: int,
    folder: Path,
    postgres: Postgres,
    database: str,
    fake: FakeSlack,
    model: FakeAnthropic,
    workers: int | None,
) -> Replica:
    home = folder / f"replica-{number}"
    home.mkdir(parents=True)
    env = replica_env(home, postgres.app_url(database, f"replica-{number}"), fake, model, workers)
    log = folder / f"replica-{number}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "nightwatch.cli", "run"], env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
        )
    return Replica(number, process, log)


def connect(fake: FakeSlack, replica: Replica) -> None:
    """Wait until `replica` holds a Socket Mode connection (the fake counts them; replicas start one at a time)."""
    opened = wait_on(
        fake._changed, lambda: fake.open_connections >= replica.number or replica.process.poll() is not None, 120
    )
    if not opened or replica.process.poll() is not None:
        tail = replica.log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"replica {replica.number} did not connect to the fake Slack:\n{tail}")


# --- one configuration -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Configuration:
    name: str
    replicas: int
    workers: int | None  # None: the app's default


def mention(fake: FakeSlack, number: int) -> tuple[str, str]:
    """A person's mention in a new thread of one of the channels; returns (envelope id, "channel:ts")."""
    channel = f"C{1 + number % CHANNELS}"
    text = f"<@{BOT_USER_ID}> topic {number}: should we cache the session lookups in service {number}?"
    stored = fake.workspace.store_message(channel, {"type": "message", "user": "U1", "text": text})
    envelope = fake.send_event(payloads.app_mention(text, channel=channel, ts=stored["ts"]))
    return envelope, f"{channel}:{stored['ts']}"


def busy_threads(fake: FakeSlack) -> set[str]:
    found = set()
    for number in range(CHANNELS):
        channel = f"C{1 + number}"
        for message in fake.messages(channel):
            if BUSY_TEXT in str(message.get("text")) and message.get("thread_ts"):
                found.add(f"{channel}:{message['thread_ts']}")
    return found


def percentile(values: list[float], pct: int) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1]


def run_configuration(
    config: Configuration, postgres: Postgres, mentions: int, delay: float, timeout: float
) -> dict[str, Any]:
    database = postgres.create()
    sampler = Sampler(postgres, database)
    replicas: list[Replica] = []
    try:
        with (
            tempfile.TemporaryDirectory() as tmp,
            FakeSlack(round_robin=True, listen_backlog=LISTEN_BACKLOG) as fake,
            SlowAnthropic(delay) as model,
        ):
            for number in range(2, CHANNELS + 1):
                fake.add_channel(f"C{number}", f"bench-{number}")
            sampler.start()
            begin = time.monotonic()
            for number in range(1, config.replicas + 1):  # one after another: each upgrades the schema at start-up
                replica = start_replica(number, Path(tmp), postgres, database, fake, model, config.workers)
                replicas.append(replica)
                connect(fake, replica)
            started_up = time.monotonic() - begin
            for _ in replicas:  # warm-up, one per replica: auth.test and a Home tab
                fake.send_event(payloads.app_home_opened("U1"))
            fake.wait_for(lambda: len(fake.calls_to("views.publish")) >= len(replicas), 60)
            time.sleep(1.0)
            idle = sampler.last_before(time.monotonic())

            burst = time.monotonic()
            sent = [mention(fake, n) for n in range(mentions)]
            for envelope, _ in sent:
                fake.ack_for(envelope, timeout=60)
            latencies = [fake.ack_times[envelope] * 1000 for envelope, _ in sent]

            threads = {thread for _, thread in sent}
            wall: float | None = None
            statuses: dict[str, str] = {}
            owners: Counter[str] = Counter()
            busy: set[str] = set()
            while time.monotonic() - burst < timeout:
                rows = postgres.rows(database, "SELECT thread, status, owner FROM deliberations")
                statuses = {str(t): str(s) for t, s, _ in rows if t in threads}
                owners = Counter(str(o).rsplit("/", 2)[-2] if o else "?" for t, _, o in rows if t in threads)
                busy = busy_threads(fake) & threads
                settled = {t for t, s in statuses.items() if s != "running"} | busy
                if settled >= threads:
                    wall = time.monotonic() - burst
                    break
                time.sleep(0.1)
            peak, peak_one = sampler.peak(burst, time.monotonic())
            model_calls = len(model.requests)
            codes = [replica.stop() for replica in replicas]
            errors = [line for replica in replicas for line in replica.errors()]
    finally:
        sampler.stop()
        for replica in replicas:
            replica.stop(5)
        postgres.drop(database)

    counts = Counter(statuses.values())
    return {
        "configuration": config.name,
        "replicas": config.replicas,
        "workers": config.workers or APP_DEFAULT_WORKERS,
        "mentions": mentions,
        "startup_s": round(started_up, 2),
        "ack_p50_ms": round(percentile(latencies, 50), 1),
        "ack_p99_ms": round(percentile(latencies, 99), 1),
        "ack_max_ms": round(max(latencies), 1),
        "wall_s": round(wall, 2) if wall is not None else None,
        "done": counts.get("done", 0),
        "refused_busy": len(busy),
        "other_statuses": {s: n for s, n in counts.items() if s != "done"},
        "per_replica": sorted(owners.values(), reverse=True),
        "db_connections_idle": idle,
        "db_connections_peak": peak,
        "db_connections_peak_one_replica": peak_one,
        "model_calls": model_calls,
        "errors_logged": len(errors),
        "first_errors": errors[:5],
        "exit_codes": codes,
    }


# --- output ------------------------------------------------------------------------------------------------------

ROWS = (
    ("replicas", "replicas"),
    ("NIGHTWATCH_WORKERS", "workers"),
    ("start-up, all replicas (s)", "startup_s"),
    ("ack p50 (ms)", "ack_p50_ms"),
    ("ack p99 (ms)", "ack_p99_ms"),
    ("ack max (ms)", "ack_max_ms"),
    ("wall time, all settled (s)", "wall_s"),
    ("deliberations done", "done"),
    ("refused 'busy'", "refused_busy"),
    ("other statuses", "other_statuses"),
    ("deliberations per replica", "per_replica"),
    ("db connections, idle", "db_connections_idle"),
    ("db connections, peak", "db_connections_peak"),
    ("db connections, peak of one replica", "db_connections_peak_one_replica"),
    ("model calls", "model_calls"),
    ("ERROR lines / tracebacks logged", "errors_logged"),
    ("exit codes", "exit_codes"),
)


def _cell(value: Any) -> str:
    if value is None:
        return "timed out"
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "-"
    if isinstance(value, list):
        return "/".join(str(v) for v in value) or "-"
    return str(value)


def table(document: dict[str, Any]) -> str:
    results = document["results"]
    rows = [("", *(r["configuration"] for r in results))]
    rows += [(label, *(_cell(r[key]) for r in results)) for label, key in ROWS]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        f"python -m bench.replicas --replicas {document['replicas']} --mentions {document['mentions']} "
        f"--delay {document['delay']}",
        f"{document['mentions']} mentions at once over {CHANNELS} channels, each its own thread; fake Anthropic "
        f"answering every call after {document['delay']} s; {document['postgres']}; {os.cpu_count()} cores",
        "",
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)


def configurations(replicas: int, mentions: int, workers: int | None) -> list[Configuration]:
    per = workers or APP_DEFAULT_WORKERS
    found = [Configuration(f"{replicas} replicas", replicas, workers)] if replicas > 1 else []
    found.append(Configuration("1 replica", 1, workers))
    if mentions > per:
        found.append(Configuration(f"1 replica, {mentions} workers", 1, mentions))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replicas", description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--replicas", type=int, default=3, help="replicas on the shared database (default 3)")
    parser.add_argument("--mentions", type=int, default=60, help="mentions sent at once (default 60)")
    parser.add_argument("--delay", type=float, default=1.0, help="seconds every model call takes (default 1.0)")
    parser.add_argument("--workers", type=int, default=None, help="NIGHTWATCH_WORKERS per replica (default: the app's)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for every mention to settle")
    parser.add_argument(
        "--postgres", default="postgresql://postgres@127.0.0.1:5432/postgres", help="a PostgreSQL server's admin URL"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    if args.replicas < 1 or args.mentions < 1:
        parser.error("--replicas and --mentions must be at least 1")
    postgres = Postgres(args.postgres)
    try:
        server = postgres.check()
    except psycopg.Error as err:
        print(f"PostgreSQL is unreachable at {postgres.admin.render_as_string()} ({err}).", file=sys.stderr)
        print("This benchmark needs it: several replicas cannot share one SQLite file.", file=sys.stderr)
        return 2
    results = []
    for config in configurations(args.replicas, args.mentions, args.workers):
        print(f"running: {config.name} ...", file=sys.stderr, flush=True)
        results.append(run_configuration(config, postgres, args.mentions, args.delay, args.timeout))
    document = {
        "replicas": args.replicas,
        "mentions": args.mentions,
        "delay": args.delay,
        "postgres": server,
        "results": results,
    }
    print(json.dumps(document, indent=1) if args.json else table(document))
    return 0 if all(r["wall_s"] is not None for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
