"""Contract: every template has one typed context that renders it with StrictUndefined, and they agree on names."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import jinja2
import jinja2.meta
import pytest

import nightwatch
from nightwatch.prompts import TEMPLATE_DIR, Prompt, environment


def _import_everything() -> None:
    for module in pkgutil.walk_packages(nightwatch.__path__, "nightwatch."):
        if module.name.startswith(("nightwatch.adapters.slack", "nightwatch.cli")):
            continue  # optional at import time; their templates are checked when imported below
        if module.name.startswith("nightwatch.adapters.db.migrations"):
            continue  # scripts Alembic runs (env.py needs its context), not modules to import
        importlib.import_module(module.name)
    importlib.import_module("nightwatch.adapters.slack.views")


_import_everything()
TEMPLATES = sorted(p.name for p in TEMPLATE_DIR.glob("*.j2") if not p.name.startswith("_"))
CONTEXTS = dict(sorted(Prompt.registry.items()))


def test_there_are_templates() -> None:
    assert len(TEMPLATES) >= 5


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_template_has_a_typed_context(template: str) -> None:
    assert template in CONTEXTS, f"{template} has no Prompt subclass naming it"
    assert dataclasses.is_dataclass(CONTEXTS[template])


@pytest.mark.parametrize("template", sorted(CONTEXTS))
def test_context_fields_match_the_template_variables(template: str) -> None:
    source = environment().loader.get_source(environment(), template)[0]  # type: ignore[union-attr]
    used = jinja2.meta.find_undeclared_variables(environment().parse(source))
    fields = {f.name for f in dataclasses.fields(CONTEXTS[template])}
    assert used <= fields, f"{template} uses {sorted(used - fields)} that its context lacks"
    assert fields <= used, f"{CONTEXTS[template].__name__} has fields {sorted(fields - used)} the template ignores"


@pytest.mark.parametrize("template", sorted(CONTEXTS))
def test_every_example_renders_with_strict_undefined(template: str) -> None:
    example = CONTEXTS[template].example()  # type: ignore[attr-defined]
    assert isinstance(example, CONTEXTS[template])
    text = example.render()
    assert text.strip()
    assert "Undefined" not in text


def test_strict_undefined_is_on() -> None:
    with pytest.raises(jinja2.UndefinedError):
        environment().from_string("{{ missing }}").render()
