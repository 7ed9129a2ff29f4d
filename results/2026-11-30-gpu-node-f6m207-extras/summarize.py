#!/usr/bin/python3
"""Summarise scripts/device/node-extras.sh's raw/ (the GPU node, 2026-11-30) as markdown: the GPU path
checks; the BLAS core at 1 rank (every pass, the median over passes, the chosen core against the best
core forced by hand); the engine with ring and shm cycled in one 16-rank run (every pass, medians, shm
over ring); p2p_perf at 16 ranks; and the issue targets these runs speak to.
    cd results/2026-11-30-gpu-node-f6m207-extras && PYTHONPATH=../../python /usr/bin/python3 summarize.py > summary.md
Step times: "ms/iteration" is the trainer's closing line (mean of the summarised steps, the first
round of cases left out), checked here against the trace's cases table; "median step" is the trace's
median of the same steps."""
import re
import statistics
from pathlib import Path

from scaleprobe_analysis.h5open import open_h5  # the one safe open

RAW = Path(__file__).resolve().parent / "raw"
CORES = ["chosen", "Cooperlake", "SkylakeX", "Haswell"]
FORCED = ["Cooperlake", "SkylakeX", "Haswell"]
CASE_LINE = re.compile(r"^# (\S+) cap \S+ \(\d+ buckets\): ([0-9.]+) ms/iteration over (\d+) steps", re.M)


def text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def med(xs):
    return statistics.median(list(xs))


def size(b):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if b >= 1 << shift and b % (1 << shift) == 0:
            return f"{b >> shift} {unit}"
    return f"{b} B"


def passes(prefix):
    """{pass number: stem} of raw/<prefix>_p<N>.log"""
    out = {}
    for log in RAW.glob(f"{prefix}_p*.log"):
        out[int(log.stem.rsplit("_p", 1)[1])] = log.stem
    return dict(sorted(out.items()))


def trainer_run(stem):
    """Per algorithm (case) of one gpt_train run: the log's ms/iteration and the trace's figures (ms)."""
    log = (RAW / f"{stem}.log").read_text()
    printed = {alg: (float(ms), int(n)) for alg, ms, n in CASE_LINE.findall(log)}
    cases = {}
    with open_h5(RAW / f"{stem}.h5") as f:
        c = f["cases"]
        prov = f["provenance"].attrs
        run = dict(start=text(prov["start_time_utc"]), load=text(prov["load_average_start"]).split()[0],
                   core=text(f.attrs["blas_core"]), reason=text(f.attrs["blas_core_reason"]),
                   gemm=text(prov.get("gemm_library", "?")), revision=text(prov["git_revision"]),
                   overlap=f"{text(f.attrs['overlap_mode'])} ({text(f.attrs['overlap_reason'])})")
        steps, it = f["steps"], f["iterations"]
        for i, alg in enumerate(text(a) for a in c["algorithm"][()]):
            ms, n = printed[alg]
            mean_ms = 1e3 * float(c["iteration_mean_s"][i])
            if abs(mean_ms - ms) > 0.051 or n != int(c["steps"][i]):
                raise SystemExit(f"{stem} {alg}: log {ms} ms over {n} steps, trace {mean_ms:.2f} over {c['steps'][i]}")
            case = int(c["case"][i])
            sel = [j for j in range(len(steps["step"])) if steps["in_summary"][j] and steps["case"][j] == case]
            wall = [1e3 * float(steps["step_wall_s"][j]) for j in sel]
            cpu = [1e3 * float(steps["step_process_cpu_s"][j]) for j in sel]
            rows = [j for j in range(len(it["step"])) if it["in_summary"][j] and it["case"][j] == case]
            cases[alg] = dict(
                ms=ms, steps=n, median=1e3 * float(c["iteration_median_s"][i]), lo=min(wall), hi=max(wall),
                cpu_wall=sum(cpu) / sum(wall),
                compute=1e3 * float(c["compute_mean_s"][i]), exposed=1e3 * float(c["exposed_comm_mean_s"][i]),
                peers=1e3 * float(c["exposed_wait_peers_mean_s"][i]),
                after=1e3 * float(c["exposed_after_ready_mean_s"][i]),
                ref=1e3 * float(c["reference_comm_s"][i]), imbalance=100 * float(c["compute_imbalance"][i]),
                ranks=len({int(it["rank"][j]) for j in rows}))
    run["cases"] = cases
    return run


