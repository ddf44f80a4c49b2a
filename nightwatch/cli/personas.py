"""`nightwatch personas ...`: list, show, create, edit, rename and delete personas.

A soul file (`--soul FILE`) is read here, when the command runs, as `pin add` reads its file: adapters/soul_files.py.
"""

from __future__ import annotations

import argparse
from typing import TextIO

import yaml

from nightwatch.adapters.soul_files import read_soul_file
from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.personas import (
    PersonaDraft,
    PersonaService,
    persona_to_dict,
)


def personas_list(args: argparse.Namespace, out: TextIO, *, personas: PersonaService) -> int:
    listed = personas.list()
    if not listed:
        print("No personas. Create one: nightwatch personas create NAME --role ROLE", file=out)
    for persona in listed:
        state = "" if persona.active else "  (inactive)"
        print(f"{persona.avatar or '-'}  {persona.name:<20} {persona.role}  [{persona.slug}]{state}", file=out)
    return 0


def personas_show(args: argparse.Namespace, out: TextIO, *, personas: PersonaService) -> int:
    persona = personas.get(args.name)
    data = persona_to_dict(persona)
    print(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100).rstrip(), file=out)
    return 0


def personas_create(args: argparse.Namespace, out: TextIO, *, personas: PersonaService) -> int:
    soul = read_soul_file(args.soul) if args.soul is not None else None  # None: a soul from its role
    draft = PersonaDraft(name=args.name, role=args.role, avatar=args.avatar, soul=soul)
    outcome = personas.create(draft)
    print(outcome.message, file=out)
    return 0


def personas_edit(args: argparse.Namespace, out: TextIO, *, personas: PersonaService) -> int:
    if args.soul is None and args.role is None and args.avatar is None:
        raise InvalidInputError(
            f"Say what to change: `nightwatch personas edit {args.name} --soul FILE` (or --role, --avatar)."
        )
    soul = read_soul_file(args.soul) if args.soul is not None else None
    draft = PersonaDraft(role=args.role, avatar=args.avatar, soul=soul)
    print(personas.update(args.name, draft).message, file=out)
    return 0


def personas_rename(args: argparse.Namespace, out: TextIO, *, personas: PersonaService) -> int:
    print(personas.rename(args.old, args.new).message, file=out)
    return 0


def personas_delete(args: argparse.Namespace, out: TextIO, *, personas: PersonaService) -> int:
    if not args.yes:
        raise InvalidInputError(
            f"Deleting {args.name} archives its memory and removes the persona; run again with --yes to confirm."
        )
    print(personas.delete(args.name).message, file=out)
    return 0
