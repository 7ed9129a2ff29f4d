"""scripts/bench-peers and the generated section of docs/performance.md.

- the doc's generated section equals what the stored campaign produces, and a number edited by
  hand in a copy of the doc makes the check fail;
- the stored campaign's summary.tsv is what its raw traces say (allreduce rows recomputed), every
  case has every pass, speedups point the stated way, summary.md (with the overlap table read
  from the data-parallel traces) is what the tables give;
- a real end-to-end run (allreduce only, one pass) writes a complete campaign folder, and bad
  command lines are one-line errors; so does one of the gloo comparison;
- the initial weights' fingerprint is reproducible from the recorded command;
- where the trainers choose an OpenBLAS core OpenBLAS did not detect, both sides run it;
- the isa comparison pairs two builds.
The scaling comparison and the GPU node's tarball: test_bench_peers_scaling.py.
"""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

import optional_parts
from helpers import REPO, build_dir, mpi_env, need_binary, run_peers

from scaleprobe_peers import cli, doc, runs
from scaleprobe_peers.summary import cases, read_tsv

DOC = REPO / "docs" / "performance.md"


def stored_campaign() -> Path:
    m = doc.MARKERS.search(DOC.read_text())
    assert m, "docs/performance.md has no generated peer-comparison section"
    return REPO / m.group(1)


def test_doc_section_matches_stored_campaign():
    campaign = stored_campaign()
    assert (campaign / "summary.tsv").is_file(), campaign
    assert doc.update(DOC, campaign, REPO, cli.TITLES, check=True) == ""


def test_doc_check_fails_on_a_hand_edited_number(tmp_path):
    copy = tmp_path / "performance.md"
    text = DOC.read_text()
    m = doc.MARKERS.search(text)
    section = m.group(0)
    row = next(line for line in section.splitlines() if line.startswith("| ring 1048576 B"))
    cells = row.split(" | ")
    cells[6] = "9.99"  # the speedup median
    copy.write_text(text.replace(row, " | ".join(cells)))
    problem = doc.update(copy, stored_campaign(), REPO, cli.TITLES, check=True)
    assert "differs" in problem
    # writing repairs it
    assert doc.update(copy, stored_campaign(), REPO, cli.TITLES, check=False) == ""
    assert copy.read_text() == text


def test_stored_summary_is_what_the_raw_traces_say():
    campaign = stored_campaign()
    rows = read_tsv(campaign / "summary.tsv")
    plan = json.loads((campaign / "plan.json").read_text())
    passes = plan["plan"]["passes"]
    assert passes >= 3
    for c in cases(rows):
        # A comparison may run fewer passes of its own (the scaling runs, and the rows derived
        # from them: plan.py, cli.DERIVED).
        comparison = "scaling" if c["comparison"] in cli.DERIVED else c["comparison"]
        own = plan["plan"].get(comparison, {}).get("passes", passes)
        assert 2 <= own <= passes, (c["comparison"], own)
        assert c["passes"] == own, (c["comparison"], c["case"])
    checked = 0
    for r in rows:
        if r.comparison != "allreduce":
            continue
        # Campaigns before the switch to p50 stored means as metric time_us.
        stat = {"time_us": "t_mean_us", "p50_us": "p50_us"}[r.metric]
        times = runs.allreduce_times(campaign / r.ours_file, stat)
        algorithm, size, _ = r.case.split(" ")
        assert r.ours_value == pytest.approx(times[(algorithm, int(size))], rel=1e-12)
        assert r.peer_value == pytest.approx(times[("mpi", int(size))], rel=1e-12)
        assert r.speedup == pytest.approx(r.peer_value / r.ours_value)
        checked += 1
    # Every algorithm allreduce_perf ran (the four point-to-point schedules at least; the node-local
    # ones since they joined the registry) at every size in every pass.
    algorithms = {r.case.split(" ")[0] for r in rows if r.comparison == "allreduce"}
    assert {"naive", "tree", "ring", "rabenseifner"} <= algorithms, algorithms
    assert checked == passes * len(algorithms) * len(plan["plan"]["allreduce"]["sizes"].split(","))
    assert (campaign / "summary.md").read_text() == cli.summary_markdown(rows, campaign / "raw")
    weights = (campaign / "raw" / "initial_weights.tsv").read_text().splitlines()
    assert weights[0].startswith("comparison\tsha256")
    assert not list((campaign / "raw").glob("init_*.h5")), "initial checkpoints should be fingerprinted, not stored"


