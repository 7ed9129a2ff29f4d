"""Campaign files of the sweep submitter (python/scaleprobe_sweep): TOML and JSON, their expansion to
points (order, passes, backends), precedence of flags over a sweep over defaults, paths, and the
one-line refusals naming file and key. No SLURM, no binaries."""
from __future__ import annotations

import json
import sys

import pytest

from sweep_helpers import build, error_of, toml


# ---------------------------------------------------------------- campaign files: expansion

def test_expansion_order_scaling_launcher_pass_then_grid(tmp_path):
    c = build(tmp_path, ["--file", "@c.toml"], {"c.toml": toml(
        'bench = "allreduce"\nnodes = [1, 2]\ntasks_per_node = [1, 4]\nscaling = ["strong", "weak"]\nrepeat = 2')})
    stems = [p.stem for p in c.points()]
    assert len(stems) == 2 * 2 * 2 * 2
    assert stems[:5] == ["allreduce_N1_t1_c1", "allreduce_N1_t4_c1", "allreduce_N2_t1_c1", "allreduce_N2_t4_c1",
                         "allreduce_N1_t1_c1_p2"]
    assert stems[8] == "allreduce_N1_t1_c1_weak"
    assert stems[-1] == "allreduce_N2_t4_c1_weak_p2"
    # stable: the same file gives the same order
    assert stems == [p.stem for p in build(tmp_path, ["--file", "@c.toml"]).points()]


def test_backend_is_a_dimension_named_only_when_not_mpi(tmp_path):
    c = build(tmp_path, ["--file", "@c.toml"], {"c.toml": toml(
        'bench = "allreduce"\ntasks_per_node = 2\nbackend = ["mpi", "gloo"]')})
    assert [(p.stem, p.value("backend")) for p in c.points()] == [("allreduce_N1_t2_c1", "mpi"),
                                                                  ("allreduce_N1_t2_c1_gloo", "gloo")]
    # the analysis names a manifest row's point the same way (status section, resume)
    from scaleprobe_analysis.manifest import point_name as analysis_point_name
    row = {"benchmark": "allreduce", "nodes": "1", "tasks_per_node": "2", "cpus_per_task": "1", "backend": "gloo"}
    assert analysis_point_name(row) == "allreduce_N1_t2_c1_gloo"


def test_backends_alternate_within_each_pass(tmp_path):
    # Pass 1 on every backend, then pass 2 on every backend: a backend comparison's runs interleave in
    # time instead of all of one backend's passes running before the other's.
    c = build(tmp_path, ["--file", "@c.toml"], {"c.toml": toml(
        'bench = "allreduce"\nnodes = [1, 2]\nbackend = ["mpi", "gloo"]\nrepeat = 2')})
    assert [(p.pass_no, p.value("backend"), p.nodes) for p in c.points()] == [
        (1, "mpi", 1), (1, "mpi", 2), (1, "gloo", 1), (1, "gloo", 2),
        (2, "mpi", 1), (2, "mpi", 2), (2, "gloo", 1), (2, "gloo", 2)]


def test_toml_and_json_give_the_same_campaign(tmp_path):
    t = build(tmp_path, ["--file", "@c.toml"], {"c.toml": toml(
        'bench = "bucket_sweep"\nlauncher = ["srun", "mpirun"]\nargs = ["--layout", "resnet50"]\narray_mode = true',
        top='name = "x/y"\nanalysis = true\n[defaults]\ntime = 5\n')})
    j = build(tmp_path, ["--file", "@c.json"], {"c.json": json.dumps({
        "name": "x/y", "analysis": True, "defaults": {"time": 5},
        "sweep": [{"bench": "bucket_sweep", "launcher": ["srun", "mpirun"], "args": ["--layout", "resnet50"],
                   "array_mode": True}]})})
    assert t.describe() | {"file": None} == j.describe() | {"file": None}
    assert t.sweeps[0].time == "5" and t.sweeps[0].values("launcher") == ("srun", "mpirun") and t.analysis


def test_precedence_flags_then_sweep_then_defaults_then_builtin(tmp_path):
    files = {"c.toml": toml('bench = "allreduce"\ntime = "00:02:00"', 'bench = "bucket_sweep"\nqos = "q2"',
                            top='name = "t"\n[defaults]\ntime = "00:07:00"\nqos = "q1"\n')}
    c = build(tmp_path, ["--file", "@c.toml"], files)
    assert [s.time for s in c.sweeps] == ["00:02:00", "00:07:00"]
    assert [s.qos for s in c.sweeps] == ["q1", "q2"]
    assert [s.partition for s in c.sweeps] == ["", ""]
    assert c.report["time"] == "00:07:00"                 # the report job: defaults, not a sweep's
    c = build(tmp_path, ["--file", "@c.toml", "--time", "9", "--campaign", "other", "--nodes", "2,4"])
    assert [s.time for s in c.sweeps] == ["9", "9"] and c.report["time"] == "9"
    assert c.name == "other" and all(s.nodes == (2, 4) for s in c.sweeps)


