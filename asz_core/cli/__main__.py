"""``python -m asz_core.cli`` runs ``asz-pipeline``."""

import sys

from asz_core.cli import main

sys.exit(main())
