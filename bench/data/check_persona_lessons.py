"""Validate bench/data/persona_lessons.jsonl and print its label counts.

    python bench/data/check_persona_lessons.py [path]

Standard library and Night Watch's own stop words only. Prints the totals (cases, projects, memories, queries by
kind, duplicate and not-duplicate pairs, stale ids) and every violation found; the exit status is 1 when there is
any violation, 0 otherwise.

"Rare word" (the test behind `paraphrase`): lower-case the text, turn every character that is not a letter or a
digit into a space, drop the stop words (recall's own) and words shorter than 3 characters; what is left are the
rare words.
Two words match when their crude stems (first 5 characters) are equal. To be a little stricter than that, a word also
matches through its form without a plural or verb ending ("ies" -> "y", "ing", "ed", "es", "s"), so "card" and
"cards" or "tested" and "test" count as shared. A `paraphrase` query may share no rare word with any of its
relevant lessons.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from nightwatch.domain.recall import STOP_WORDS as RECALL_STOP_WORDS

DEFAULT_PATH = Path(__file__).with_name("persona_lessons.jsonl")

CORE_PERSONAS = frozenset({"Maya", "Carlos", "Priya", "Dev"})
KINDS = ("paraphrase", "lexical", "update", "negative")
SPLITS = ("tune", "report")  # alternating by line: case 1 tune, case 2 report, case 3 tune, ...
MIN_TOTALS = {
    "cases": 8,
    "projects": 6,
    "memories": 320,
    "queries": 130,
    "duplicates": 48,
    "not_duplicates": 48,
    "stale": 48,
}
MIN_PROJECTS_PER_SPLIT = 3
MIN_WORDS, MAX_WORDS = 8, 35
MAX_SAME_TIME = 3  # one reflection records at most 3 lessons at the same timestamp
MAX_RELEVANT = 3
YEAR = 2026
MIN_PARAPHRASE_SHARE = 0.40  # of all queries
MIN_NO_SHARED_SHARE = 1 / 3  # of the queries that have relevant ids
MAX_STALE_OVERLAP = 0.6  # a successor rewords its stale lesson: Jaccard of stems at most this
STEM = 5
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")
_NOT_WORD = re.compile(r"[^a-z0-9]+")
_SUFFIXES = ("ing", "ed", "es", "s")
_JUNK = re.compile(r"^(hi|hello|hey|thanks|thank you|ok|okay|sure|todo|tbd|n/?a|lorem)\b|lorem ipsum|placeholder", re.I)

# Night Watch's own recall stop words, plus the fragments contractions leave behind when apostrophes split words.
STOP_WORDS = RECALL_STOP_WORDS | frozenset(
    "don doesn didn isn aren wasn weren won wouldn shouldn couldn hasn haven hadn ain".split()
)


# --- words ---------------------------------------------------------------------------------------------------------


def rare_words(text: str) -> list[str]:
    """The words of `text` that are neither stop words nor shorter than 3 characters."""
    return [w for w in _NOT_WORD.sub(" ", text.lower()).split() if len(w) >= 3 and w not in STOP_WORDS]


def word_keys(word: str) -> set[str]:
    """Crude stems of one word: its first 5 characters, and the same for its forms without a common ending."""
    keys = {word[:STEM]}
    if word.endswith("ies") and len(word) > 4:
        keys.add((word[:-3] + "y")[:STEM])
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            keys.add(word[: -len(suffix)][:STEM])
    return keys


def text_keys(text: str) -> set[str]:
    return {key for word in rare_words(text) for key in word_keys(word)}


def shared_words(a: str, b: str) -> set[str]:
    """Rare words of `a` that match a rare word of `b`."""
    keys_b = text_keys(b)
    return {word for word in rare_words(a) if word_keys(word) & keys_b}


def overlap(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' 5-character stems."""
    sa = {w[:STEM] for w in rare_words(a)}
    sb = {w[:STEM] for w in rare_words(b)}
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


# --- one case ------------------------------------------------------------------------------------------------------