def test_paths_in_a_file_are_relative_to_it_and_flags_to_the_cwd(tmp_path, monkeypatch):
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    c = build(tmp_path, ["--file", "@sub/c.json"], {"sub/c.json": json.dumps(
        {"name": "n", "results": "res", "sweep": [{"bench": "allreduce"}]})})
    assert c.results == (tmp_path / "sub" / "res").resolve() and c.folder == c.results / "n"
    c = build(tmp_path, ["--file", "@sub/c.json", "--results", "elsewhere"])
    assert c.results == (tmp_path / "elsewhere").resolve()


def test_trainer_settings_from_defaults_reach_only_trainers(tmp_path):
    c = build(tmp_path, ["--file", "@c.toml"], {"c.toml": toml(
        'bench = "allreduce"', 'bench = "gpt_train"',
        top='name = "t"\n[defaults]\nrequeue = true\nwarn_before = 60\n')})
    assert [(s.requeue, s.warn_before) for s in c.sweeps] == [(False, 0), (True, 60)]


# ---------------------------------------------------------------- campaign files: refusals

@pytest.mark.parametrize("body, expect", [
    ('bench = "allreduce"\nnodez = 2', "sweep[1]: unknown key 'nodez'"),
    ('bench = "allreduce"\nscaling = "medium"', 'sweep[1].scaling = "medium": use strong or weak'),
    ('bench = "allreduce"\nscaling = ["strong", "x"]', 'sweep[1].scaling = ["strong", "x"]: use strong or weak'),
    ('bench = "allreduce"\nnodes = [1, 0]', "sweep[1].nodes = [1, 0]: '0' is not a positive integer"),
    ('bench = "allreduce"\nnodes = []', "sweep[1].nodes = []: empty list"),
    ('bench = "allreduce"\ncpus_per_task = true', "sweep[1].cpus_per_task = true: expected a positive integer"),
    ('bench = "allreduce"\narray_mode = 1', "sweep[1].array_mode = 1: expected true or false"),
    ('bench = "allreduce"\nargs = "-n 5"', 'sweep[1].args = "-n 5": expected a list of strings'),
    ('bench = "allreduce"\nlauncher = "ssh"', 'sweep[1].launcher = "ssh": use srun or mpirun'),
    ('bench = "allreduce"\nsrun_mpi = "pmi x"', 'sweep[1].srun_mpi = "pmi x": not a plugin name'),
    ('bench = "allreduce"\ngpus_per_node = -1', "sweep[1].gpus_per_node = -1: not a GPU count"),
    ('bench = "nccl_perf"', 'sweep[1].bench = "nccl_perf": the job scripts exist for allreduce'),
    ('bench = "gpt_train"\nargs = ["--resume", "c.h5"]', "sweep[1].args: do not pass --resume: the job script manages"),
    ('bench = "allreduce"\nargs = ["--scaling", "weak"]', "sweep[1].args: do not pass --scaling"),
    ('bench = "allreduce"\nargs = ["a\\tb"]', "contains a tab or newline"),
    ('bench = "allreduce"\nrequeue = true', "sweep[1].requeue = true: requeue is for trainer jobs"),
    ('nodes = 1', "sweep[1]: bench is required"),
])
def test_bad_sweep_values_are_one_line_naming_file_and_key(tmp_path, body, expect):
    msg = error_of(tmp_path, ["--file", "@c.toml"], {"c.toml": toml(body)})
    assert msg.startswith(str(tmp_path / "c.toml") + ": ") and expect in msg


