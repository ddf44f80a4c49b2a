"""Speed of the numpy all-MiniLM-L6-v2 encoder, beside sentence-transformers when it is installed.

    python -m bench.embedding [--runs 7] [--queries 120] [--json]

Over 80 one-line lessons of the kind personas record, it times batch encoding (median of --runs, lessons per
second), one short query at a time (p50/p95 over --queries), the first call including loading the weights, and the
peak RSS. The cold start counts the imports each encoder makes on first use (safetensors and the tokenizer for ours,
torch and sentence-transformers for theirs). When `sentence_transformers` is importable it times the same things
for it in the same run, the two taking turns (with a pause between turns, as each one's worker threads keep
spinning for a while after a call), and reports the minimum cosine between their vectors. torch is imported only
for that comparison, and runs on one thread a core (or OPENBLAS_NUM_THREADS); ours sets one BLAS thread for its
process when it loads (see nightwatch/adapters/encoder/embeddings.py), so the comparison gives torch the advantage.

Targets on a 2-core machine: at least 60 lessons/s batched, query p95 at most 25 ms, batch time at most 1.5x
sentence-transformers'. Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from functools import partial
from itertools import cycle, islice
from typing import Any

import numpy as np

from nightwatch.adapters.encoder import embeddings

TARGET_LESSONS_PER_S = 60.0
TARGET_QUERY_P95_MS = 25.0
TARGET_RATIO = 1.5
SETTLE_S = 0.3  # OpenBLAS and OpenMP workers spin up to ~0.1 s after a call before they sleep
CORES = len(os.sched_getaffinity(0))
# OpenBLAS's own order of settings; torch gets the same number, so the comparison is fair.
THREADS = int(os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or CORES)
Encode = Callable[[Sequence[str]], "np.ndarray[Any, Any]"]
LESSONS = (
    "Rotate staging database credentials after every contractor offboarding and revoke their SSO sessions that day.",
    "Never log full request bodies from the payments webhook; they carry card fingerprints and billing addresses.",
    "Pin requests to 2.32.3 until the retry regression in 2.33 is fixed upstream (INC-4471).",
    "Run the migration dry-run against a fresh production snapshot before every release that touches the orders table.",
    "Flaky end-to-end tests hide real failures; quarantine them within a day and file an owner ticket.",
    "Feature flags older than two sprints must be removed or promoted, or nobody remembers what the off path does.",
    "Use idempotency keys on every payment call and keep them stable across retries, or customers get charged twice.",
    "Exponential backoff without jitter turned a small outage into a retry storm; always add full jitter.",
    "The auth service caches JWKS keys for an hour, so key rotation needs a one-hour overlap window.",
    "Ask for a threat model whenever a feature adds a new public endpoint or accepts uploaded files.",
    (
        "Do not merge on Friday afternoons unless the change is behind a flag that is off by default, the on-call "
        "engineer has read the diff, and the rollback has been rehearsed on staging."
    ),
    "Code review should check error messages: every message a user sees must say what to do next.",
    "Large pull requests hide bugs; split refactors from behaviour changes so reviewers can read both.",
    "The search index rebuild takes forty minutes, so schedule it outside the European business day.",
    "Secrets in CI logs happened twice this quarter; mask every variable whose name contains token or key.",
    "Keep the canary at five percent for at least thirty minutes before promoting a deploy to everyone.",
    "Property-based tests found three parsing bugs in the CSV importer that example tests missed for months.",
    "When a test needs the clock, pass now in as an argument instead of patching datetime globally.",
    "Dependabot upgrades of the ORM broke lazy loading twice; read the changelog before merging those.",
    (
        "Write the rollback script before the migration and test it on the same production snapshot, because last "
        "quarter two rollbacks failed halfway and left the orders table locked for an hour."
    ),
    "Every new cron job needs an alert when it has not run for twice its interval.",
    "SQL built with string formatting failed the pentest; use bound parameters everywhere, including in admin tools.",
    "The mobile team needs two weeks of notice before any breaking change to the public API.",
    "Load tests at a tenth of production traffic did not catch the connection pool exhaustion; test at full volume.",
    "Design docs should name the owner, the rollback plan and the metric that proves the change worked.",
    "Cache invalidation bugs in the pricing page cost a weekend; version cache keys with the schema hash.",
    "Use a separate read replica for analytics queries so reports cannot slow down checkout.",
    "Screenshot diffs catch CSS regressions cheaply; run them on every pull request that touches the design system.",
    "Review access lists for the production bastion host every month and remove people who changed teams.",
    "Timeouts must be shorter than the caller's timeout, otherwise retries pile up behind a stuck request.",
    (
        "Estimate in ranges, not single numbers, say what would make the estimate wrong, and revisit it at the "
        "midpoint of the sprint instead of discovering the slip on the last day of the release."
    ),
    "The billing worker is not idempotent yet, so never replay its queue without deduplicating first.",
    "Containers running as root failed the audit; set a non-root user in every Dockerfile.",
    "Onboarding docs drifted from reality; new hires should update them as part of their first week.",
    "Encrypt backups with a key that lives outside the cloud account they are stored in.",
    "The on-call handover note lists open incidents, flaky alerts and pending rollbacks, every Monday.",
    "Mutation testing showed the discount rules had tests that asserted nothing; check assertions in review.",
    "Keep third-party SDK calls behind our own interface so tests can use a fake instead of mocks.",
    "Rate limits on the login endpoint stopped the credential stuffing attack; keep them per account and per IP.",
    "Do the smallest change that fixes the incident first, and the proper refactor in a separate pull request.",
    "A missing index on events.created_at made the weekly report take two hours; check query plans in review.",
    "Accessibility bugs reported by customers were all about keyboard focus; add focus checks to the QA list.",
    "Stop sharing one service account between environments; each environment gets its own least-privilege role.",
    "Retro action items without an owner and a date were never done; assign both before the meeting ends.",
    "Cross-site scripting in the markdown preview came from an unsafe HTML option; sanitise on the server.",
    "Regression tests for every production bug, written before the fix, kept the same bug from coming back.",
    (
        "Time zones broke the scheduling feature twice, once at the daylight saving change and once for a customer in "
        "Kathmandu; store timestamps in UTC, convert only at the edge, and test both offsets."
    ),
    "The release checklist must include checking that database migrations are backwards compatible with the old code.",
    "Slow test suites get skipped; keep the unit tests under two minutes and move the rest to nightly.",
    "Vendor outages hit us through the email provider; queue outgoing mail and retry instead of failing requests.",
    "Prefer boring technology for core services; new databases need a written case and a migration plan.",
    "Session cookies must be HttpOnly, Secure and SameSite=Lax; the audit found the admin app missing all three.",
    (
        "Pair on the first deploy of a new service so that two people know how to roll it back, where its logs and "
        "dashboards live, and which alerts should page someone at night."
    ),
    "Snapshot tests of whole API responses broke on every field addition; assert the fields that matter instead.",
    "Tech debt tickets need a cost in hours lost per month, or they never win against features.",
    "The data export endpoint leaked other tenants' rows because the tenant filter was applied after pagination.",
    "Document every environment variable in the README with its default and what breaks when it is wrong.",
    "Disk filled up on the log host because rotation was per day, not per size; rotate on both.",
    "QA found that the retry button double-submits forms; disable it until the first request returns.",
    "When a dependency is abandoned, fork it into the organisation before the next security advisory arrives.",
    "Track p95 latency per endpoint, not the average, because the slow tail is what customers complain about.",
    "Every public endpoint needs authorisation tests for a user of another tenant, not only for anonymous users.",
    "Incident reviews are blameless, but each one ends with a concrete change to a system, not to a person.",
    "Run the linter and type checker in pre-commit so review comments are about design instead of style.",
    "The payment sandbox accepts cards that production rejects; test the decline paths with recorded responses.",
    "Put a size limit on uploaded avatars; a 400 megabyte image took down the thumbnail worker.",
    (
        "Before deleting a dashboard, check which alerts and runbooks link to it; the connection saturation panel was "
        "removed in a January cleanup and nobody saw the pool filling up during the checkout outage."
    ),
    "Fuzzing the protocol parser found a crash on empty frames within ten minutes; fuzz every parser we own.",
    "Split the monolith's deploy into independent services only where teams are actually blocked by each other.",
    "Use short-lived credentials from the identity provider for CI instead of long-lived cloud keys.",
    "Contract tests between the web app and the API caught the renamed field before it reached production.",
    "Announce deprecations in the changelog two releases ahead and log a warning when the old path is used.",
    "Blue-green deploys doubled our database connections; size the pool for both colours at once.",
    "A junior engineer's question about the retry logic revealed it retried non-idempotent POST requests.",
    "Keep a written decision record for every architecture choice, with the options that were rejected and why.",
    "Leaked API keys in a public gist were found by a scanner within an hour; enable secret scanning everywhere.",
    "Check licence compatibility before adding a dependency; an AGPL library almost shipped inside the SDK.",
    "Measure before optimising: the slow page was spending ninety percent of its time in one N+1 query.",
    "Product and engineering agree on the acceptance criteria before work starts, written in the ticket.",
    "Chaos drills that kill one database replica every month kept the failover runbook accurate.",
)
QUERIES = (
    "retry storm", "rotate credentials", "flaky tests", "deploy on Friday", "idempotency keys",
    "slow database query", "secret scanning", "time zones", "rollback plan", "rate limiting login",
    "upload size limit", "tenant data leak",
)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=7, help="batch runs per encoder; the median counts (default 7)")
    parser.add_argument("--queries", type=int, default=120, help="single-query calls to time (default 120)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    result = run(args.runs, args.queries, print if not args.json else lambda _line: None)
    if args.json:
        print(json.dumps(result, indent=2))
    return 0 if all(result["targets_met"].values()) else 1


def run(runs: int, queries: int, report: Callable[[str], None]) -> dict[str, Any]:
    """Time our encoder and, when it is installed, sentence-transformers; compare their vectors."""
    result: dict[str, Any] = {"lessons": len(LESSONS), "cores": CORES, "threads": THREADS}
    ours = embeddings.MiniLMEncoder()
    result["numpy"] = {"cold_start_s": _timed(partial(ours.embed, ["warm up"]))}
    ours.embed(LESSONS)
    result["numpy"]["peak_rss_mb"] = _peak_rss_mb()  # before torch is imported
    result["numpy"]["imported_torch"] = "torch" in sys.modules
    encoders: dict[str, Encode] = {"numpy": ours.embed}
    reference = _reference_encoder()
    if reference is not None:
        cold_start, encoders["sentence_transformers"], result["versions"] = reference
        result["sentence_transformers"] = {"cold_start_s": cold_start}
    for name, figures in _measure(encoders, runs, queries).items():
        result[name].update(figures)
    if reference is not None:
        cosines = np.sum(ours.embed(LESSONS) * encoders["sentence_transformers"](LESSONS), axis=1)
        result["min_cosine"] = float(np.min(cosines))
        result["batch_time_ratio"] = result["numpy"]["batch_s"] / result["sentence_transformers"]["batch_s"]
    result["peak_rss_mb"] = _peak_rss_mb()
    result["targets_met"] = _targets(result)
    _print(result, report)
    return result


def _reference_encoder() -> tuple[float, Encode, dict[str, str]] | None:
    """sentence-transformers on `THREADS` torch threads, with its cold start, or None when it is not installed."""
    if importlib.util.find_spec("sentence_transformers") is None:
        return None
    started = time.perf_counter()
    import sentence_transformers
    import torch

    torch.set_num_threads(THREADS)
    importlib.import_module("transformers.utils.logging").disable_progress_bar()  # no loading bar on stderr
    model = sentence_transformers.SentenceTransformer(str(embeddings.model_path()), device="cpu")

    def encode(texts: Sequence[str]) -> np.ndarray[Any, Any]:
        vectors: np.ndarray[Any, Any] = model.encode(
            list(texts), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return vectors

    encode(["warm up"])
    versions = {"sentence_transformers": sentence_transformers.__version__, "torch": torch.__version__}
    return time.perf_counter() - started, encode, versions


def _measure(encoders: dict[str, Encode], runs: int, queries: int) -> dict[str, dict[str, Any]]:
    """Median batch time and single-query percentiles, the encoders taking turns round by round, so that other
    work on the machine slows both alike; a pause before each turn lets the other's worker threads stop spinning."""
    batch: dict[str, list[float]] = {name: [] for name in encoders}
    single: dict[str, list[float]] = {name: [] for name in encoders}
    per_round = -(-queries // runs)
    for _ in range(runs):
        round_queries = list(islice(cycle(QUERIES), per_round))
        for name, encode in encoders.items():
            time.sleep(SETTLE_S)
            batch[name].append(_timed(partial(encode, LESSONS)))
            single[name] += [_timed(partial(encode, [query])) * 1000 for query in round_queries]
    return {
        name: {
            "batch_s": statistics.median(batch[name]),
            "batch_s_spread": [min(batch[name]), max(batch[name])],
            "lessons_per_s": len(LESSONS) / statistics.median(batch[name]),
            "query_p50_ms": statistics.median(single[name]),
            "query_p95_ms": _percentile(single[name], 0.95),
            "queries": len(single[name]),
        }
        for name in encoders
    }


def _targets(result: dict[str, Any]) -> dict[str, bool]:
    ours = result["numpy"]
    met = {
        "lessons_per_s": ours["lessons_per_s"] >= TARGET_LESSONS_PER_S,
        "query_p95_ms": ours["query_p95_ms"] <= TARGET_QUERY_P95_MS,
    }
    if "batch_time_ratio" in result:
        met["batch_time_ratio"] = result["batch_time_ratio"] <= TARGET_RATIO
    return met


def _print(result: dict[str, Any], report: Callable[[str], None]) -> None:
    threads = f"{result['threads']} thread" + ("s" if result["threads"] != 1 else "")
    report(f"all-MiniLM-L6-v2 over {result['lessons']} lessons on {result['cores']} cores; ours on one BLAS thread, "
           f"sentence-transformers (when compared) on {threads}")  # fmt: skip
    report(f"{'':24}{'numpy (ours)':>16}{'sentence-transf.':>18}   target")
    reference = result.get("sentence_transformers", {})
    rows = (
        ("batch lessons/s", "lessons_per_s", "{:.1f}", f">= {TARGET_LESSONS_PER_S:.0f}"),
        ("batch time s (median)", "batch_s", "{:.3f}", ""),
        ("query p50 ms", "query_p50_ms", "{:.2f}", ""),
        ("query p95 ms", "query_p95_ms", "{:.2f}", f"<= {TARGET_QUERY_P95_MS:.0f}"),
        ("cold start s", "cold_start_s", "{:.2f}", "(imports, weights and a first text)"),
    )
    for label, key, form, target in rows:
        theirs = form.format(reference[key]) if key in reference else "-"
        report(f"{label:<24}{form.format(result['numpy'][key]):>16}{theirs:>18}   {target}")
    spread = result["numpy"]["batch_s_spread"]
    report(f"batch time spread (ours): {spread[0]:.3f}-{spread[1]:.3f} s")
    before, end = result["numpy"]["peak_rss_mb"], result["peak_rss_mb"]
    report(f"peak RSS: {before:.0f} MB after ours (before torch is imported), {end:.0f} MB at the end")
    report(f"torch imported by ours: {result['numpy']['imported_torch']}")
    if not reference:
        report("sentence-transformers is not installed here: no reference figures, no ratio, no cosine check.")
    else:
        _print_reference(result, report)
    report(f"targets met: {result['targets_met']}")


def _print_reference(result: dict[str, Any], report: Callable[[str], None]) -> None:
    versions = result["versions"]
    report(f"reference: sentence-transformers {versions['sentence_transformers']}, torch {versions['torch']}")
    report(f"batch time ratio ours/theirs: {result['batch_time_ratio']:.2f}   (target <= {TARGET_RATIO})")
    report(f"min cosine ours vs theirs over all lessons: {result['min_cosine']:.7f}")


def _timed(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


if __name__ == "__main__":
    raise SystemExit(main())
