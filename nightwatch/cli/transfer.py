"""`nightwatch memory export|import|edit`: memory as markdown files a person can read, move and edit."""

from __future__ import annotations

import argparse
import shlex
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from nightwatch.adapters.files import FolderDocument, read_folder, write_folder, write_private_text
from nightwatch.adapters.secrets import redact
from nightwatch.config import Settings
from nightwatch.domain.errors import ConfigError, NightWatchError, NotFoundError, StorageError
from nightwatch.domain.memory import MemoryTransfer
from nightwatch.domain.personas import PersonaService, project_slug


def memory_export(args: argparse.Namespace, out: TextIO, *, personas: PersonaService, transfer: MemoryTransfer) -> int:
    """Write every persona's memory into DIR, in the files store's layout."""
    documents = [
        FolderDocument(persona.slug, project, text)
        for persona in personas.list()
        for project, text in transfer.documents(persona)
    ]
    written = write_folder(Path(args.dir), documents)
    print(f"Exported {len(written)} memory file{'s' if len(written) != 1 else ''} to {args.dir}.", file=out)
    return 0


def memory_import(args: argparse.Namespace, out: TextIO, *, personas: PersonaService, transfer: MemoryTransfer) -> int:
    """Merge every memory file of DIR into memory, by lesson id; report each file, and exit 1 if any was skipped."""
    contents = read_folder(Path(args.dir))
    skipped = list(contents.skipped)
    imported = 0
    for document in contents.documents:
        where = f"{document.persona} · {document.project}"
        try:
            persona = personas.get(document.persona)
        except NotFoundError:
            skipped.append(f"{where}: no persona has that slug; create it (nightwatch personas create), then import")
            continue
        merged = transfer.merge_in(persona, document.project, document.text)
        imported += 1
        counts = f"{merged.added} added, {merged.updated} updated, {merged.kept} kept that only memory had"
        print(f"{where}: {counts}", file=out)
    for reason in skipped:
        print(f"skipped {reason}", file=out)
    print(f"Imported {imported} memory file{'s' if imported != 1 else ''}.", file=out)
    return 1 if skipped else 0


def memory_edit(
    args: argparse.Namespace, out: TextIO, *, settings: Settings, personas: PersonaService, transfer: MemoryTransfer
) -> int:
    """Open the memory in $VISUAL / $EDITOR and write it back only if nobody wrote to it meanwhile."""
    if not settings.editor:
        raise ConfigError("Set EDITOR (or VISUAL) to the editor to open, e.g. EDITOR=vim, then run this again.")
    persona, project = personas.get(args.persona), project_slug(args.project)
    before = transfer.text(persona, project)
    after = _edited(settings.editor, before, f"{persona.slug}-{project}")
    if after == before:
        print("No change.", file=out)
        return 0
    if transfer.replace(persona, project, before, after):
        print(f"Saved {persona.name}'s memory of {project}.", file=out)
        return 0
    kept = _keep_copy(settings.home, f"{persona.slug}-{project}", after)
    print(
        f"{persona.name}'s memory of {project} changed while you edited it, so it was not overwritten. "
        f"Your version is kept in {kept}; compare the two, then run `nightwatch memory edit` again.",
        file=out,
    )
    return 1


def _edited(editor: str, text: str, name: str) -> str:
    """The text after the editor closes; StorageError when the editor fails (nothing is written then)."""
    with tempfile.TemporaryDirectory(prefix="nightwatch-edit-") as folder:
        path = Path(folder) / f"{name}.md"
        path.write_text(text, encoding="utf-8")
        try:
            finished = subprocess.run([*shlex.split(editor), str(path)], check=False)  # noqa: S603 - the user's editor
        except OSError as err:
            raise ConfigError(f"Cannot start the editor {editor!r} ({err.strerror}); check EDITOR.") from err
        if finished.returncode != 0:
            raise NightWatchError(f"The editor exited with status {finished.returncode}; nothing was saved.")
        return path.read_text(encoding="utf-8")


def _keep_copy(home: Path, name: str, text: str) -> Path:
    """Save an edit that could not be written under NIGHTWATCH_HOME/edits/, so nothing typed is lost.

    The copy is redacted like everything else under the home, and private (0600 in a 0700 folder).
    """
    path = home / "edits" / f"{name}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}.md"
    try:
        write_private_text(path, redact(text))
    except OSError as err:
        raise StorageError(f"Could not keep your edit in {path} ({err.strerror}); it was:\n{text}") from err
    return path
