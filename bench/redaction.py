"""What the one redaction step costs: redacting texts, a memory file's write, and importing detect-secrets.

    python -m bench.redaction [--runs 300]

It redacts a 4,000-character text made of our persona lessons, once clean and once with a Slack token, an Anthropic
key and a `password=` assignment in it (target: p95 < 1 ms), and the backstop of a 150-lesson memory file write that
changes one line and adds one (only those two lines are redacted), against redacting the whole file. In fresh
processes (`python -X importtime`) it sums the import time of detect-secrets and of the packages only it brings
(requests, urllib3, charset_normalizer, certifi), and it adds up their size on disk.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from nightwatch.adapters.secrets import redact, redact_new_lines

DATA = Path(__file__).resolve().parent / "data" / "persona_lessons.jsonl"
ADDED = ("detect-secrets", "requests", "urllib3", "charset-normalizer", "certifi")
ADDED_MODULES = ("detect_secrets", "requests", "urllib3", "charset_normalizer", "certifi")
SECRETS = (
    "xoxb-" + "123456789012-" + "abcdefABCDEF1234",
    "sk-ant-api03-" + "Zz9" * 30,
    "password=" + "Xk9mP2qLw7Zt4Rv8",
)
TARGET_P95_MS = 1.0


def lessons() -> list[str]:
    rows = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [memory["text"] for row in rows for memory in row["memories"]]


def text_of(chars: int, with_secrets: bool) -> str:
    """About `chars` characters of lessons; with secrets, three of them sit in the middle."""
    text = " ".join(lessons())[:chars]
    if not with_secrets:
        return text
    middle = len(text) // 2
    return (text[:middle] + " " + " ".join(SECRETS) + " " + text[middle:])[:chars]


def timings_ms(action: Callable[[], object], runs: int) -> dict[str, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {"p50": round(statistics.median(samples), 3), "p95": round(samples[int(len(samples) * 0.95) - 1], 3)}


def import_ms(runs: int = 5) -> float:
    """Median import time of detect-secrets and what only it brings, in fresh processes (`-X importtime`)."""
    code = "import nightwatch.adapters.secrets.patterns"
    totals = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, check=True
        )
        micros = 0
        for line in done.stderr.splitlines():
            parts = line.removeprefix("import time:").split("|")
            if len(parts) == 3 and parts[2].strip().split(".")[0] in ADDED_MODULES:
                micros += int(parts[0])
        totals.append(micros / 1000)
    return round(statistics.median(totals), 1)


def size_mb() -> float:
    """Disk size of the packages detect-secrets adds, from their installed file lists."""
    total = 0
    for name in ADDED:
        dist = importlib.metadata.distribution(name)
        total += sum(Path(str(dist.locate_file(file))).stat().st_size for file in dist.files or ())
    return round(total / 1_000_000, 1)


def memory_file(count: int) -> str:
    return "# Maya · memory for bench\n\n## 2026-11-21 · deliberation\n" + "".join(
        f"- {text} <!-- seen:2 -->\n" for text in lessons()[:count]
    )


def measure(runs: int) -> dict[str, object]:
    clean, dirty = text_of(4000, False), text_of(4000, True)
    assert all(secret not in redact(dirty) for secret in SECRETS)
    old = memory_file(150)
    first, rest = old.split("\n", 1)
    new = f"{first}\n{rest.replace('<!-- seen:2 -->', '<!-- seen:3 -->', 1)}- Rotate the bot token after a leak.\n"
    return {
        "redact_4000_clean_ms": timings_ms(lambda: redact(clean), runs),
        "redact_4000_with_secrets_ms": timings_ms(lambda: redact(dirty), runs),
        "memory_write_backstop_ms": timings_ms(lambda: redact_new_lines(old, new, "a bench file"), runs),
        "memory_whole_file_ms": timings_ms(lambda: redact(new), runs),
        "memory_file_chars": len(new),
        "import_added_ms": import_ms(),
        "size_added_mb": size_mb(),
        "target_p95_ms": TARGET_P95_MS,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.runs), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
