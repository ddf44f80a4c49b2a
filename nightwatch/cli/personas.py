"""`nightwatch personas ...`: list, show, create, rename and delete personas."""

from __future__ import annotations

import argparse
from typing import TextIO

import yaml
from injector import Injector

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.personas import (
    PersonaDraft,
    PersonaService,
    persona_to_dict,
)


def personas_list(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    personas = container.get(PersonaService).list()
    if not personas:
        print("No personas. Create one: nightwatch personas create NAME --role ROLE", file=out)
    for persona in personas:
        state = "" if persona.active else "  (inactive)"
        print(f"{persona.avatar or '-'}  {persona.name:<20} {persona.role}  [{persona.slug}]{state}", file=out)
    return 0


def personas_show(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    persona = container.get(PersonaService).get(args.name)
    data = persona_to_dict(persona)
    print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100).rstrip(), file=out)
    return 0


def personas_create(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    draft = PersonaDraft(name=args.name, role=args.role, avatar=args.avatar)
    outcome = container.get(PersonaService).create(draft)
    print(outcome.message, file=out)
    return 0


def personas_rename(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    print(container.get(PersonaService).rename(args.old, args.new).message, file=out)
    return 0


def personas_delete(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    if not args.yes:
        raise InvalidInputError(
            f"Deleting {args.name} archives its memory and removes the persona; run again with --yes to confirm."
        )
    print(container.get(PersonaService).delete(args.name).message, file=out)
    return 0