@pytest.mark.parametrize("text, expect", [
    ('name = "t"\nanalysis = "yes"\n[[sweep]]\nbench = "allreduce"', 'analysis = "yes": expected true or false'),
    ('name = "../t"\n[[sweep]]\nbench = "allreduce"', 'name = "../t": use letters'),
    ('name = "t"\nresult = "r"\n[[sweep]]\nbench = "allreduce"', "unknown key 'result'"),
    ('name = "t"\n[defaults]\nnodez = 1\n[[sweep]]\nbench = "allreduce"', "defaults: unknown key 'nodez'"),
    ('name = "t"', "no sweeps"),
    ('[[sweep]]\nbench = "allreduce"', "name is required"),
    ('name = "t"\n[[sweep]]\nbench = "allreduce"\n[[sweep]]\nbench = "allreduce"\ntasks_per_node = [2, 1]',
     "sweep[1] and sweep[2] both list point allreduce_N1_t1_c1"),
    ('name = "t"\n[[sweep]]\nbench = "allreduce"\nnodes = [2, 2]', "sweep[1] lists point allreduce_N2_t1_c1"),
    ('name = "t"\n[[sweep]\n', "not valid TOML"),
])
def test_bad_campaign_files(tmp_path, text, expect):
    assert expect in error_of(tmp_path, ["--file", "@c.toml"], {"c.toml": text})


def test_repeat_makes_passes_distinct_but_not_across_sweeps(tmp_path):
    files = {"c.toml": toml('bench = "allreduce"\nrepeat = 2', 'bench = "allreduce"\nscaling = "weak"')}
    assert [p.stem for p in build(tmp_path, ["--file", "@c.toml"], files).points()] == \
        ["allreduce_N1_t1_c1", "allreduce_N1_t1_c1_p2", "allreduce_N1_t1_c1_weak"]
    files = {"d.toml": toml('bench = "allreduce"\nrepeat = 2', 'bench = "allreduce"')}
    assert "both list point allreduce_N1_t1_c1" in error_of(tmp_path, ["--file", "@d.toml"], files)


def test_a_label_splits_one_point_into_runs_named_apart(tmp_path):
    """One grid point too long for one job, split into two sweeps of different arguments: the
    label names them apart (last in the point name); it reaches the job's settings but not the
    program's options; a label that is not a word is one line."""
    from scaleprobe_sweep import dimensions, job
    files = {"c.toml": toml('bench = "bucket_sweep"\nnodes = 4\nlabel = "ring"\nargs = ["-a", "ring"]',
                            'bench = "bucket_sweep"\nnodes = 4\nlabel = "rab-mpi"\nscaling = "weak"\n'
                            'args = ["-a", "rabenseifner,mpi"]')}
    c = build(tmp_path, ["--file", "@c.toml"], files)
    assert [p.stem for p in c.points()] == ["bucket_sweep_N4_t1_c1_ring", "bucket_sweep_N4_t1_c1_weak_rab-mpi"]
    assert "both list point bucket_sweep_N1_t1_c1_ring (a trace name must be unique in a campaign: a label" in \
        error_of(tmp_path, ["--file", "@d.toml"], {"d.toml": toml('bench = "bucket_sweep"\nlabel = "ring"',
                                                                  'bench = "bucket_sweep"\nlabel = "ring"')})
    assert "sweep[1].label = \"Ring\": use lower-case letters" in \
        error_of(tmp_path, ["--file", "@e.toml"], {"e.toml": toml('bench = "allreduce"\nlabel = "Ring"')})
    s = job.read_settings({"SCALEPROBE_LABEL": "ring", "SCALEPROBE_ROOT": str(tmp_path)})
    assert s.values["label"] == "ring"
    assert dimensions.program_options("bucket_sweep", s.values) == ["--scaling", "strong"]
    with pytest.raises(job.JobError, match="SCALEPROBE_LABEL=a b: use lower-case letters"):
        job.read_settings({"SCALEPROBE_LABEL": "a b", "SCALEPROBE_ROOT": str(tmp_path)})


def test_toml_without_tomllib_says_so(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "tomllib", None)       # import tomllib -> ImportError
    msg = error_of(tmp_path, ["--file", "@c.toml"], {"c.toml": toml('bench = "allreduce"')})
    assert "needs Python 3.11 or newer (tomllib)" in msg and "use a .json campaign file" in msg


def test_file_and_flags_that_cannot_go_together(tmp_path):
    files = {"c.json": json.dumps({"name": "t", "sweep": [{"bench": "allreduce"}]})}
    assert "--bench cannot be combined with --file" in error_of(tmp_path, ["--file", "@c.json", "--bench", "allreduce"],
                                                                files)
    assert "cannot be combined with --file" in error_of(tmp_path, ["--file", "@c.json", "--", "-n", "5"])
    assert "use a .toml or .json" in error_of(tmp_path, ["--file", "@c.yaml"], {"c.yaml": "name: t"})
    assert "--requeue is for trainer jobs" in error_of(tmp_path, ["--file", "@c.json", "--requeue"])
