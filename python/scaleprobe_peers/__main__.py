"""``python -m scaleprobe_peers``: scripts/bench-peers' command line (see cli.py)."""
import sys

from .cli import main

sys.exit(main())
