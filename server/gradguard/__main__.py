"""`python -m gradguard` runs the command-line interface."""

import sys

from gradguard.cli.main import main

sys.exit(main())
