"""Latency of the two memory stores on one 10,000-lesson memory: files, the database on SQLite, and on PostgreSQL.

    python -m bench.memory_store [--lessons 10000] [--rounds 20] [--database-url postgresql+psycopg://...] [--json]

For each store it writes the synthetic memory of bench/read_latency.py (dated sections of 1-3 lessons) and a stored
384-dimension vector per lesson, then times, over `rounds` runs each: `read` (the text, what every turn's memory
read starts with), `read_vectors` (every lesson's vector: what a process loads once per memory, and again after
another process or replica wrote a lesson), `update` appending one lesson line under the lock (the redaction
backstop scans only the new line), `save_vectors` of one new vector, and a warm `MemoryService.read` (keywords
only, so no model is needed; the text is parsed once and then cached). PostgreSQL runs when `--database-url` points
at one; it works in a schema of its own, dropped afterwards. It prints p50 and p95 in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.engine import make_url

from bench.read_latency import PERSONA, PROJECT, FixedClock, NoModel, memory_file, queries
from nightwatch.adapters.db import DatabaseMemoryStore, make_engine, upgrade
from nightwatch.adapters.files import FileMemoryStore
from nightwatch.domain.memory import MemoryPolicy, MemoryService
from nightwatch.domain.memory.ports import MemoryStore
from nightwatch.domain.recall import Recall
from nightwatch.domain.vectors import VectorTable


@contextmanager
def files_store() -> Iterator[MemoryStore]:
    with tempfile.TemporaryDirectory(prefix="nightwatch-bench-") as folder:
        yield FileMemoryStore(Path(folder))


@contextmanager
def sqlite_store() -> Iterator[MemoryStore]:
    with tempfile.TemporaryDirectory(prefix="nightwatch-bench-") as folder:
        engine = make_engine(f"sqlite:///{Path(folder) / 'nightwatch.db'}")
        upgrade(engine)
        try:
            yield DatabaseMemoryStore(engine)
        finally:
            engine.dispose()


@contextmanager
def postgres_store(url: str) -> Iterator[MemoryStore]:
    """A store in a schema of its own in the database at `url`, dropped afterwards."""
    schema = f"nw_bench_{uuid.uuid4().hex[:12]}"
    admin = make_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    scoped = make_url(url).update_query_dict({"options": f"-csearch_path={schema}"})
    engine = make_engine(scoped.render_as_string(hide_password=False))
    try:
        upgrade(engine)
        yield DatabaseMemoryStore(engine)
    finally:
        engine.dispose()
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def timed(action: Callable[[], object], rounds: int) -> dict[str, float]:
    """p50 and p95 of `action` in milliseconds."""
    timings = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        timings.append((time.perf_counter() - started) * 1000)
    timings.sort()
    return {
        "p50_ms": round(statistics.median(timings), 2),
        "p95_ms": round(timings[math.ceil(len(timings) * 0.95) - 1], 2),
    }


def measure(store: MemoryStore, lessons: int, rounds: int) -> dict[str, Any]:
    """Timings of each store operation on a memory of `lessons` lessons with a vector each."""
    slug = PERSONA.slug
    document = memory_file(lessons)
    store.update(slug, PROJECT, lambda _old: document)
    memory = MemoryService(
        store=store, llm=NoModel(), clock=FixedClock(), recall=Recall(), policy=MemoryPolicy(token_budget=2000)
    )
    texts = [lesson.text for lesson in memory.lessons(PERSONA, PROJECT)]
    rng = np.random.default_rng(5)
    store.save_vectors(slug, PROJECT, VectorTable.empty().with_texts(texts, rng.normal(size=(len(texts), 384))))
    counter = iter(range(10**9))

    def append() -> None:
        store.update(slug, PROJECT, lambda old: old + f"- Bench lesson {next(counter)} about timeouts.\n")

    def save_one() -> None:
        line = f"Bench vector {next(counter)}"
        store.save_vectors(slug, PROJECT, VectorTable.empty().with_texts([line], rng.normal(size=(1, 384))))

    asked = iter(queries(rounds + 1))
    memory.read(PERSONA, PROJECT, *next(asked))  # parse once; later reads of the same text reuse it
    return {
        "read": timed(lambda: store.read(slug, PROJECT), rounds),
        "read_vectors": timed(lambda: store.read_vectors(slug, PROJECT), rounds),
        "update": timed(append, rounds),
        "save_vectors": timed(save_one, rounds),
        "service_read": timed(lambda: memory.read(PERSONA, PROJECT, *next(asked)), rounds),
    }


def run(lessons: int, rounds: int, database_url: str | None) -> dict[str, Any]:
    stores: dict[str, Callable[[], Any]] = {"files": files_store, "sqlite": sqlite_store}
    if database_url:
        stores["postgres"] = lambda: postgres_store(database_url)
    results: dict[str, Any] = {"lessons": lessons, "rounds": rounds}
    for name, make in stores.items():
        with make() as store:
            results[name] = measure(store, lessons, rounds)
    return results


def summary(result: dict[str, Any]) -> str:
    """A few lines for people."""
    lines = [f"memory stores, one memory of {result['lessons']} lessons (p50 / p95 ms):"]
    for name in ("files", "sqlite", "postgres"):
        if name in result:
            parts = ", ".join(f"{op} {t['p50_ms']} / {t['p95_ms']}" for op, t in result[name].items())
            lines.append(f"  {name}: {parts}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--database-url", help="a PostgreSQL URL: also measure the database store there")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = run(args.lessons, args.rounds, args.database_url)
    print(json.dumps(result) if args.json else summary(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
