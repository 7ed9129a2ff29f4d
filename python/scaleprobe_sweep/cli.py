"""The command line of jobs/submit-sweep: the flags of the bash submitter it replaced, with the
same meanings, plus --repeat and --file."""
from __future__ import annotations

import os
import sys
import textwrap
from pathlib import Path
from typing import List, Optional

from . import campaign
from .errors import SweepError
from .dimensions import DIMENSIONS
from .settings import SWEEP_SETTINGS
from .submit import Submitter

USAGE = """\
usage: jobs/submit-sweep --bench allreduce|collective|bucket_sweep|p2p|gpt_train|resnet_train [options] [-- BENCHMARK ARGS...]
       jobs/submit-sweep --file CAMPAIGN.toml|CAMPAIGN.json [options]

Submits one SLURM job per grid point (nodes x tasks-per-node x cpus-per-task) of
jobs/<bench>.sbatch, or one job array with --array-mode. Arguments after -- go to the
benchmark binary unchanged (e.g. -- --sizes 8,1K,64K -a ring,mpi); the job adds
--scaling and names the trace.

campaign file
  --file CAMPAIGN         the sweeps of a campaign as data (.toml, or .json; docs/slurm.md,
                          jobs/campaigns/example.toml); the options below given beside it
                          override the file's settings (every sweep's)

grid and benchmark
  --bench NAME            allreduce, collective (-- -c NAME), bucket_sweep, p2p, or a trainer:
                          gpt_train, resnet_train
  --nodes LIST            node counts, comma list (default 1)
  --tasks-per-node LIST   MPI ranks per node, comma list (default 1)
  --cpus-per-task LIST    CPUs (= OpenMP threads) per rank, comma list (default 1)
{dimensions}  --srun-mpi PLUGIN       srun --mpi plugin (default $SCALEPROBE_SRUN_MPI, else none: the
                          site's MpiDefault)
  --repeat K              K passes of every point (default 1); pass k >= 2 names its trace
                          <point>_p<k>_j<job>.h5

where
  --campaign NAME         traces go to <results>/NAME/ (default: default)
  --results DIR           results root (default $SCALEPROBE_RESULTS, else <repo>/results, or
                          ./results when installed); scratch, not home: docs/slurm.md
  --build-dir DIR         programs in DIR/bin: a build tree or an install prefix (default
                          $SCALEPROBE_BUILD_DIR, else <repo>/build/release, or the prefix when
                          installed)
  --site-env FILE         site file the jobs source (default $SCALEPROBE_SITE_ENV, else
                          jobs/site.env when present)

sbatch
  --time T                time limit of every job (default 00:10:00)
  --partition P, --account A, --qos Q
  --warn-before S         trainers: --signal=B:USR1@S, the trainer checkpoints and stops S
                          seconds before the time limit (default 120; 0 = no signal)
  --requeue               trainers: a job stopped by that signal requeues itself and resumes
                          from its checkpoint (sbatch --requeue, SCALEPROBE_REQUEUE=1)
  --shared                benchmark jobs may share their nodes (default: --exclusive, so no
                          other job competes for memory bandwidth, caches or the network)
  --sbatch-opt OPT        one more sbatch option for every job, repeatable (--sbatch-opt=--mem=0)
  --array-mode            one job array for the grid: every array task allocates the grid's
                          largest point and runs its own point inside it
  --analysis              add a report job (jobs/report.sbatch: scaleprobe-analyze report) with
                          --dependency=afterany on every job of the campaign still queued

  --dry-run               print the exact sbatch lines; submit nothing, write nothing
  -h, --help

Resume: run the same command again. Points (and passes) with a trace that passes trace_check
are skipped, so are points whose job (from the manifest) is still queued or running; failed
points are submitted again (their partial or failed traces are first renamed *.failed).
Every submission is appended to <results>/NAME/manifest.tsv: one line per point with its job
id, expected trace, log and the sbatch command; <results>/NAME/campaign.json keeps every
call's command line and resolved campaign.
"""



def _dimension_lines() -> str:
    """The sweep dimensions' flags, from their table (dimensions.py): value, list or both."""
    out = []
    for d in DIMENSIONS:
        values = "|".join(d.choices) if d.choices else "WORD" if d.pattern else "N"
        text = f"{d.help}; default {d.default if d.default != '' else 'none'}; a comma list sweeps it"
        lines = textwrap.wrap(text, 68)
        flag = f"{d.flag} {values}"
        out.append(f"  {flag:<24}{lines[0]}" if len(flag) < 23 else f"  {flag}\n{'':26}{lines[0]}")
        out += [f"{'':26}{line}" for line in lines[1:]]
    return "\n".join(out) + "\n"


USAGE = USAGE.replace("{dimensions}", _dimension_lines())

# Flags that are not sweep settings: where the campaign goes and what this call does.
PATH_FLAGS = {"--campaign": "campaign", "--results": "results", "--build-dir": "build_dir",
              "--site-env": "site_env", "--file": "file"}
CALL_SWITCHES = {"--analysis": "analysis", "--dry-run": "dry_run"}
SETTING_FLAGS = {s.flag: s for s in SWEEP_SETTINGS.values() if s.flag}


def parse(argv: List[str]) -> Optional[campaign.Request]:
    """The flags as a Request; None after --help."""
    req = campaign.Request(argv=list(argv))
    i = 0
    while i < len(argv):
        opt, value = argv[i], None
        i += 1
        if opt == "--":
            req.bench_args = argv[i:]
            break
        if opt in ("-h", "--help"):
            print(USAGE, end="")
            return None
        if opt.startswith("--") and "=" in opt:
            opt, value = opt.split("=", 1)
        setting = SETTING_FLAGS.get(opt)
        if opt in CALL_SWITCHES or (setting and setting.kind == "flag"):
            if value is not None:
                raise SweepError(f"{opt} takes no value (see --help)")
            if setting:
                req.sweep[setting.key] = (opt, True)
            else:
                setattr(req, CALL_SWITCHES[opt], True)
            continue
        if not setting and opt not in PATH_FLAGS:
            raise SweepError(f"unknown option {opt} (see --help)")
        if value is None:
            if i >= len(argv):
                raise SweepError(f"{opt} needs a value (see --help)")
            value, i = argv[i], i + 1
        if setting is None:
            setattr(req, PATH_FLAGS[opt], value)
        elif setting.key == "sbatch_options":      # repeatable: one option each
            given = req.sweep.get(setting.key, (opt, []))[1]
            req.sweep[setting.key] = (f"{opt} {value}", given + [value])
        else:
            req.sweep[setting.key] = (f"{opt} {value}" if value else opt, setting.from_text(value))
    return req


def main(argv: Optional[List[str]] = None, prog: str = "submit-sweep") -> int:
    """Runs one call; `prog` is how campaign.json records the command (the wrapper's name)."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        req = parse(argv)
        if req is None:
            return 0
        root = Path(os.path.realpath(os.environ.get("SCALEPROBE_ROOT") or Path(__file__).resolve().parents[2]))
        c = campaign.build(req, root, dict(os.environ))
        return Submitter(c, root, [prog] + argv).run()
    except SweepError as e:
        print("submit-sweep: error: " + str(e).replace("\n", " "), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        # Every job submitted so far already has its manifest line (they are written one by one).
        print("submit-sweep: interrupted; the manifest lists what was submitted", file=sys.stderr)
        return 130
