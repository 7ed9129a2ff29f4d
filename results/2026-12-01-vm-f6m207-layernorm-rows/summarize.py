"""Summary of measure.sh's runs: per thread count and pass gpt-tiny's tokens/s with the base and
the new build and PyTorch's, their ratios; per kernel (of either build, at least 1 % of the base
step) the ms per step of each build (medians over the passes).
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from base_new import print_kernel_table, print_rates, read_runs  # noqa: E402  (results/lib: shared with other campaigns)

runs = read_runs(sys.argv[1] if len(sys.argv) > 1 else "raw", model="gpt")
for t in print_rates(runs):
    print_kernel_table(runs, t)
