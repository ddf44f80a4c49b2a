"""`nightwatch db ...`: the database's schema."""

from __future__ import annotations

import argparse
from typing import TextIO

from sqlalchemy import Engine

from nightwatch.adapters.db import upgrade


def db_upgrade(args: argparse.Namespace, out: TextIO, *, engine: Engine) -> int:
    """Run the migrations the database lacks and say what changed (start-up does the same, quietly)."""
    print(upgrade(engine).message, file=out)
    return 0
