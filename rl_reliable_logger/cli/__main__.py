"""``python -m rl_reliable_logger.cli``: the same as the ``rl-reliable`` command."""

import sys

from .main import main

sys.exit(main())