@pytest.mark.parametrize("args, message", [
    (["--quick", "--passes", "0"], "--passes must be at least 1"),
    (["--quick", "--only", "allreduce,bogus"], "unknown comparison(s) bogus"),
    (["--quick", "--check"], "--check goes with --doc"),
    (["--quick", "--only", "isa"], "--only isa needs --native-build-dir"),
    (["--doc", "results/no-such-campaign", "--check"], "no-such-campaign"),
    (["--quick", "--ranks", "0,2"], "rank counts must be >= 1"),
    (["--quick", "--ranks", "two"], "not a comma list of rank counts"),
    (["--from-node", "/no/such/node-scaling.tgz"], "No such file"),
    (["--from-node", str(REPO / "README.md")], "README.md: not a readable tar archive"),
    (["--quick", "--build-dir", "/no/such/build"], "--build-dir /no/such/build: /no/such/build/collectives/allreduce_perf "
     "not found"),
])
def test_bad_command_lines_are_one_line_errors(args, message):
    proc = run_peers(*args)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_an_out_folder_that_cannot_be_made_is_one_line(tmp_path):
    need_binary(build_dir() / "trainers" / "gpt" / "gpt_train")
    (tmp_path / "file").write_text("")
    proc = run_peers("--quick", "--only", "gloo", "--out", str(tmp_path / "file" / "c"), "--build-dir", str(build_dir()))
    assert proc.returncode == 1
    assert proc.stderr == f"bench-peers: error: cannot create {tmp_path / 'file' / 'c.partial'}: Not a directory\n"


def test_wrapper_runs_the_package_with_scaleprobe_python(tmp_path):
    """scripts/bench-peers runs python -m scaleprobe_peers with $SCALEPROBE_PYTHON, python/ on PYTHONPATH."""
    fake = tmp_path / "fakepython"
    fake.write_text('#!/bin/sh\necho "fake python: $* PYTHONPATH=$PYTHONPATH"\n')
    fake.chmod(0o755)
    proc = subprocess.run([str(REPO / "scripts" / "bench-peers"), "--help"], capture_output=True, text=True,
                          env={**mpi_env(), "SCALEPROBE_PYTHON": str(fake), "PYTHONPATH": ""}, timeout=60)
    assert proc.returncode == 0
    assert proc.stdout == f"fake python: -m scaleprobe_peers --help PYTHONPATH={REPO / 'scripts' / '..' / 'python'}\n"


def test_end_to_end_allreduce_only(tmp_path):
    need_binary(build_dir() / "collectives" / "allreduce_perf")
    out = tmp_path / "campaign"
    proc = run_peers("--quick", "--only", "allreduce", "--passes", "1", "--out", str(out),
                     "--build-dir", str(build_dir()))
    assert proc.returncode == 0, proc.stderr
    assert not out.with_name(out.name + ".partial").exists()
    rows = read_tsv(out / "summary.tsv")
    assert {r.case.split(" ")[0] for r in rows} == {"naive", "tree", "ring", "rabenseifner", "doubling", "shm", "shm-seg",
                                                    "hier"}
    assert len(rows) == 8 * 3  # eight algorithms x three --quick sizes, one pass
    assert all(r.ours_value > 0 and r.peer_value > 0 for r in rows)
    readme = (out / "README.md").read_text()
    assert "cpu_signature" in readme and "git_revision" in readme
    assert "### raw_allreduce_p1: allreduce" in (out / "report" / "report.md").read_text()
    # an existing folder is refused, not overwritten
    again = run_peers("--quick", "--only", "allreduce", "--passes", "1", "--out", str(out))
    assert again.returncode != 0 and "exists" in again.stderr


def test_end_to_end_gloo_only(tmp_path):
    """The gloo comparison: every algorithm on Gloo against MPI_Allreduce of the same run, and Gloo's
    allreduce against PyTorch's, at the --quick sizes, one pass."""
    optional_parts.importorskip("torch", "torch")
    exe = build_dir() / "collectives" / "allreduce_perf"
    need_binary(exe)
    if "gloo:" not in subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60).stdout:
        optional_parts.skip("gloo", "this build has no Gloo transport")
    out = tmp_path / "campaign"
    proc = run_peers("--quick", "--only", "gloo", "--passes", "1", "--out", str(out), "--build-dir", str(build_dir()))
    assert proc.returncode == 0, proc.stderr
    rows = read_tsv(out / "summary.tsv")
    vs_mpi = [r for r in rows if r.peer == "MPI_Allreduce"]
    vs_torch = [r for r in rows if r.peer == "PyTorch Gloo allreduce"]
    assert {r.case.split(" ")[0] for r in vs_mpi} == {"gloo", "naive", "tree", "ring", "rabenseifner", "doubling",
                                                      "shm", "shm-seg", "hier"}
    assert len(vs_mpi) == 9 * 2 and len(vs_torch) == 2 * 2  # two --quick sizes, p50 and mean each
    assert all(r.metric == "p50_us" for r in vs_mpi)
    assert sorted(r.metric for r in vs_torch) == ["p50_us", "p50_us", "t_mean_us", "t_mean_us"]
    assert all(r.ours_value > 0 and r.peer_value > 0 for r in rows)
    assert all(r.ours_file.startswith("raw/gloo_p1") for r in rows)
    assert all(r.peer_file == "raw/torch_gloo_p1.jsonl" for r in vs_torch)


