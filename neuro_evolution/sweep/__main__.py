"""``python -m neuro_evolution.sweep``: see :mod:`neuro_evolution.sweep.cli`."""

import sys

from neuro_evolution.sweep.cli import main

sys.exit(main())