def gpu_path():
    print("## 1. GPU path\n")
    log = (RAW / "gpu_reduce_test.log").read_text()
    ran = re.search(r"Running (\d+) tests?", log)
    ok = re.search(r"\[  PASSED  \] (\d+) tests?", log)
    failed = re.search(r"\[  FAILED  \] (\d+) tests?", log)
    print(f"- `test_gpu_reduce` (raw/gpu_reduce_test.log): {ok.group(1) if ok else 0} of "
          f"{ran.group(1) if ran else '?'} passed, {failed.group(1) if failed else 0} failed.")
    log = (RAW / "nccl_allreduce.log").read_text()
    notes = [ln.split("info] ", 1)[1] for ln in log.splitlines() if "info]" in ln and "leaves out" in ln]
    with open_h5(RAW / "nccl_allreduce.h5") as f:
        s = f["summary"]
        lib = text(f["provenance"].attrs["backend_library"])
        revision = text(f["provenance"].attrs["git_revision"])
        nranks = int(f.attrs["nranks"])
        rows = [(text(s["algorithm"][i]), int(s["bytes"][i]), float(s["t_mean_us"][i]), int(s["wrong"][i]))
                for i in range(len(s["case"]))]
    algs = list(dict.fromkeys(r[0] for r in rows))
    sizes = sorted({r[1] for r in rows})
    t = {(a, b): (us, w) for a, b, us, w in rows}
    print(f"- `allreduce_perf --backend nccl -a all` at {nranks} rank ({lib}; raw/nccl_allreduce.h5): "
          f"{len(algs)} algorithms x {len(sizes)} sizes, {sum(r[3] for r in rows)} wrong elements in all.")
    for n in notes:
        print(f"- printed: \"{n}\"")
    print("\nt_mean per call (us), 1 rank: no peer, so the device rows time local copies; `mpi` is "
          "MPI_Allreduce on the host path.\n")
    print("| size | " + " | ".join(algs) + " | wrong |")
    print("|---:|" + "---:|" * len(algs) + "---:|")
    for b in sizes:
        print(f"| {size(b)} | " + " | ".join(f"{t[(a, b)][0]:.2f}" for a in algs)
              + f" | {sum(t[(a, b)][1] for a in algs)} |")
    print()
    return revision


