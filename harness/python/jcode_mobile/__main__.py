"""``python -m jcode_mobile``: the ``jcode-mobile`` command (see :mod:`jcode_mobile.cli`)."""

import sys

from .cli import main

sys.exit(main())
