#!/usr/bin/python3
"""Check a campaign made by jobs/submit-sweep on the local SLURM cluster (tests/slurm).

For the latest submission of every point and pass in <campaign>/manifest.tsv (a manifest of
the old bash submitter, without the pass column, counts as pass 1):
  * the trace exists and passes trace_check;
  * its root attributes and `ranks` table match the point: nranks = nodes x tasks per node,
    ranks 0..P-1 once each, omp_threads = cpus per task, kind = benchmark, and the SLURM job id
    in /provenance/slurm is the manifest's; /provenance/env has the job's SCALEPROBE_POINT (the
    point's name), SCALEPROBE_PASS, SCALEPROBE_SCALING and SCALEPROBE_LAUNCHER;
  * the job log holds the rank map printed by the job script before the benchmark: P lines,
    ranks 0..P-1, on `nodes` distinct virtual nodes (SLURMD_NODENAME and SLURM_NODEID: every
    virtual node has the same hostname here), the launcher named in the manifest, the site file,
    and the job's final OK line;
  * the ranks table names `nodes` distinct SLURM nodes (its `node` column);
  * weak scaling: allreduce message sizes and bucket_sweep layout sizes are the base ones x P
    (the binaries scale them: the job passes --scaling weak and the sizes unchanged); trainers
    (kind train): the scaling and the global batch (-B, times P under weak scaling).
Prints one line per point and, for each failed point, `FAILED <point>`; exit 1 if any failed.
"""
import argparse
import csv
import re
import subprocess
import sys
from pathlib import Path

import h5py

from scaleprobe_sweep import dimensions  # python/ on PYTHONPATH (test_slurm_sweep.sh)


def s(x):
    return x.decode() if isinstance(x, bytes) else str(x)


def parse_size(text):
    m = re.fullmatch(r"(\d+)([KkMmGg]?)", text)
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]


def layout_numels(path):
    out = []
    for line in Path(path).read_text().splitlines():
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        n = 1
        for d in line[-1].split("x"):
            n *= int(d)
        out.append(n)
    return out


TRAINERS = ("gpt_train", "resnet_train")


