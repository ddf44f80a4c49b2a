"""The domain stays pure: it imports only the standard library, itself and nightwatch.prompts."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

DOMAIN = Path(__file__).resolve().parents[1] / "nightwatch" / "domain"
FORBIDDEN = ("slack_bolt", "slack_sdk", "anthropic", "sqlalchemy", "injector")


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def domain_files() -> list[Path]:
    return sorted(DOMAIN.rglob("*.py"))


def test_domain_has_modules() -> None:
    assert len(domain_files()) >= 5


@pytest.mark.parametrize("path", domain_files(), ids=lambda p: p.name)
def test_domain_module_imports_nothing_forbidden(path: Path) -> None:
    bad = sorted(m for m in imported_modules(path) if m.split(".")[0] in FORBIDDEN)
    assert not bad, f"{path.name} imports {bad}; the domain must stay free of outside libraries"


@pytest.mark.parametrize("path", domain_files(), ids=lambda p: p.name)
def test_domain_imports_only_stdlib_and_own_package(path: Path) -> None:
    import sys

    allowed_own = ("nightwatch.domain", "nightwatch.prompts")
    for module in imported_modules(path):
        top = module.split(".")[0]
        if top == "nightwatch":
            assert module.startswith(allowed_own), f"{path.name} imports {module}"
        else:
            assert top in sys.stdlib_module_names or top == "__future__", f"{path.name} imports {module}"


def test_checker_catches_a_forbidden_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("import sqlalchemy\nfrom slack_sdk import WebClient\n")
    assert {"sqlalchemy", "slack_sdk"} <= imported_modules(bad)
