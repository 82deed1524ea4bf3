"""``python -m neuro_evolution.pbt``: see :mod:`neuro_evolution.pbt.cli`."""

import sys

from neuro_evolution.pbt.cli import main

sys.exit(main())
