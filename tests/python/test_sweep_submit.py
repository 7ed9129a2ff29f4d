"""Pure logic of the sweep submitter (python/scaleprobe_sweep): names, campaign files and their
expansion, flags, the manifest (old and new format), benchmark-argument checks (and that the
job scripts' shell scan agrees). No SLURM, no binaries: tests/slurm/test_jobs_offline.sh runs
the submitter end to end with fake sbatch/squeue."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from scaleprobe_sweep import benchargs, campaign, cli, dimensions, naming, slurm
from scaleprobe_sweep.errors import SweepError
from scaleprobe_sweep.manifest import COLUMNS, OLD_COLUMNS, History, Manifest

REPO = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------- helpers

def build(tmp_path: Path, argv, files=None, env=None) -> campaign.Campaign:
    """The campaign for ARGV (files: name -> text, written to tmp_path) with a fake repo root."""
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    req = cli.parse([a.replace("@", str(tmp_path) + "/") for a in argv])
    return campaign.build(req, tmp_path / "repo", env or {})


def error_of(tmp_path, argv, files=None, env=None) -> str:
    with pytest.raises(SweepError) as e:
        build(tmp_path, argv, files, env)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def toml(*sweeps, top='name = "t"\n'):
    return top + "".join("[[sweep]]\n" + s + "\n" for s in sweeps)


# ---------------------------------------------------------------- names

def test_trace_log_and_job_names():
    assert naming.stem("allreduce_N1_t1_c1", 1) == "allreduce_N1_t1_c1"
    assert naming.stem("allreduce_N1_t1_c1", 3) == "allreduce_N1_t1_c1_p3"
    assert naming.trace_name("allreduce_N1_t1_c1_p3", "12_4") == "allreduce_N1_t1_c1_p3_j12_4.h5"
    assert naming.array_entry(2, 4, 1, 1) == "2x4x1"
    assert naming.array_entry(2, 4, 1, 2) == "2x4x1p2"
    assert naming.job_name("gpt_train", 2, 1, 1, "_weak", 2) == "sp-gpt_train-N2t1c1_weak_p2"
    stem = "allreduce_N1_t1_c1_p2"
    assert naming.job_tag_of(Path(f"/x/{stem}_j77_3.h5.partial"), stem) == "77_3"
    assert naming.job_tag_of(Path(f"/x/{stem}_j77.h5"), stem) == "77"


def test_the_point_name_rule():
    """dimensions.point_name is the one rule (the job names its trace with it, the submitter
    predicts it, the analysis finds manifest rows by it): defaults unnamed, then _g<N>, _weak,
    _mpirun, _<backend> in that order; a GPU point on NCCL is _g<N> without _nccl."""
    def name(**values):
        return dimensions.point_name("allreduce", 2, 4, 1, values)
    assert name() == "allreduce_N2_t4_c1"
    assert name(gpus_per_node=2, scaling="weak", launcher="mpirun", backend="nccl") == "allreduce_N2_t4_c1_g2_weak_mpirun"
    assert name(backend="nccl") == "allreduce_N2_t4_c1_nccl"
    assert name(scaling="weak", backend="gloo") == "allreduce_N2_t4_c1_weak_gloo"


def test_a_new_dimension_reaches_submitter_job_and_analysis(monkeypatch, tmp_path):
    """One entry in dimensions.DIMENSIONS is all the Python side needs: the flag, the campaign-file
    key and its check, the expansion to points, the point name, the manifest column (an older
    manifest without it still reads), the job's environment variable and the program's option."""
    import importlib
    from scaleprobe_analysis import manifest as analysis_manifest
    from scaleprobe_sweep import job, manifest, settings
    extra = dimensions.Dimension("stages", "SCALEPROBE_STAGES", "stage count", minimum=1, default=1, name="_s{}",
                                 option="--pipeline-stages", alternate=True, benches=("gpt_train",))
    monkeypatch.setattr(dimensions, "DIMENSIONS", dimensions.DIMENSIONS + (extra,))
    monkeypatch.setattr(dimensions, "BY_KEY", {**dimensions.BY_KEY, "stages": extra})
    for module in (settings, campaign, manifest, cli):
        importlib.reload(module)
    try:
        req = cli.parse(["--bench", "gpt_train", "--stages", "1,2", "--repeat", "2", "--dry-run"])
        c = campaign.build(req, REPO, {})
        names = [p.stem for p in c.points()]
        assert names == ["gpt_train_N1_t1_c1", "gpt_train_N1_t1_c1_s2", "gpt_train_N1_t1_c1_p2",
                         "gpt_train_N1_t1_c1_s2_p2"]  # alternating inside each pass
        with pytest.raises(SweepError, match="--stages: stages is for gpt_train"):
            campaign.build(cli.parse(["--bench", "allreduce", "--stages", "2"]), REPO, {})
        with pytest.raises(SweepError, match="--stages 0: not a stage count"):
            campaign.build(cli.parse(["--bench", "gpt_train", "--stages", "0"]), REPO, {})
        assert manifest.COLUMNS[manifest.COLUMNS.index("pass") - 1] == "stages"
        row = {"benchmark": "gpt_train", "nodes": "1", "tasks_per_node": "2", "cpus_per_task": "1", "stages": "2"}
        assert analysis_manifest.point_name(row) == "gpt_train_N1_t2_c1_s2"
        assert analysis_manifest.point_name({**row, "stages": ""}) == "gpt_train_N1_t2_c1"  # an older manifest
        s = job.read_settings({"SCALEPROBE_STAGES": "4", "SCALEPROBE_ROOT": str(tmp_path)})
        assert s.values["stages"] == 4
        assert dimensions.program_options("gpt_train", s.values) == ["--scaling", "strong", "--pipeline-stages", "4"]
        assert dimensions.program_options("allreduce", s.values) == ["--scaling", "strong"]
        with pytest.raises(job.JobError, match="SCALEPROBE_STAGES=x: not a stage count"):
            job.read_settings({"SCALEPROBE_STAGES": "x", "SCALEPROBE_ROOT": str(tmp_path)})
    finally:
        monkeypatch.undo()
        for module in (settings, campaign, manifest, cli):
            importlib.reload(module)


def test_qline_quotes_like_the_bash_submitter():
    assert slurm.qline(["sbatch", "--export=ALL,A=/x/y:z", "-B", "8"]) == "sbatch --export=ALL,A=/x/y:z -B 8"
    assert slurm.qline(["a b", "it's", "", "--dependency=afterany:<x>"]) == \
        "'a b' 'it'\\''s' '' '--dependency=afterany:<x>'"


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


# ---------------------------------------------------------------- flags

def test_flags_parse_like_the_bash_submitter(tmp_path):
    c = build(tmp_path, ["--bench=gpt_train", "--nodes", "1,2", "--sbatch-opt", "--exclusive", "--sbatch-opt=--mem=0",
                         "--warn-before", "30", "--requeue", "--scaling", "strong,weak", "--", "-B", "8", "--", "x"])
    s = c.sweeps[0]
    assert (s.bench, s.nodes, s.sbatch_options, s.warn_before, s.requeue) == \
        ("gpt_train", (1, 2), ("--exclusive", "--mem=0"), 30, True)
    assert s.values("scaling") == ("strong", "weak") and s.args == ("-B", "8", "--", "x")
    assert c.name == "default" and c.sweeps[0].values("launcher") == ("srun",) and not c.analysis


@pytest.mark.parametrize("argv, expect", [
    (["--dry-run"], "--bench is required (allreduce, collective, bucket_sweep, p2p, gpt_train or resnet_train)"),
    (["--bench", "allreduce", "--tasks-per-node", "1,x"], "--tasks-per-node 1,x: 'x' is not a positive integer"),
    (["--bench", "allreduce", "--nodes", ""], "--nodes: empty list"),
    (["--bench", "allreduce", "--nodez", "1"], "unknown option --nodez (see --help)"),
    (["--bench", "allreduce", "--time"], "--time needs a value (see --help)"),
    (["--bench", "allreduce", "--dry-run=yes"], "--dry-run takes no value"),
    (["--bench", "allreduce", "--repeat", "two"], "--repeat two: not a positive number of passes"),
    (["--bench", "allreduce", "--campaign", "a/../b"], "campaign 'a/../b': use letters"),
    (["--bench", "allreduce", "--results", "/tmp/a,b"], "'/tmp/a,b': paths with commas cannot be passed"),
    (["--bench", "allreduce", "--site-env", "/nonexistent"], "--site-env /nonexistent: no such file"),
    (["--bench", "allreduce", "--requeue"], "--requeue is for trainer jobs (gpt_train, resnet_train)"),
    (["--bench", "allreduce", "--nodes", "2,2"], "point allreduce_N2_t1_c1 is listed twice"),
    (["--bench", "allreduce", "--", "-ox.h5"], "do not pass -ox.h5: the job script names the trace"),
    (["--bench", "p2p", "--nodes", "2", "--scaling", "strong,weak"], "--scaling weak: a message between two ranks"),
    (["--bench", "p2p", "--nodes", "1,2,3"], "p2p pairs ranks: every point needs an even number of them (1 x 1, 3 x 1 is odd)"),
])
def test_bad_flags(tmp_path, argv, expect):
    assert expect in error_of(tmp_path, argv)


def test_environment_defaults_are_checked(tmp_path):
    c = build(tmp_path, ["--bench", "allreduce"], env={"SCALEPROBE_LAUNCHER": "mpirun"})
    assert c.sweeps[0].values("launcher") == ("mpirun",)
    assert "SCALEPROBE_LAUNCHER=ssh: use srun or mpirun" in error_of(tmp_path, ["--bench", "allreduce"],
                                                                     env={"SCALEPROBE_LAUNCHER": "ssh"})


# ---------------------------------------------------------------- benchmark arguments

ARG_CASES = [
    ("allreduce", ["--sizes", "8,1K", "-n", "5"], None),
    ("allreduce", ["-o", "x.h5"], "-o"),
    ("allreduce", ["-ox.h5"], "-ox.h5"),
    ("allreduce", ["--trace=x.h5"], "--trace=x.h5"),
    ("allreduce", ["--off-cache"], None),
    ("bucket_sweep", ["--scaling", "weak"], "--scaling"),
    ("bucket_sweep", ["--layout", "resnet50"], None),
    ("allreduce", ["--backend", "gloo"], "--backend"),
    ("gpt_train", ["--backend=gloo"], "--backend=gloo"),
    ("allreduce", ["--save", "x"], None),                 # only trainers own a checkpoint
    ("gpt_train", ["--save", "x"], "--save"),
    ("gpt_train", ["--resume=x"], "--resume=x"),
    ("resnet_train", ["--init-from", "x"], "--init-from"),
    ("resnet_train", ["--global-batch=8"], "--global-batch=8"),
    ("gpt_train", ["-B", "8", "-s", "5"], None),
]


@pytest.mark.parametrize("bench, args, refused", ARG_CASES)
def test_arguments_the_job_owns_are_refused(bench, args, refused):
    """benchargs.problem is what both the submitter and the job (job.py) refuse."""
    problem = benchargs.problem(bench, args)
    assert (problem is None) == (refused is None)
    if refused:
        assert problem.startswith(f"do not pass {refused}: ")


# ---------------------------------------------------------------- manifest

def row(**kw):
    base = dict(submitted_utc="t", benchmark="allreduce", nodes="1", tasks_per_node="1", cpus_per_task="1",
                gpus_per_node="0", scaling="strong", launcher="srun", status="submitted", job_id="", trace="",
                log="", sbatch_command="")
    return {**base, **kw}


def write_old(path: Path, rows):
    path.write_text("".join("\t".join(r) + "\n" for r in [OLD_COLUMNS] + [[x[c] for c in OLD_COLUMNS] for x in rows]))


def test_old_manifest_is_read_as_pass_1_and_converted_on_first_append(tmp_path):
    m = tmp_path / "manifest.tsv"
    write_old(m, [row(job_id="50", trace=str(tmp_path / "allreduce_N1_t1_c1_j50.h5")),
                  row(benchmark="report", status="report", job_id="51")])
    man = Manifest(m, write=True)
    assert [r["pass"] for r in man.rows] == ["1", ""]
    assert man.queued_job("allreduce_N1_t1_c1", {"50"}) == "50"
    assert man.queued_job("allreduce_N1_t1_c1_p2", {"50"}) is None       # another pass
    assert man.queued_job("allreduce_N1_t1_c1", {"49"}) is None          # not queued any more
    man.add(**row(job_id="60"), **{"pass": "2"})
    lines = m.read_text().splitlines()
    assert lines[0].split("\t") == list(COLUMNS) and len(lines) == 4
    assert all(len(x.split("\t")) == len(COLUMNS) for x in lines)
    assert lines[1].split("\t")[COLUMNS.index("pass")] == "1" and lines[3].split("\t")[COLUMNS.index("pass")] == "2"
    assert [r["pass"] for r in Manifest(m, write=False).rows] == ["1", "", "2"]


def test_dry_manifest_writes_nothing(tmp_path):
    m = tmp_path / "manifest.tsv"
    write_old(m, [row(job_id="50")])
    before = m.read_text()
    man = Manifest(m, write=False)
    man.add(**row(job_id="61"))
    assert m.read_text() == before and len(man.rows) == 2
    Manifest(tmp_path / "new.tsv", write=False).add(**row())
    assert not (tmp_path / "new.tsv").exists()


def test_manifest_new_file_half_line_and_foreign_file(tmp_path):
    m = tmp_path / "manifest.tsv"
    Manifest(m, write=True).add(**row(job_id="7"), **{"pass": "1"})
    text = m.read_text()
    assert text.startswith("\t".join(COLUMNS) + "\n") and text.count("\n") == 2
    m.write_text(text + "2026\tallreduce\t1")              # a writer died mid-line
    man = Manifest(m, write=True)
    assert len(man.rows) == 1
    man.add(**row(job_id="8"), **{"pass": "1"})
    assert [r["job_id"] for r in Manifest(m, write=False).rows] == ["7", "8"]
    (tmp_path / "other.tsv").write_text("a\tb\n")
    with pytest.raises(SweepError, match="not a submit-sweep manifest"):
        Manifest(tmp_path / "other.tsv", write=False)


def test_campaign_queued_folds_array_tasks(tmp_path):
    man = Manifest(tmp_path / "m.tsv", write=False)
    for j in ("1300_0", "1300_1", "99", "1000", "5"):
        man.add(**row(job_id=j))
    man.add(**row(job_id="6", status="queued"))
    assert man.campaign_queued({"1300_1", "99", "1000", "6", "77"}) == ["99", "1000", "1300"]


def test_history_appends_and_refuses_a_broken_file(tmp_path):
    h = tmp_path / "campaign.json"
    History(h).append({"n": 1})
    History(h).append({"n": 2})
    assert json.loads(h.read_text()) == [{"n": 1}, {"n": 2}]
    assert [p.name for p in tmp_path.iterdir()] == ["campaign.json"]      # no temporary file left
    h.write_text("[{")
    with pytest.raises(SweepError, match="not valid JSON"):
        History(h)
    h.write_text("{}")
    with pytest.raises(SweepError, match="expected a JSON list"):
        History(h)