def _time(raw: Any) -> datetime | None:
    if not isinstance(raw, str) or not _TIME.fullmatch(raw):
        return None
    try:
        return datetime.strptime(raw, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def _pairs(raw: Any, name: str, ids: set[str], fail: Any) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    if not isinstance(raw, list):
        fail(f"{name} is not a list")
        return pairs
    seen: set[frozenset[str]] = set()
    for pair in raw:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            fail(f"{name}: {pair!r} is not a pair of ids")
            continue
        a, b = pair
        if a == b or a not in ids or b not in ids:
            fail(f"{name}: {pair!r} names an unknown id or the same id twice")
            continue
        if frozenset(pair) in seen:
            fail(f"{name}: {pair!r} is listed twice")
        seen.add(frozenset(pair))
        pairs.append((a, b))
    return pairs


def _check_memories(case: dict[str, Any], fail: Any) -> tuple[dict[str, str], dict[str, datetime]]:
    texts: dict[str, str] = {}
    times: dict[str, datetime] = {}
    memories = case.get("memories")
    if not isinstance(memories, list) or not memories:
        fail("memories is missing or empty")
        return texts, times
    previous: datetime | None = None
    for memory in memories:
        mid, text, when = memory.get("id"), memory.get("text"), _time(memory.get("created_at"))
        if not isinstance(mid, str) or not mid or mid in texts:
            fail(f"memory id {mid!r} is missing or not unique")
            continue
        if not isinstance(text, str) or not text.strip():
            fail(f"{mid}: text is missing")
            continue
        texts[mid] = text
        count = len(text.split())
        if "\n" in text or not MIN_WORDS <= count <= MAX_WORDS:
            fail(f"{mid}: must be one line of {MIN_WORDS}-{MAX_WORDS} words (has {count})")
        if text.startswith("I ") or _JUNK.search(text):
            fail(f"{mid}: reads as meta-commentary or junk: {text!r}")
        if when is None or when.year != YEAR:
            fail(f"{mid}: created_at {memory.get('created_at')!r} is not an ISO 8601 UTC time in {YEAR}")
            continue
        times[mid] = when
        if previous is not None and when < previous:
            fail(f"{mid}: created_at goes back in time (memories must be in story order)")
        previous = when
    for when, count in Counter(times.values()).items():
        if count > MAX_SAME_TIME:
            fail(f"{count} memories share the timestamp {when:%Y-%m-%dT%H:%M:%SZ} (at most {MAX_SAME_TIME})")
    return texts, times


def check_case(case: dict[str, Any], fail: Any) -> dict[str, Any]:
    """Validate one case; return its counts and the figures the totals need."""
    for field, kind in (("id", str), ("persona", str), ("project", str), ("split", str), ("queries", list)):
        if not isinstance(case.get(field), kind) or not case.get(field):
            fail(f"field {field!r} is missing or not a non-empty {kind.__name__}")
    texts, times = _check_memories(case, fail)
    ids = set(texts)
    duplicates = _pairs(case.get("duplicates", []), "duplicates", ids, fail)
    not_duplicates = _pairs(case.get("not_duplicates", []), "not_duplicates", ids, fail)

    kinds: Counter[str] = Counter()
    stale_ids: set[str] = set()
    successions: set[tuple[str, str]] = set()
    relevant_ids: set[str] = set()
    with_relevant = no_shared = 0
    query_ids: set[str] = set()
    for query in case.get("queries") or []:
        qid, text, kind = query.get("id"), query.get("text"), query.get("kind")
        relevant, stale = query.get("relevant"), query.get("stale", [])
        where = f"query {qid}"
        if not isinstance(qid, str) or not qid or qid in query_ids:
            fail(f"query id {qid!r} is missing or not unique")
            continue
        query_ids.add(qid)
        if not isinstance(text, str) or not text.strip():
            fail(f"{where}: text is missing")
            continue
        if kind not in KINDS:
            fail(f"{where}: kind {kind!r} is not one of {', '.join(KINDS)}")
            continue
        kinds[kind] += 1
        if not isinstance(relevant, list) or not isinstance(stale, list):
            fail(f"{where}: relevant and stale must be lists")
            continue
        unknown = [x for x in relevant + stale if x not in ids]
        if unknown or len(set(relevant)) != len(relevant) or len(set(stale)) != len(stale):
            fail(f"{where}: unknown or repeated ids {unknown or relevant + stale}")
            continue
        if kind == "negative":
            if relevant:
                fail(f"{where}: a negative query has no relevant ids")
        elif not 1 <= len(relevant) <= MAX_RELEVANT:
            fail(f"{where}: needs 1-{MAX_RELEVANT} relevant ids")
        if (kind == "update") != bool(stale):
            fail(f"{where}: stale ids belong on update queries, and every update query has some")
        for old in stale:
            if old in relevant:
                fail(f"{where}: {old} is both stale and relevant")
            for new in relevant:
                if old in times and new in times and not times[old] < times[new]:
                    fail(f"{where}: stale {old} is not older than its successor {new}")
                successions.add((old, new))
        stale_ids.update(stale)
        relevant_ids.update(relevant)
        for a, b in duplicates:
            if (a in relevant) != (b in relevant):
                fail(f"{where}: {a} and {b} are duplicates, so both or neither must be relevant")
        if not relevant:
            continue
        with_relevant += 1
        shared = set().union(*(shared_words(text, texts[m]) for m in relevant))
        no_shared += not shared
        if kind == "paraphrase" and shared:
            fail(f"{where}: paraphrase shares {sorted(shared)} with {relevant}")
        if kind == "lexical" and not shared:
            fail(f"{where}: lexical query shares no rare word with {relevant}")

    for mid in sorted(stale_ids & relevant_ids):
        fail(f"{mid} is stale on one query and relevant on another")
    for a, b in duplicates:
        if a in times and b in times and not times[a] < times[b]:
            fail(f"duplicates: [{a}, {b}] is not [older, newer]")
        if a in stale_ids or b in stale_ids:
            fail(f"duplicates: [{a}, {b}] contains a stale lesson; a superseded lesson is not a restatement")
    dup_set = {frozenset(p) for p in duplicates}
    succession_set = {frozenset(p) for p in successions}
    for pair in not_duplicates:
        if frozenset(pair) in dup_set:
            fail(f"not_duplicates: {list(pair)} is also listed as a duplicate")
        if frozenset(pair) in succession_set:
            fail(f"not_duplicates: {list(pair)} is a stale/successor pair, i.e. an update")
    stale_overlaps = []
    for old, new in sorted(successions):
        if frozenset((old, new)) in dup_set:
            fail(f"stale {old} and successor {new} are also listed as duplicates")
        score = overlap(texts[old], texts[new])
        stale_overlaps.append(score)
        if score > MAX_STALE_OVERLAP:
            fail(f"stale {old} and successor {new} share {score:.0%} of their words; reword the successor")
    return {
        "memories": len(texts),
        "kinds": kinds,
        "duplicates": len(duplicates),
        "not_duplicates": len(not_duplicates),
        "stale": len(stale_ids),
        "with_relevant": with_relevant,
        "no_shared": no_shared,
        "overlaps": {
            "duplicates": [overlap(texts[a], texts[b]) for a, b in duplicates],
            "not_duplicates": [overlap(texts[a], texts[b]) for a, b in not_duplicates],
            "stale": stale_overlaps,
        },
    }


# --- the file ------------------------------------------------------------------------------------------------------


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.2f}" if values else "-"


