"""``python -m donegate``."""

import sys

from donegate.cli import main

sys.exit(main())
