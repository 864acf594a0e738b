"""``python -m relayir.cli``: the relayir command."""

import sys

from . import main

sys.exit(main())
