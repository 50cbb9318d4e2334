"""`python -m hipo_jupyter.cli`: the `hipo` command without its script (what the MCP configs
run when no `hipo` script is on the PATH)."""

import sys

from hipo_jupyter.cli.commands import main

sys.exit(main())
