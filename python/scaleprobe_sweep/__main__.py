"""`python -m scaleprobe_sweep`: what jobs/submit-sweep runs."""
import sys

if sys.version_info < (3, 7):
    sys.exit("submit-sweep: error: needs Python 3.7 or newer, this is " + sys.version.split()[0])

from .cli import main  # noqa: E402

sys.exit(main(prog="submit-sweep"))