def blas_core():
    print("## 2. BLAS core at 1 rank (gpt-tiny, 8 rows of 128 tokens)\n")
    runs = {core: {p: trainer_run(stem) for p, stem in passes(f"blas_{core}").items()} for core in CORES}
    npass = sorted({p for r in runs.values() for p in r})
    ms = {c: {p: runs[c][p]["cases"]["ring"]["ms"] for p in runs[c]} for c in CORES}
    mstep = {c: {p: runs[c][p]["cases"]["ring"]["median"] for p in runs[c]} for c in CORES}
    m_ms = {c: med(ms[c].values()) for c in CORES}
    m_step = {c: med(mstep[c].values()) for c in CORES}
    best = min(FORCED, key=m_ms.get)
    best_step = min(FORCED, key=m_step.get)
    first = next(iter(runs["chosen"].values()))
    print(f"GEMM library in every run: {', '.join(sorted({r['gemm'] for c in CORES for r in runs[c].values()}))}; "
          f"chosen core's reason: \"{first['reason']}\".\n")
    print("ms/iteration (mean of the summarised steps):\n")
    print("| core | core in use | " + " | ".join(f"pass {p}" for p in npass) + " | median | vs best forced |")
    print("|---|---|" + "---:|" * len(npass) + "---:|---:|")
    for c in CORES:
        used = ", ".join(sorted({r["core"] for r in runs[c].values()}))
        print(f"| {c} | {used} | " + " | ".join(f"{ms[c][p]:.1f}" for p in npass)
              + f" | {m_ms[c]:.1f} | {m_ms[c] / m_ms[best]:.3f} |")
    print(f"\nBest forced core by median ms/iteration: **{best}**; chosen / best = "
          f"**{m_ms['chosen'] / m_ms[best]:.3f}**.\n")
    print("Median step of the same steps (trace):\n")
    print("| core | " + " | ".join(f"pass {p}" for p in npass) + " | median | vs best forced |")
    print("|---|" + "---:|" * len(npass) + "---:|---:|")
    for c in CORES:
        print(f"| {c} | " + " | ".join(f"{mstep[c][p]:.1f}" for p in npass)
              + f" | {m_step[c]:.1f} | {m_step[c] / m_step[best_step]:.3f} |")
    print(f"\nBest forced core by median step: **{best_step}**; chosen / best = "
          f"**{m_step['chosen'] / m_step[best_step]:.3f}**.\n")
    print("Every run in the order it ran (summarised steps; load average: 1 minute, at the run's start):\n")
    print("| run | start (UTC) | load avg | ms/iteration | median step | fastest step | slowest step | cpu / wall |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    order = sorted(((r["start"], f"blas_{c}_p{p}", r) for c in CORES for p, r in runs[c].items()))
    for start, name, r in order:
        k = r["cases"]["ring"]
        print(f"| {name} | {start[11:19]} | {r['load']} | {k['ms']:.1f} | {k['median']:.1f} | {k['lo']:.1f} "
              f"| {k['hi']:.1f} | {k['cpu_wall']:.3f} |")
    print()
    return dict(ratio=m_ms["chosen"] / m_ms[best], best=best, ratio_step=m_step["chosen"] / m_step[best_step],
                best_step=best_step, revision={r["revision"] for c in CORES for r in runs[c].values()})


def engine():
    print("## 3. Engine: ring and shm cycled step by step in one run (gpt-tiny, 8 rows per rank, cap 25 MiB)\n")
    stems = passes("engine_np16")
    runs = {p: trainer_run(s) for p, s in stems.items()}
    algs = list(next(iter(runs.values()))["cases"])
    print("Overlap mode (trace): " + "; ".join(f"pass {p} {r['overlap']}" for p, r in runs.items()) + ".\n")
    cols = ["ms", "median", "compute", "exposed", "peers", "after", "ref", "imbalance"]
    head = ["step (ms/iteration)", "median step", "compute", "exposed", "waiting for peers",
            "after all were ready", "no-overlap allreduce", "imbalance %"]
    print("| pass | algorithm | ranks | steps | " + " | ".join(head) + " |")
    print("|---|---|---:|---:|" + "---:|" * len(head) + "")
    for p, r in runs.items():
        for a in algs:
            k = r["cases"][a]
            print(f"| {p} | {a} | {k['ranks']} | {k['steps']} | " + " | ".join(f"{k[x]:.2f}" for x in cols) + " |")
    m = {a: {x: med(r["cases"][a][x] for r in runs.values()) for x in cols} for a in algs}
    for a in algs:
        print(f"| median | {a} | | | " + " | ".join(f"{m[a][x]:.2f}" for x in cols) + " |")
    ratios = {}
    if "ring" in algs and "shm" in algs:
        print("\nshm / ring, same run:\n")
        print("| pass | step | compute | exposed | after all were ready | no-overlap allreduce |")
        print("|---|---:|---:|---:|---:|---:|")
        keys = ["ms", "compute", "exposed", "after", "ref"]
        for p, r in runs.items():
            c = r["cases"]
            print(f"| {p} | " + " | ".join(f"{c['shm'][x] / c['ring'][x]:.3f}" for x in keys) + " |")
        ratios = {x: m["shm"][x] / m["ring"][x] for x in keys}
        ratios["per_pass_exposed"] = [r["cases"]["shm"]["exposed"] / r["cases"]["ring"]["exposed"] for r in runs.values()]
        print("| medians | " + " | ".join(f"{ratios[x]:.3f}" for x in keys) + " |")
        print("\nWaiting for peers as a share of exposed: " + "; ".join(
            f"pass {p} {a} {100 * r['cases'][a]['peers'] / r['cases'][a]['exposed']:.0f} %"
            for p, r in runs.items() for a in algs) + ".\n")
    return dict(ratios=ratios, revision={r["revision"] for r in runs.values()})


def p2p():
    print("## 4. p2p_perf on MPI (raw/p2p_np16.h5)\n")
    with open_h5(RAW / "p2p_np16.h5") as f:
        s = f["summary"]
        nranks, pairs = int(f.attrs["nranks"]), int(f.attrs["pairs"])
        rows = [(text(s["test"][i]), int(s["bytes"][i]), int(s["window"][i]), float(s["t_mean_us"][i]),
                 float(s["p50_us"][i]), float(s["p99_us"][i]), float(s["latency_us"][i]),
                 float(s["bandwidth_GBps"][i]), float(s["message_rate_M"][i]), int(s["wrong"][i]))
                for i in range(len(s["case"]))]
        revision = text(f["provenance"].attrs["git_revision"])
    print(f"{nranks} ranks, {pairs} pairs, one run. GB/s and Mmsg/s: every pair's, summed.\n")
    print("| test | size | window | t_mean (us) | p50 (us) | p99 (us) | latency (us) | GB/s | Mmsg/s | wrong |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for t, b, w, tm, p50, p99, lat, bw, rate, wrong in rows:
        lat_s = f"{lat:.2f}" if lat == lat and lat > 0 else "-"
        bw_s = f"{bw:.3f}" if bw == bw and bw > 0 else "-"
        print(f"| {t} | {size(b)} | {w} | {tm:.2f} | {p50:.2f} | {p99:.2f} | {lat_s} | {bw_s} | {rate:.3f} | {wrong} |")
    print()
    return revision


def main():
    print("# node-extras.sh on the GPU node, 2026-11-30 (generated by summarize.py from raw/)\n")
    gpu_rev = gpu_path()
    blas = blas_core()
    eng = engine()
    rev = p2p()
    print("## Targets these runs speak to\n")
    print("| issue | target | measured (median over passes) | met |")
    print("|---|---|---|---|")
    print(f"| 25 | 1-rank gpt-tiny with the chosen core within 5 % of the best core forced by hand | "
          f"ms/iteration {blas['ratio']:.3f}x {blas['best']}; median step {blas['ratio_step']:.3f}x "
          f"{blas['best_step']} | {'yes' if blas['ratio'] <= 1.05 else 'NO'} |")
    r = eng["ratios"]
    if r:
        print(f"| 27 | shm in the engine's default mode: exposed at cap 25 MiB at most half of ring's | "
              f"{r['exposed']:.3f}x (passes: {', '.join(f'{x:.3f}' for x in r['per_pass_exposed'])}) | "
              f"{'yes' if r['exposed'] <= 0.5 else 'NO'} |")
    revisions = sorted(blas["revision"] | eng["revision"] | {rev, gpu_rev})
    print(f"\nProgram revision in every trace read here (provenance git_revision): {', '.join(revisions)}.")


if __name__ == "__main__":
    main()