def check_point(row, args):
    bench, nodes, tpn, cpt = row["benchmark"], int(row["nodes"]), int(row["tasks_per_node"]), int(row["cpus_per_task"])
    ranks = nodes * tpn
    trace, logf, job = Path(row["trace"]), Path(row["log"]), row["job_id"]
    problems = []
    if not trace.is_file():
        return [f"no trace {trace}"]
    r = subprocess.run([args.trace_check, str(trace)], capture_output=True, text=True)
    if r.returncode != 0:
        problems.append(f"trace_check: {(r.stdout + r.stderr).strip()}")
        return problems
    with h5py.File(trace, "r") as f:
        kind = "train" if bench in TRAINERS else bench
        if s(f.attrs["kind"]) != kind:
            problems.append(f"kind {s(f.attrs['kind'])} != {kind}")
        if int(f.attrs["nranks"]) != ranks:
            problems.append(f"nranks {int(f.attrs['nranks'])} != {nodes}x{tpn}")
        rk = f["ranks"]
        got = sorted(int(x) for x in rk["rank"][:])
        if got != list(range(ranks)):
            problems.append(f"ranks table has ranks {got}, expected 0..{ranks - 1}")
        # The binaries name each rank's SLURM node (virtual nodes share the hostname).
        got_nodes = sorted({s(x) for x in rk["node"][:]}) if "node" in rk else []
        if len(got_nodes) != nodes:
            problems.append(f"ranks table names nodes {got_nodes}, expected {nodes} distinct")
        omp = set(int(x) for x in rk["omp_threads"][:])
        if omp != {cpt}:
            problems.append(f"omp_threads {sorted(omp)} != cpus per task {cpt}")
        sl = {k: s(v) for k, v in f["provenance/slurm"].attrs.items()}
        jid = sl.get("SLURM_JOB_ID", "")
        if "_" in job:
            jid = f"{sl.get('SLURM_ARRAY_JOB_ID', '')}_{sl.get('SLURM_ARRAY_TASK_ID', '')}"
        elif sl.get("SLURM_JOB_NUM_NODES", sl.get("SLURM_NNODES")) != str(nodes):
            problems.append(f"provenance SLURM_JOB_NUM_NODES={sl.get('SLURM_JOB_NUM_NODES')} != {nodes}")
        if jid != job:
            problems.append(f"provenance job id {jid} != manifest {job}")
        env = {k: s(v) for k, v in f["provenance/env"].attrs.items()} if "provenance/env" in f else {}
        point = dimensions.point_name(bench, nodes, tpn, cpt, dimensions.from_texts(row))
        # every dimension reached the program through its variable, as the manifest says
        for var, want in (("SCALEPROBE_POINT", point), ("SCALEPROBE_PASS", row["pass"]),
                          *((d.env, row[d.key]) for d in dimensions.DIMENSIONS)):
            if env.get(var) != want:
                problems.append(f"provenance/env {var}={env.get(var)} != {want}")
        if bench in TRAINERS:
            want_gb = args.train_batch * (ranks if row["scaling"] == "weak" else 1)
            if s(f.attrs.get("scaling", "")) != row["scaling"] or int(f.attrs.get("global_batch", -1)) != want_gb:
                problems.append(f"trainer scaling {s(f.attrs.get('scaling', ''))} global batch "
                                f"{int(f.attrs.get('global_batch', -1))}, expected {row['scaling']} {want_gb}")
        elif row["scaling"] == "weak":
            if bench == "allreduce":
                want = sorted(parse_size(x) * ranks for x in args.weak_sizes.split(","))
                got_b = sorted(set(int(x) for x in f["summary/bytes"][:]))
                if got_b != want:
                    problems.append(f"weak sizes {got_b} != base x {ranks} {want}")
            else:
                want = [n * ranks for n in layout_numels(args.base_layout)]
                got_l = [int(x) for x in f["layout/numel"][:]]
                if got_l != want:
                    problems.append(f"weak layout {got_l} != base x {ranks} {want}")
    if not logf.is_file():
        return problems + [f"no job log {logf}"]
    text = logf.read_text(errors="replace")
    maps = re.findall(r"^rankmap rank=(\d+) node=(\S+) nodeid=(\S+) host=(\S+) cpus=(\S*)$", text, re.M)
    if sorted(int(m[0]) for m in maps) != list(range(ranks)):
        problems.append(f"rank map lists ranks {[m[0] for m in maps]}, expected 0..{ranks - 1}")
    if len({m[1] for m in maps}) != nodes or len({m[2] for m in maps}) != nodes:
        problems.append(f"rank map spans nodes {sorted({m[1] for m in maps})} / ids {sorted({m[2] for m in maps})}, expected {nodes}")
    if f"launcher={row['launcher']}" not in text:
        problems.append(f"log does not name launcher {row['launcher']}")
    if args.site_env and f"site file: {args.site_env}" not in text:
        problems.append("log does not name the site file")
    if f"scaleprobe-job: OK {trace}" not in text:
        problems.append("no OK line in the job log")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("--trace-check", required=True)
    ap.add_argument("--weak-sizes", default="8,64K")
    ap.add_argument("--base-layout")
    ap.add_argument("--site-env")
    ap.add_argument("--train-batch", type=int, default=0, help="trainers' -B (per rank under weak scaling)")
    ap.add_argument("--expect-points", type=int, help="number of distinct (point, pass) pairs")
    args = ap.parse_args()

    latest = {}
    with open(args.manifest, newline="") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["status"] != "submitted":
                continue
            row.setdefault("pass", "1")
            key = "_".join(row[k] for k in ("benchmark", "nodes", "tasks_per_node", "cpus_per_task",
                                             "gpus_per_node", "scaling", "launcher")) + f"_p{row['pass']}"
            latest[key] = row
    failed = []
    for key, row in sorted(latest.items()):
        problems = check_point(row, args)
        if problems:
            failed.append((key, row))
            print(f"FAIL {key} job {row['job_id']}: " + "; ".join(problems))
        else:
            print(f"ok   {key} job {row['job_id']}: {Path(row['trace']).name}")
    bad = len(failed)
    if args.expect_points is not None and len(latest) != args.expect_points:
        print(f"FAIL the manifest has {len(latest)} points, expected {args.expect_points}")
        bad += 1
    for key, row in failed:
        print(f"FAILED {key} {row['log']}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
