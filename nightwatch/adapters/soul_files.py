"""A persona's soul read from a file a person wrote: `personas create --soul FILE` and `personas edit --soul FILE`.

The file is read as every small file is (no link followed, a regular file, capped, UTF-8; small_file.py). A `.yml`
or `.yaml` file is the soul section of a persona file (`who_i_am`, `worldview`, `opinions`, ...); any other file is
prose, which becomes "who I am" as written. Each refusal is an InvalidInputError naming the file and the fix.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from nightwatch.domain.errors import InvalidInputError
from nightwatch.domain.inputs import check_printable
from nightwatch.domain.models import Soul
from nightwatch.domain.personas import soul_from_prose, soul_from_section
from nightwatch.small_file import Problem, SmallFileError, read_small_text

SOUL_FILE_MAX_BYTES = 64 * 1024
_YAML = (".yml", ".yaml")


def read_soul_file(raw: str) -> Soul:
    """The soul in the file at `raw` (a path); InvalidInputError says what is wrong with it and what to do."""
    path = Path(raw).expanduser()
    try:
        text = read_small_text(path, max_bytes=SOUL_FILE_MAX_BYTES)
    except SmallFileError as err:
        fix = {
            Problem.LINK: "is a symbolic link; give the file itself.",
            Problem.NOT_FILE: "is not a file; give a .md, .txt or .yml file.",
            Problem.TOO_LARGE: f"is over {SOUL_FILE_MAX_BYTES // 1024} KB; a soul is a few paragraphs.",
            Problem.NOT_UTF8: "is not UTF-8 text (a binary file?); give a text file saved as UTF-8.",
            Problem.UNREADABLE: f"could not be read ({err.strerror}).",
        }
        raise InvalidInputError(f"The soul file {path} {fix[err.problem]}") from None
    where = f"The soul file {path}"
    check_printable(text, what=where)  # a NUL or another control character: not a text file
    if path.suffix.lower() not in _YAML:
        return soul_from_prose(text, where=where)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        problem = " ".join(str(err).split())
        raise InvalidInputError(f"{where} is not valid YAML ({problem}); fix it, or give prose in a .md file.") from err
    return soul_from_section(data, where=where)
