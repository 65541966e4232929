"""`python -m topodiag.docs [--check]`: rewrite (or check) the generated parts of README.md and the man page."""

import sys

from . import main

sys.exit(main())
