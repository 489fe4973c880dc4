"""``python -m rl_reliable_logger``: the same as the ``rl-reliable`` command."""

import sys

from .cli.main import main

sys.exit(main())
