"""``python -m spbfs`` is the ``spbfs`` command."""

import sys

from spbfs.cli import main

sys.exit(main())
