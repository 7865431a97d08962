"""`python -m dfl_dsl ...`: the `dfl` command."""

import sys

from .cli import main

sys.exit(main())
