"""`nightwatch db ...`: the database's schema."""

from __future__ import annotations

import argparse
from typing import TextIO

from injector import Injector
from sqlalchemy import Engine

from nightwatch.adapters.db import upgrade


def db_upgrade(container: Injector, args: argparse.Namespace, out: TextIO) -> int:
    """Run the migrations the database lacks and say what changed (start-up does the same, quietly)."""
    print(upgrade(container.get(Engine)).message, file=out)
    return 0
