"""``python -m bpekit`` = the ``bpekit`` command."""

import sys

from bpekit.cli import main

sys.exit(main())
