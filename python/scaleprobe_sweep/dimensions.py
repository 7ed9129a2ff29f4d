"""The dimensions of a sweep besides its geometry (nodes x tasks per node x CPUs per task) and its
passes, declared once. The submitter (flags, campaign files, expansion to points, sbatch
--export, manifest columns), the in-job code (settings from the environment, the program's
options, the trace's name) and the analysis (point names of manifest rows) all read this table;
a new dimension is one entry here plus its use in the program.

Each entry says:
  key           campaign-file key, manifest column, submit-sweep flag (--key-with-dashes)
  env           the SCALEPROBE_* variable that carries it into the job; the programs record every
                SCALEPROBE_* variable in the trace's /provenance/env
  choices       the words it may be, or () for a count (an integer >= minimum) or a free word
  pattern       a free word: the regular expression its values match (choices and counts: ""),
                and pattern_hint what a value that does not match is told
  default       its value when not given; a point at its default does not show it in its name
  name          how any other value shows in the point name ("_{}": the value after "_")
  option        the program option that receives it (None: the job uses it itself)
  pass_default  whether the program gets the option at the default too
  alternate     its values alternate inside each pass (pass k on every value before pass k + 1 on
                any), so that a drift of the machine over a campaign does not fall on one value;
                otherwise its values are the outermost loop (the points of a job array share them)
  benches       the benchmarks it applies to (() = all); another benchmark keeps the default

Standard library only: this runs on login nodes, in jobs and in the analysis.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Mapping, Tuple


class BadValue(Exception):
    """What is wrong with a value, without where it came from."""


@dataclass(frozen=True)
class Dimension:
    key: str
    env: str
    help: str
    choices: Tuple[str, ...] = ()
    minimum: int = 0
    pattern: str = ""
    pattern_hint: str = ""
    default: Any = None
    name: str = "_{}"
    option: str | None = None
    pass_default: bool = False
    alternate: bool = False
    benches: Tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        return "--" + self.key.replace("_", "-")

    @property
    def hint(self) -> str:
        if self.pattern:
            return self.pattern_hint
        if self.choices:
            words = list(self.choices)
            return "use " + (" or ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + " or " + words[-1])
        return f"not a {self.help.split(':')[0]}" if self.minimum == 0 else f"not a {self.help.split(':')[0]} (>= {self.minimum})"

    def check(self, v: Any) -> Any:
        """One value (a word, or an int for a count) -> itself, or BadValue."""
        if self.pattern:
            if not isinstance(v, str) or not re.fullmatch(self.pattern, v):
                raise BadValue(self.hint)
            return v
        if self.choices:
            if v not in self.choices:
                raise BadValue(self.hint)
            return v
        if not isinstance(v, int) or isinstance(v, bool) or v < self.minimum:
            raise BadValue(self.hint)
        return v

    def parse(self, text: str) -> Any:
        """One value as text (an environment variable, a manifest cell) -> typed, or BadValue."""
        if self.choices or self.pattern:
            return self.check(text)
        if not re.fullmatch(r"[0-9]+", text):
            raise BadValue(self.hint)
        return self.check(int(text))

    def name_part(self, v: Any) -> str:
        return "" if v == self.default else self.name.format(v)


def _gpu_count(v: str) -> str:
    return v.rsplit(":", 1)[-1]  # SLURM_GPUS_PER_NODE may read "a100:4"


# The point-name order: _g<N>, _weak, _mpirun, _<backend> (the names traces always had), _sim-<platform>,
# then a pipelined gpt_train's _pp<stages>, _mb<micro-batches>, _gpipe, and last a sweep's _<label>.
DIMENSIONS: Tuple[Dimension, ...] = (
    Dimension("gpus_per_node", "SCALEPROBE_GPUS_PER_NODE", "GPU count: 0 = the CPU path, N > 0 runs the "
              "benchmark on --backend nccl, one GPU per rank", default=0, name="_g{}"),
    Dimension("scaling", "SCALEPROBE_SCALING", "scaling: strong keeps the problem (trainers: -B is the "
              "global batch), weak grows it with the ranks (sizes and -B per rank)", choices=("strong", "weak"), default="strong", name="_{}",
              option="--scaling", pass_default=True),
    Dimension("launcher", "SCALEPROBE_LAUNCHER", "launcher inside the allocation: srun or mpirun (Open MPI's or "
              "MPICH/Hydra's)", choices=("srun", "mpirun"), default="srun"),
    Dimension("backend", "SCALEPROBE_BACKEND", "backend: the library the collectives and the trainers' gradient "
              "buckets run on (nccl: with GPUs)", choices=("mpi", "gloo", "nccl"), default="mpi",
              option="--backend", alternate=True),
    # A simulated point runs the smpi build's program on a SimGrid platform of the point's nodes x
    # tasks per node (scripts/simulate), inside a one-task job: its times are simulated, labelled so.
    # The value is scripts/simulate's --topology: the shape comes from the point's nodes (or from
    # --topology-parameters in SCALEPROBE_SIM_FLAGS).
    Dimension("simulate", "SCALEPROBE_SIMULATE", "simulated platform: none runs on the allocation; flat, "
              "fat-tree, dragonfly or torus simulates the point's nodes x tasks per node on that topology "
              "(scripts/simulate --topology, docs/simulation.md)",
              choices=("none", "flat", "fat-tree", "dragonfly", "torus"), default="none", name="_sim-{}",
              benches=("allreduce", "collective", "bucket_sweep", "p2p")),
    # Pipeline parallelism (gpt_train --pipeline-stages; trainers/gpt/pipeline_plan.hpp): the point's
    # ranks are stages x data-parallel replicas; micro-batches and a schedule only with stages.
    Dimension("pipeline_stages", "SCALEPROBE_PIPELINE_STAGES", "pipeline stage count: 0 = none, S > 0 cuts "
              "gpt_train's blocks into S stages, one rank each (the point's ranks a multiple of S)", default=0,
              name="_pp{}", option="--pipeline-stages", alternate=True, benches=("gpt_train",)),
    Dimension("micro_batches", "SCALEPROBE_MICRO_BATCHES", "micro-batch count: a pipelined step's rows cut into "
              "this many (0 = as many as stages)", default=0, name="_mb{}", option="--micro-batches",
              alternate=True, benches=("gpt_train",)),
    Dimension("schedule", "SCALEPROBE_SCHEDULE", "pipeline schedule: gpipe (every forward, then every backward) or "
              "1f1b", choices=("gpipe", "1f1b"), default="1f1b", name="_{}", option="--schedule", alternate=True,
              benches=("gpt_train",)),
    # A label only names points: two sweeps of one geometry (a point too long for one job, split
    # into runs of different arguments) need different trace names (campaign._check_unique).
    Dimension("label", "SCALEPROBE_LABEL", "label: a word added to the point names of a sweep, so that two "
              "sweeps of one geometry (one point split into runs of different arguments) name their traces apart",
              pattern=r"[a-z][a-z0-9-]{0,31}",
              pattern_hint="use lower-case letters, digits and '-', a letter first, at most 32", default="",
              name="_{}"),
)
BY_KEY: Dict[str, Dimension] = {d.key: d for d in DIMENSIONS}
# Reading a value from the environment: SLURM's own spelling of a GPU count.
ENV_READERS: Dict[str, Callable[[str], str]] = {"gpus_per_node": _gpu_count}


def defaults() -> Dict[str, Any]:
    return {d.key: d.default for d in DIMENSIONS}


def resolve(values: Mapping[str, Any], label: Callable[[str, Any], str]) -> Dict[str, Any]:
    """The rules between dimensions, on one point's values -> the values to run. `label(key,
    value)` says how the caller names a value in a message ("--backend gloo", "SCALEPROBE_...=gloo").
    GPUs mean NCCL: the same program on --backend nccl, one GPU per rank; NCCL needs GPUs. A
    simulated run is on MPI (SMPI) and on no GPU. Micro-batches and a schedule belong to a pipeline
    (a campaign comparing data parallelism with pipelines gives each its own sweep)."""
    out = dict(values)
    if not out["pipeline_stages"]:
        for key in ("micro_batches", "schedule"):
            if out[key] != BY_KEY[key].default:
                raise BadValue(f"{label(key, out[key])} without {label('pipeline_stages', 'S')}: only a pipelined "
                               "run has micro-batches and a schedule")
    gpus, backend = out["gpus_per_node"], out["backend"]
    if out["simulate"] != "none" and (gpus or backend != "mpi"):
        what = label("gpus_per_node", gpus) if gpus else label("backend", backend)
        raise BadValue(f"{what} with {label('simulate', out['simulate'])}: a simulated run is on MPI (SMPI), no GPU")
    if gpus:
        if backend == "gloo":
            raise BadValue(f"{label('backend', backend)} with {gpus} GPUs per node: a GPU run is on nccl")
        out["backend"] = "nccl"
    elif backend == "nccl":
        raise BadValue(f"{label('backend', backend)} needs GPUs: --gpus-per-node N")
    return out


def tag(values: Mapping[str, Any]) -> str:
    """The name parts of one point's dimensions, in table order: "_g4_weak_mpirun_gloo", or "".
    A GPU point runs on NCCL, so _g<N> names it and _nccl does not appear."""
    v = {**defaults(), **values}
    if v["gpus_per_node"] and v["backend"] == "nccl":
        v["backend"] = BY_KEY["backend"].default
    return "".join(d.name_part(v[d.key]) for d in DIMENSIONS)


def point_name(bench: str, nodes: Any, tasks_per_node: Any, cpus_per_task: Any, values: Mapping[str, Any]) -> str:
    """<bench>_N<nodes>_t<tasks/node>_c<cpus/task> + tag(values), e.g. allreduce_N2_t4_c1_weak."""
    return f"{bench}_N{nodes}_t{tasks_per_node}_c{cpus_per_task}{tag(values)}"


def from_texts(texts: Mapping[str, str]) -> Dict[str, Any]:
    """Values written as text (manifest cells; missing or empty: the default) -> typed values."""
    out = defaults()
    for d in DIMENSIONS:
        text = texts.get(d.key) or ""
        if text:
            out[d.key] = d.parse(text)
    return out


def program_options(bench: str, values: Mapping[str, Any]) -> list:
    """The options the job adds to the program's arguments, in table order."""
    out = []
    for d in DIMENSIONS:
        if d.option and (not d.benches or bench in d.benches) and (d.pass_default or values[d.key] != d.default):
            out += [d.option, str(values[d.key])]
    return out


def exports(values: Mapping[str, Any]) -> list:
    """NAME=value for every dimension: what a job gets through sbatch --export."""
    return [f"{d.env}={values[d.key]}" for d in DIMENSIONS]
