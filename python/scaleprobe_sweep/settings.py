"""Every setting of a sweep in one table: its command-line flag, its campaign-file key, its
default and the values it allows. Flags and campaign files both go through Setting.coerce, so
a value means the same wherever it is given; only the way a problem is located differs (the
caller adds "--nodes 1,x" or "file: sweep[2].nodes = ...")."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from .dimensions import DIMENSIONS, BadValue, Dimension

BENCHES = ("allreduce", "collective", "bucket_sweep", "p2p", "gpt_train", "resnet_train")
TRAINERS = ("gpt_train", "resnet_train")
# The program each job script runs, relative to the build folder: a build tree (its bin/ holds links
# to the programs) or an install prefix (as in jobs/<bench>.sbatch).
BINARIES = {
    "allreduce": "bin/allreduce_perf",
    "collective": "bin/collective_perf",
    "bucket_sweep": "bin/bucket_sweep",
    "p2p": "bin/p2p_perf",
    "gpt_train": "bin/gpt_train",
    "resnet_train": "bin/resnet_train",
}


def _no_control(text: str) -> str:
    # Every value ends up in a tab-separated manifest line; sbatch never needs tabs or newlines.
    if "\t" in text or "\n" in text or "\r" in text:
        raise BadValue(f"{text!r} contains a tab or newline")
    return text


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)  # TOML/JSON true is not 1


@dataclass(frozen=True)
class Setting:
    key: str                      # campaign-file key
    flag: Optional[str]           # command-line flag (None: campaign files only)
    kind: str                     # ints | counts | words | count | text | texts | flag (see coerce)
    hint: str = ""                # the problem of a bad value ("use strong or weak")
    choices: Tuple[str, ...] = ()
    pattern: str = ""             # text: the value must match it
    minimum: int = 0              # count, counts: the smallest allowed
    dimension: Optional[Dimension] = None  # a sweep dimension (dimensions.py) checks the values

    def coerce(self, v: Any) -> Any:
        """A campaign-file (TOML/JSON) value -> the typed value, or BadValue."""
        if self.kind == "ints":       # one positive integer or a list of them -> tuple
            items = v if isinstance(v, list) else [v]
            if not isinstance(v, list) and not _is_int(v):
                raise BadValue("expected a positive integer or a list of them")
            if not items:
                raise BadValue("empty list")
            for x in items:
                if not _is_int(x) or x < 1:
                    raise BadValue(f"'{x}' is not a positive integer")
            return tuple(items)
        if self.kind in ("words", "counts"):  # a dimension's value, or a list of them -> tuple
            items = v if isinstance(v, list) else [v]
            if not items:
                raise BadValue("empty list")
            return tuple(self.dimension.check(x) for x in items)
        if self.kind == "count":
            if not _is_int(v) or v < self.minimum:
                raise BadValue(self.hint)
            return v
        if self.kind == "text":
            if self.key == "time" and _is_int(v):     # minutes, as sbatch reads a bare number
                v = str(v)
            if not isinstance(v, str):
                raise BadValue("expected a string")
            if self.pattern and not re.fullmatch(self.pattern, v):
                raise BadValue(self.hint)
            if self.choices and v not in self.choices:
                raise BadValue(self.hint)
            return _no_control(v)
        if self.kind == "texts":
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise BadValue("expected a list of strings")
            return tuple(_no_control(x) for x in v)
        if self.kind == "flag":
            if not isinstance(v, bool):
                raise BadValue("expected true or false")
            return v
        raise AssertionError(self.kind)

    def from_text(self, text: str) -> Any:
        """A command-line value -> what a campaign file would hold (then coerce it)."""
        if self.kind == "ints":
            return [int(x) if re.fullmatch(r"[1-9][0-9]*", x) else x for x in text.split(",") if text]
        if self.kind == "words":
            return text.split(",") if "," in text else text
        if self.kind == "counts":
            items = [int(x) if re.fullmatch(r"[0-9]+", x) else x for x in text.split(",")]
            return items if len(items) > 1 else items[0]
        if self.kind == "count":
            return int(text) if re.fullmatch(r"[0-9]+", text) else text
        return text


SWEEP_SETTINGS = {s.key: s for s in (
    Setting("bench", "--bench", "text", choices=BENCHES,
            hint="the job scripts exist for allreduce, collective, bucket_sweep, p2p, gpt_train and resnet_train"),
    Setting("nodes", "--nodes", "ints"),
    Setting("tasks_per_node", "--tasks-per-node", "ints"),
    Setting("cpus_per_task", "--cpus-per-task", "ints"),
    *(Setting(d.key, d.flag, "words" if d.choices or d.pattern else "counts", dimension=d) for d in DIMENSIONS),
    Setting("srun_mpi", "--srun-mpi", "text", pattern=r"[A-Za-z0-9_]*", hint="not a plugin name"),
    Setting("repeat", "--repeat", "count", minimum=1, hint="not a positive number of passes"),
    Setting("args", None, "texts"),
    Setting("time", "--time", "text", pattern=r"[0-9:-]+",
            hint="use minutes, MM:SS, HH:MM:SS or D-HH:MM:SS"),
    Setting("partition", "--partition", "text"),
    Setting("account", "--account", "text"),
    Setting("qos", "--qos", "text"),
    Setting("sbatch_options", "--sbatch-opt", "texts"),
    Setting("array_mode", "--array-mode", "flag"),
    Setting("shared", "--shared", "flag"),
    Setting("requeue", "--requeue", "flag"),
    Setting("warn_before", "--warn-before", "count", hint="not a number of seconds"),
)}

# The settings of the report job's sbatch line (the rest are the benchmark's).
REPORT_KEYS = ("time", "partition", "account", "qos", "sbatch_options")


def sweep_defaults(env: Dict[str, str]) -> Dict[str, Any]:
    """Built-in defaults; the launcher and srun plugin follow the caller's environment as the
    job scripts do (the site file's SCALEPROBE_* defaults apply inside the job only). An empty
    srun plugin means the site's MpiDefault (srun without --mpi)."""
    d = {
        "nodes": (1,), "tasks_per_node": (1,), "cpus_per_task": (1,),
        **{dim.key: (dim.default,) for dim in DIMENSIONS}, "repeat": 1, "args": (), "time": "00:10:00", "partition": "",
        "account": "", "qos": "", "sbatch_options": (), "array_mode": False, "requeue": False,
        "warn_before": 120, "shared": False,
    }
    for key, var, default in (("launcher", "SCALEPROBE_LAUNCHER", "srun"),
                              ("srun_mpi", "SCALEPROBE_SRUN_MPI", "")):
        value = env.get(var, default)
        try:
            d[key] = SWEEP_SETTINGS[key].coerce(value)
        except BadValue as e:
            raise BadValue(f"{var}={value}: {e}") from None
    return d


CAMPAIGN_NAME_HINT = "use letters, digits, '.', '_', '-' (and '/' for sub-folders)"


def campaign_name_ok(name: Any) -> bool:
    """A folder below the results root: slashes allowed, no '.' or '..' parts (as the job checks)."""
    return (isinstance(name, str)
            and re.fullmatch(r"[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)*", name) is not None
            and not any(part in (".", "..") for part in name.split("/")))
