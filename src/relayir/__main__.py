"""python -m relayir: the relayir command."""

import sys

from .cli import main

sys.exit(main())
