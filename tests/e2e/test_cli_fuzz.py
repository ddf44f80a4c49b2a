"""Fuzzing `nightwatch`: hostile argument lists end in exit 0, 1 or 2 with a message, never in a traceback.

Each example runs `main` itself (real SQLite, memory files, the offline model) in one data root shared by every
example, so earlier examples leave personas and lessons for later ones to trip over. A deliberation takes a second or
more, so `deliberate` is only fuzzed with one option argparse refuses somewhere among the hostile ones.
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nightwatch.cli import main
from tests.fuzzing import TracebackCatcher, catching_tracebacks

COMMANDS = [
    ["personas", "list"],
    ["personas", "show"],
    ["personas", "create"],
    ["personas", "rename"],
    ["personas", "delete"],
    ["memory", "show"],
    ["memory", "add"],
    ["memory", "forget"],
    ["memory", "search"],
    ["memory", "compact"],
    ["memory", "rollback"],
    ["memory", "clear"],
    ["context"],
    ["history"],
    ["pin", "add"],
    ["pin", "list"],
    ["pin", "remove"],
    ["pin", "refresh"],
    ["pin"],
    ["run"],
    ["personas"],
    ["memory"],
    ["nonsense"],
    [],
]
OPTIONS = ["--limit", "--project", "--role", "--avatar", "--topic", "--personas", "--llm", "--json", "--yes", "--"]
OPTIONS += ["--text", "--shared"]
REAL = ["maya", "Carlos", "code-reviewer", "Nova", "demo", "3f9a2c1d", "5", "200", "maya,carlos", ":owl:", "QA"]
REAL += ["Backfills run on replicas only, never on the primary.", "session store", "offline"]
HOSTILE = ["", " ", "\t\n", "-", "--", "-5", "0", "-0", "201", "1e3", "2.5", "٣", "99999999999999999999", "-1" * 30]
HOSTILE += ["\x00", "a\x00b", "\x1b[31mred", "\udcff", "\u202eevil", "../../etc", "#", "maya,,carlos", ",", "🔒" * 20]
HOSTILE += ["x" * 401, "y" * 4001, "日本語のトピック", "NUL\x00" * 100, "--help=no", "@maya", "<!channel>"]

controls = st.text(st.characters(categories=["Cc", "Cs", "Zs", "Lu", "Nd", "So"]), max_size=12)
numbers = st.integers(min_value=-(10**30), max_value=10**30).map(str)
long_text = st.tuples(st.sampled_from("xé🔒\x00 "), st.integers(40, 6000)).map(lambda pair: pair[0] * pair[1])
values = st.one_of(st.sampled_from(REAL), st.sampled_from(HOSTILE), numbers, controls, long_text, st.text(max_size=30))
tokens = st.one_of(values.map(lambda value: [value]), st.tuples(st.sampled_from(OPTIONS), values).map(list))
argument_lists = st.lists(tokens, max_size=5).map(lambda groups: [word for group in groups for word in group])


# Each command's positional arguments and its own options, so that a share of the examples reach the handlers.
SHAPES: dict[str, tuple[int, list[str]]] = {
    "personas list": (0, []),
    "personas show": (1, []),
    "personas create": (1, ["--avatar"]),
    "personas rename": (2, []),
    "personas delete": (1, ["--yes"]),
    "memory show": (1, ["--project"]),
    "memory add": (2, ["--project"]),
    "memory forget": (2, ["--project"]),
    "memory search": (2, ["--project", "--limit", "--json"]),
    "memory compact": (1, ["--project"]),
    "memory rollback": (1, ["--project"]),
    "memory clear": (1, ["--project", "--yes"]),
    "context": (1, ["--project", "--topic"]),
    "history": (0, ["--limit"]),
    "pin add": (2, ["--project", "--shared"]),
    "pin list": (1, ["--project"]),
    "pin remove": (1, []),
    "pin refresh": (0, []),
}
FLAGS = ("--yes", "--json", "--shared")
friendly = st.one_of(st.sampled_from(REAL), st.sampled_from(REAL), values)


@st.composite
def argvs(draw: st.DrawFn) -> list[str]:
    """A command (real, partial or not one at all) followed by hostile and real words and options."""
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return ["deliberate", *_with_refused_option(draw, draw(argument_lists))]
    if kind <= 2:
        return draw(shaped())
    return [*draw(st.sampled_from(COMMANDS)), *draw(argument_lists)]


@st.composite
def shaped(draw: st.DrawFn) -> list[str]:
    """A command with the right number of arguments and some of its options, each value hostile or real."""
    command = draw(st.sampled_from(sorted(SHAPES)))
    arity, options = SHAPES[command]
    argv = [*command.split(), *(draw(friendly) for _ in range(arity))]
    chosen = draw(st.lists(st.sampled_from(options), unique=True)) if options else []
    for option in ["--role"] * (command == "personas create") + chosen:
        argv += [option] if option in FLAGS else [option, draw(friendly)]
    return argv


def _with_refused_option(draw: st.DrawFn, words: list[str]) -> list[str]:
    at = draw(st.integers(0, len(words)))
    return [*words[:at], "--llm", "bogus", *words[at:]]


@pytest.fixture(scope="module")
def data_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One data root for every example, with the offline model and no credentials."""
    home = tmp_path_factory.mktemp("fuzz-home")
    with pytest.MonkeyPatch.context() as patch:
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "DATABASE_URL", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"):
            patch.delenv(name, raising=False)
        patch.setenv("NIGHTWATCH_HOME", str(home))
        patch.setenv("NIGHTWATCH_LLM", "offline")
        patch.setenv("NIGHTWATCH_RECALL_DENSE", "off")  # meaning recall is not what is fuzzed; words are faster
        yield home


@pytest.fixture(scope="module")
def tracebacks() -> Iterator[TracebackCatcher]:
    with catching_tracebacks() as catcher:
        yield catcher


def run(argv: list[str]) -> tuple[int, str, str]:
    """Run the command line as the console script would; return the exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exited:  # argparse: --help (0) and its own usage errors (2)
            code = exited.code if isinstance(exited.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def test_no_argument_list_ends_in_a_traceback(data_root: Path, tracebacks: TracebackCatcher) -> None:
    outcomes: Counter[int] = Counter()

    @settings(max_examples=500, deadline=None, derandomize=True, database=None)
    @given(argv=argvs())
    def fuzz(argv: list[str]) -> None:
        code, out, err = run(argv)
        assert code in (0, 1, 2), (argv, err)
        assert "Traceback" not in err, (argv, err)
        assert not tracebacks.caught, (argv, tracebacks.caught[0].getMessage())
        if code == 2:
            assert "error:" in err or "usage:" in out + err, (argv, out, err)
        outcomes[code] += 1

    fuzz()
    assert sum(outcomes.values()) >= 500
    assert outcomes[0] >= 10, outcomes  # the generator reaches the handlers, not only argparse and our checks
    assert outcomes[1] >= 10, outcomes