def main(argv: list[str]) -> int:
    path = Path(argv[1]) if len(argv) > 1 else DEFAULT_PATH
    problems: list[str] = []
    cases: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as error:
            problems.append(f"line {number}: not JSON ({error})")
            continue
        if not isinstance(case, dict):
            problems.append(f"line {number}: not a JSON object")
            continue
        label = f"line {number} ({case.get('id')})"

        def fail(message: str, label: str = label) -> None:
            problems.append(f"{label}: {message}")

        expected = SPLITS[(len(cases)) % len(SPLITS)]
        if case.get("split") != expected:
            fail(f"split is {case.get('split')!r}; cases alternate tune/report, so this one is {expected!r}")
        cases.append((case, check_case(case, fail)))

    case_ids = [case.get("id") for case, _ in cases]
    for cid, count in Counter(case_ids).items():
        if count > 1:
            problems.append(f"case id {cid!r} is used {count} times")
    projects = sorted({str(case.get("project")) for case, _ in cases})
    personas = Counter(str(case.get("persona")) for case, _ in cases)
    kinds: Counter[str] = Counter()
    for _, counts in cases:
        kinds.update(counts["kinds"])
    totals = {
        "cases": len(cases),
        "projects": len(projects),
        "memories": sum(c["memories"] for _, c in cases),
        "queries": sum(kinds.values()),
        "duplicates": sum(c["duplicates"] for _, c in cases),
        "not_duplicates": sum(c["not_duplicates"] for _, c in cases),
        "stale": sum(c["stale"] for _, c in cases),
    }
    with_relevant = sum(c["with_relevant"] for _, c in cases)
    no_shared = sum(c["no_shared"] for _, c in cases)
    for name, minimum in MIN_TOTALS.items():
        if totals[name] < minimum:
            problems.append(f"total {name} is {totals[name]}, below the minimum {minimum}")
    missing = CORE_PERSONAS - set(personas)
    if missing:
        problems.append(f"core personas missing: {sorted(missing)}")
    if not set(personas) - CORE_PERSONAS:
        problems.append("no added persona (one besides Maya, Carlos, Priya and Dev)")
    split_projects = {s: sorted({str(c.get("project")) for c, _ in cases if c.get("split") == s}) for s in SPLITS}
    for split, names in split_projects.items():
        if len(names) < MIN_PROJECTS_PER_SPLIT:
            problems.append(f"split {split!r} covers {len(names)} projects, fewer than {MIN_PROJECTS_PER_SPLIT}")
    paraphrase_share = kinds["paraphrase"] / totals["queries"] if totals["queries"] else 0.0
    if paraphrase_share < MIN_PARAPHRASE_SHARE:
        problems.append(f"paraphrase queries are {paraphrase_share:.0%} of all, below {MIN_PARAPHRASE_SHARE:.0%}")
    no_shared_share = no_shared / with_relevant if with_relevant else 0.0
    if no_shared_share < MIN_NO_SHARED_SHARE:
        problems.append(f"only {no_shared_share:.0%} of queries share no rare word with their relevant lessons")

    print(f"file: {path}")
    per_split = Counter(str(case.get("split")) for case, _ in cases)
    print(f"cases: {totals['cases']} ({', '.join(f'{s} {per_split[s]}' for s in SPLITS)})")
    print(f"projects: {totals['projects']} ({', '.join(projects)})")
    for split, names in split_projects.items():
        print(f"  {split}: {', '.join(names)}")
    print(f"personas: {', '.join(f'{name} {count}' for name, count in sorted(personas.items()))}")
    print(f"memories: {totals['memories']}")
    print(f"queries: {totals['queries']} ({', '.join(f'{k} {kinds[k]}' for k in KINDS)})")
    print(f"duplicates: {totals['duplicates']} pairs")
    print(f"not_duplicates: {totals['not_duplicates']} pairs")
    print(f"stale: {totals['stale']} ids on {kinds['update']} update queries")
    print(f"paraphrase share of all queries: {paraphrase_share:.1%}")
    print(f"queries with relevant ids sharing no rare word: {no_shared}/{with_relevant} = {no_shared_share:.1%}")
    labels = ("duplicates", "not_duplicates", "stale")
    overlaps = {key: [v for _, c in cases for v in c["overlaps"][key]] for key in labels}
    print(
        "mean word overlap (Jaccard of stems): "
        + ", ".join(f"{key} {_mean(values)}" for key, values in overlaps.items())
    )
    print("per case: id (persona, project, split): memories / queries / duplicates / not_duplicates / stale")
    for case, counts in cases:
        print(
            f"  {case.get('id')} ({case.get('persona')}, {case.get('project')}, {case.get('split')}): "
            f"{counts['memories']} / {sum(counts['kinds'].values())} / {counts['duplicates']} / "
            f"{counts['not_duplicates']} / {counts['stale']}"
        )
    if problems:
        print(f"\n{len(problems)} violation(s):")
        for problem in problems:
            print(f"  - {problem}")
        return 1
    print("\nOK: no violations")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
