"""Rendering of the Jinja2 templates in nightwatch/templates/ from typed contexts.

Each template has exactly one context: a frozen dataclass subclassing `Prompt` that names its template and can
give an example of itself. `tests/test_prompts.py` renders every example with StrictUndefined, so a template that
uses a name its context lacks fails the tests, not a user.
"""

from __future__ import annotations

import dataclasses
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import jinja2

TEMPLATE_DIR = Path(__file__).parent / "templates"


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - prompts and terminal text, never HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


class Prompt:
    """Base of every template context.

    Subclasses are frozen dataclasses with a `template` class variable and an `example()` classmethod giving a
    representative instance (the contract tests render it).
    """

    template: ClassVar[str]
    registry: ClassVar[dict[str, type[Prompt]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "template" in cls.__dict__:
            Prompt.registry[cls.template] = cls

    def render(self) -> str:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}  # type: ignore[arg-type]
        return environment().get_template(self.template).render(**fields).strip()
