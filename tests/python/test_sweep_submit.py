"""Pure logic of the sweep submitter (python/scaleprobe_sweep): names, the one dimension table,
flags, benchmark-argument checks (and that the job scripts' shell scan agrees). Campaign files:
test_sweep_campaign_files.py; the manifest: test_sweep_manifest.py. No SLURM, no binaries:
tests/slurm/test_submit_offline.sh runs the submitter end to end with fake sbatch/squeue."""
from __future__ import annotations

from pathlib import Path

import pytest

from scaleprobe_sweep import benchargs, campaign, cli, dimensions, naming, slurm
from scaleprobe_sweep.errors import SweepError
from sweep_helpers import build, error_of

REPO = Path(__file__).resolve().parents[2]


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


def test_pipeline_dimensions_name_points_and_reach_gpt_train(tmp_path):
    """The pipeline's stages, micro-batches and schedule (real entries of dimensions.DIMENSIONS):
    gpt_train only, named _pp<S>_mb<M>_gpipe, alternating inside each pass, passed as gpt_train's
    own options; micro-batches or a schedule without stages is one line."""
    from scaleprobe_sweep import job
    req = cli.parse(["--bench", "gpt_train", "--tasks-per-node", "4", "--pipeline-stages", "2,4", "--micro-batches", "8",
                     "--schedule", "gpipe,1f1b", "--dry-run"])
    names = [p.stem for p in campaign.build(req, REPO, {}).points()]
    assert names == ["gpt_train_N1_t4_c1_pp2_mb8_gpipe", "gpt_train_N1_t4_c1_pp2_mb8", "gpt_train_N1_t4_c1_pp4_mb8_gpipe",
                     "gpt_train_N1_t4_c1_pp4_mb8"]
    with pytest.raises(SweepError, match="--schedule gpipe without --pipeline-stages S"):
        campaign.build(cli.parse(["--bench", "gpt_train", "--schedule", "gpipe", "--dry-run"]), REPO, {})
    with pytest.raises(SweepError, match="--pipeline-stages: pipeline_stages is for gpt_train"):
        campaign.build(cli.parse(["--bench", "allreduce", "--pipeline-stages", "2", "--dry-run"]), REPO, {})
    s = job.read_settings({"SCALEPROBE_PIPELINE_STAGES": "2", "SCALEPROBE_MICRO_BATCHES": "5",
                           "SCALEPROBE_SCHEDULE": "gpipe", "SCALEPROBE_ROOT": str(tmp_path)})
    assert dimensions.program_options("gpt_train", s.values)[-6:] == \
        ["--pipeline-stages", "2", "--micro-batches", "5", "--schedule", "gpipe"]
    with pytest.raises(job.JobError, match="SCALEPROBE_MICRO_BATCHES=3 without SCALEPROBE_PIPELINE_STAGES=S"):
        job.read_settings({"SCALEPROBE_MICRO_BATCHES": "3", "SCALEPROBE_ROOT": str(tmp_path)})


def test_qline_quotes_like_the_bash_submitter():
    assert slurm.qline(["sbatch", "--export=ALL,A=/x/y:z", "-B", "8"]) == "sbatch --export=ALL,A=/x/y:z -B 8"
    assert slurm.qline(["a b", "it's", "", "--dependency=afterany:<x>"]) == \
        "'a b' 'it'\\''s' '' '--dependency=afterany:<x>'"


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


# ---------------------------------------------------------------- simulated topologies

def test_simulate_takes_a_topology_named_in_the_point_and_passed_to_scripts_simulate(tmp_path):
    """simulate's values past none are scripts/simulate's --topology: each names its points
    _sim-<topology>, and a simulated point's job runs scripts/simulate --topology <value> on the
    point's nodes x tasks per node (the shape from --nodes, or SCALEPROBE_SIM_FLAGS)."""
    from scaleprobe_sweep import job
    assert dimensions.BY_KEY["simulate"].choices == ("none", "flat", "fat-tree", "dragonfly", "torus")
    c = build(tmp_path, ["--bench", "allreduce", "--simulate", "flat,fat-tree,dragonfly,torus", "--nodes", "8",
                         "--tasks-per-node", "2", "--dry-run"])
    assert sorted(p.stem for p in c.points()) == sorted(f"allreduce_N8_t2_c1_sim-{t}"
                                                        for t in ("flat", "fat-tree", "dragonfly", "torus"))
    assert "--simulate mesh: use none, flat, fat-tree, dragonfly or torus" in \
        error_of(tmp_path, ["--bench", "allreduce", "--simulate", "mesh"])
    smpi = tmp_path / "smpi"
    (smpi / "bin").mkdir(parents=True)
    for name in ("allreduce_perf", "trace_check"):
        (smpi / "bin" / name).write_text("#!/bin/sh\n")
        (smpi / "bin" / name).chmod(0o755)
    env = {"SCALEPROBE_ROOT": str(REPO), "SCALEPROBE_SIMULATE": "fat-tree", "SCALEPROBE_SIM_BUILD_DIR": str(smpi),
           "SCALEPROBE_SIM_FLAGS": "--topology-parameters 2;4,2;1,1;1,1"}
    s = job.read_settings(env)
    g = job.Geometry(8, 2, 1, 1, "7", False, True)
    programs = job.simulated_programs(s, g, "allreduce", env)
    assert programs.launch[-8:] == ["--topology-parameters", "2;4,2;1,1;1,1", "--topology", "fat-tree",
                                    "--nodes", "8", "--ranks-per-node", "2"]
    assert "--topology" not in programs.check  # the trace check runs on one host, whatever the point's topology
    with pytest.raises(job.JobError, match="SCALEPROBE_SIMULATE=ring: use none, flat, fat-tree, dragonfly or torus"):
        job.read_settings({**env, "SCALEPROBE_SIMULATE": "ring"})
