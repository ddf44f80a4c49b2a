"""`python -m nightwatch.cli`: the same as the `nightwatch` command."""

import sys

from nightwatch.cli.entry import main

sys.exit(main())