def test_initial_weights_fingerprint_is_reproducible(tmp_path):
    need_binary(build_dir() / "trainers" / "gpt" / "gpt_train")
    ctx = runs.Context(build_dir(), tmp_path)
    first = runs.make_init(ctx, "gpt", "gpt-micro")
    digest = runs.weights_fingerprint(first)
    shutil.move(first, tmp_path / "kept.h5")
    second = runs.make_init(ctx, "gpt", "gpt-micro")
    assert runs.weights_fingerprint(second) == digest
    cli.fingerprint_inits(ctx, {"gpt": {"model": "gpt-micro"}}, {"gpt": second})
    line = (tmp_path / "initial_weights.tsv").read_text().splitlines()[1].split("\t")
    assert line[0] == "gpt" and line[1] == digest and "--save-init" in line[2]
    assert not second.exists()


def test_both_sides_get_the_core_the_trainers_choose(tmp_path, monkeypatch):
    """Where OpenBLAS detects a generic core (made to, with SCALEPROBE_TEST_BLAS_DETECTED) the trainer
    starts again on the CPU's best core; bench-peers then exports that core for both sides (a PyTorch
    peer on the same OpenBLAS would stay generic), and leaves a caller's OPENBLAS_CORETYPE alone."""
    need_binary(build_dir() / "trainers" / "gpt" / "gpt_train")  # built for x86-64-v3: AVX2 + FMA at least
    ctx = runs.Context(build_dir(), tmp_path)
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    monkeypatch.delenv("SCALEPROBE_BLAS_CORE_DETECTED", raising=False)
    monkeypatch.setenv("SCALEPROBE_TEST_BLAS_DETECTED", "Prescott")
    core, reason = runs.blas_core_for_both_sides(ctx)
    assert core in ("Cooperlake", "SkylakeX", "Zen", "Haswell") and "detected Prescott" in reason, (core, reason)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blas_probe.log"]
    monkeypatch.setenv("OPENBLAS_CORETYPE", core)
    assert runs.blas_core_for_both_sides(ctx) is None


def test_overlap_table_reads_every_multi_rank_pass():
    from scaleprobe_peers.overlap import overlap_rows
    campaign = stored_campaign()
    plan = json.loads((campaign / "plan.json").read_text())["plan"]
    rows = overlap_rows(campaign / "raw")
    weak = [r for r in rows if r["run"] == "weak"]
    assert [r["cap"] for r in weak] == plan["ddp"]["caps"].split(",")
    for r in rows:
        assert r["ranks"] >= 2 and len(r["hidden"]) == plan["passes"]
        for e, ref, h in zip(r["exposed_ms"], r["reference_ms"], r["hidden"]):
            assert ref > 0 and h == pytest.approx(1 - e / ref, abs=1e-9)


def test_isa_comparison_pairs_two_builds(tmp_path):
    """The isa comparison's machinery, with the same build on both sides (a native build is a
    second full build; scripts/bench-peers --only isa --native-build-dir build/native is the real
    one): one row per trainer, each side's kernel variant named from its trace."""
    need_binary(build_dir() / "trainers" / "gpt" / "gpt_train")
    out = tmp_path / "campaign"
    proc = run_peers("--quick", "--only", "isa", "--passes", "1", "--out", str(out), "--build-dir", str(build_dir()),
                     "--native-build-dir", str(build_dir()))
    assert proc.returncode == 0, proc.stderr
    rows = read_tsv(out / "summary.tsv")
    assert [r.case.split(" ")[0] for r in rows] == ["gpt", "resnet"]
    assert all(r.comparison == "isa" and r.ours_value > 0 and r.peer_value > 0 for r in rows)
    assert all("kernels" in r.ours and "?" not in r.ours for r in rows)
