"""Replicas starting together on one new database: each upgrade waits for the lock, so both succeed, one does the work.

Each test holds the lock itself while two processes start upgrading, so that they really meet at it: on PostgreSQL
the advisory lock (the test sees both processes wait in pg_locks), on SQLite the file's write lock. Without the lock
in `upgrade`, both would create the same tables and one would fail.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import Connection, text

from nightwatch.adapters.db import make_engine
from nightwatch.adapters.db.migrate import UPGRADE_LOCK, head
from tests.adapters.db.databases import empty_database, schema_differences
from tests.waiting import wait_until

pytestmark = pytest.mark.slow  # replicas in processes of their own, racing for the upgrade lock

ROOT = Path(__file__).resolve().parents[3]
# One replica's upgrade: says when it is about to upgrade, then what the upgrade did.
REPLICA = """
import sys
from nightwatch.adapters.db import make_engine, upgrade
engine = make_engine(sys.argv[1])
print("ready", flush=True)
print(upgrade(engine).message, flush=True)
"""


def _nightwatch_db_upgrade(url: str, home: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "DATABASE_URL": url, "NIGHTWATCH_HOME": str(home), "NIGHTWATCH_LLM": "offline"}
    command_line = [sys.executable, "-m", "nightwatch.cli", "db", "upgrade"]
    return subprocess.Popen(command_line, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _replica(url: str) -> subprocess.Popen[str]:
    command_line = [sys.executable, "-c", REPLICA, url]
    return subprocess.Popen(command_line, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _waiting_for_the_lock(conn: Connection) -> int:
    """How many sessions wait for the upgrade lock in this database (a bigint key: high half classid, low objid)."""
    query = text(
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND classid = :high "
        "AND objid = :low AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    return int(conn.execute(query, {"high": UPGRADE_LOCK >> 32, "low": UPGRADE_LOCK & 0xFFFFFFFF}).scalar_one())


def _until_both_wait(conn: Connection, replicas: list[subprocess.Popen[str]]) -> None:
    def both_wait() -> bool:
        if _waiting_for_the_lock(conn) >= len(replicas):
            return True
        for replica in replicas:
            if replica.poll() is not None:
                pytest.fail(f"a replica finished without waiting for the lock: {replica.communicate()}")
        return False

    wait_until(both_wait, "the replicas to wait for the upgrade lock", timeout=60)


def _finish(replicas: list[subprocess.Popen[str]]) -> list[str]:
    """Each replica's last line, once every one has exited 0."""
    results = [replica.communicate(timeout=120) for replica in replicas]
    for replica, (_, err) in zip(replicas, results, strict=True):
        assert replica.returncode == 0, err
    return sorted(out.strip().splitlines()[-1] for out, _ in results)


EXPECTED = sorted(
    [
        f"Database schema upgraded from an empty database to revision {head()}.",
        f"Database schema already up to date (revision {head()}).",
    ]
)


@pytest.mark.postgres
def test_two_replicas_upgrading_one_new_postgresql_database_at_once_both_succeed(tmp_path: Path) -> None:
    with empty_database("postgres", tmp_path) as url:
        engine = make_engine(url)
        try:
            with engine.connect() as holder:
                holder.execute(text("SELECT pg_advisory_lock(:key)"), {"key": UPGRADE_LOCK})
                replicas = [_nightwatch_db_upgrade(url, tmp_path / name) for name in ("a", "b")]
                _until_both_wait(holder, replicas)
                holder.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": UPGRADE_LOCK})
                holder.commit()
            assert _finish(replicas) == EXPECTED
            assert schema_differences(engine) == []
        finally:
            engine.dispose()


def test_two_replicas_upgrading_one_new_sqlite_file_at_once_both_succeed(tmp_path: Path) -> None:
    path = tmp_path / "nightwatch.db"
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("PRAGMA journal_mode=WAL")
        holder.execute("BEGIN IMMEDIATE")  # the file's write lock, as an upgrade in another process would hold it
        replicas = [_replica(f"sqlite:///{path}") for _ in range(2)]
        for replica in replicas:
            assert replica.stdout is not None
            assert replica.stdout.readline().strip() == "ready", replica.communicate()
        time.sleep(1.5)  # both are now at the lock: nothing else lies between "ready" and it
        assert [replica.poll() for replica in replicas] == [None, None], "a replica did not wait for the write lock"
        holder.execute("COMMIT")
    finally:
        holder.close()
    assert _finish(replicas) == EXPECTED
    engine = make_engine(f"sqlite:///{path}")
    try:
        assert schema_differences(engine) == []
    finally:
        engine.dispose()
