"""scripts/bench-peers: every peer comparison in one command, stored as a campaign.

    scripts/bench-peers --quick | --full [--out DIR] [--build-dir DIR] [--only gpt,ddp,...] [--ranks 1,2]
    scripts/bench-peers --doc CAMPAIGN [--check]     (the generated section of docs/performance.md)
    scripts/bench-peers --from-node TARBALL [--out DIR]   (scripts/device/node-scaling.sh's output -> campaign)

Runs the profile of plan.py pass by pass — in each pass every comparison once, the side that runs
first alternating from pass to pass — and writes into DIR (default results/<UTC date>-<host>-<CPU
id>-peers-<profile>): raw/ (every trace, JSON line and log), summary.tsv (every pass),
summary.md (per case: medians, every pass's speedup, min–max), README.md (the machine, the
command, the duration). A failed run stops the campaign with one line naming its log; the folder
is written under DIR.partial and renamed when complete. The scaling comparison (scaling.py: weak
scaling at 1…N ranks beside PyTorch DDP, each side against its own same-load no-communication run)
also runs on the GPU node by scripts/device/node-scaling.sh; --from-node makes a campaign of what
that wrote, with the same rows, tables and report, and a README naming the node.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shlex
import shutil
import socket
import sys
import time
from pathlib import Path

from . import doc, runs, scaling
from .campaign_folder import DERIVED, PROG, TITLES, finish, provenance_lines, rel, summary_markdown
from .from_node import import_node
from .plan import PROFILES
from .runs import Context, PeerError
from .summary import Row, write_tsv

CHOICES = [k for k in TITLES if k not in DERIVED]
DEFAULT_ONLY = "allreduce,gloo,gpt,resnet,ddp,weak,strong,scaling"  # isa needs a second build (--native-build-dir)


def cpu_id() -> str:
    info = Path("/proc/cpuinfo").read_text(errors="replace") if Path("/proc/cpuinfo").exists() else ""
    fam = re.search(r"^cpu family\s*:\s*(\d+)", info, re.M)
    mod = re.search(r"^model\s*:\s*(\d+)", info, re.M)
    return f"f{fam[1]}m{mod[1]}" if fam and mod else "cpu"


def ordered(pass_no: int, ours, peer) -> list:
    """A B in odd passes, B A in even ones, so drift of a shared machine hits both sides alike."""
    return [ours, peer] if pass_no % 2 else [peer, ours]


def run_pass(ctx: Context, plan: dict, p: int, only: set[str], inits: dict, root: Path) -> list[Row]:
    """One pass of every chosen comparison; the scaling runs' rows are read from raw/ at the end."""
    rows: list[Row] = []
    first = "ours" if p % 2 else "peer"
    if "scaling" in only and p <= plan["scaling"]["passes"]:
        cfg = plan["scaling"]
        for n in cfg["ranks"]:
            for kind, size in cfg["models"].items():
                scaling.run_group(ctx, kind, {**size, "steps": cfg["steps"], "cap": cfg["cap"]}, n, p,
                                  cfg["bindings"][str(n)])
    if "allreduce" in only:
        trace = runs.allreduce_run(ctx, plan["allreduce"], p)
        t = runs.allreduce_times(trace)
        for (alg, nbytes), us in t.items():
            if alg != "mpi":
                rows.append(Row("allreduce", f"{alg} {nbytes} B", p, alg, "MPI_Allreduce", "p50_us", us,
                                t[("mpi", nbytes)], "both", rel(trace, root), rel(trace, root)))
    if "gloo" in only:
        cfg = plan["gloo"]
        sides = {"ours": lambda: runs.gloo_run(ctx, cfg, p), "peer": lambda: runs.torch_gloo_run(ctx, cfg, p)}
        out = {k: sides[k]() for k in ordered(p, "ours", "peer")}
        t, torch_t = runs.allreduce_times(out["ours"]), runs.torch_gloo_times(out["peer"])
        t_mean, torch_mean = runs.allreduce_times(out["ours"], "t_mean_us"), runs.torch_gloo_times(out["peer"], "t_mean_us")
        for (alg, nbytes), us in t.items():
            if alg != "mpi":
                ours = "Gloo allreduce" if alg == "gloo" else f"{alg} on Gloo"
                rows.append(Row("gloo", f"{alg} {nbytes} B", p, ours, "MPI_Allreduce", "p50_us", us,
                                t[("mpi", nbytes)], "both", rel(out["ours"], root), rel(out["ours"], root)))
            if alg == "gloo":
                rows.append(Row("gloo", f"gloo {nbytes} B vs PyTorch", p, "Gloo allreduce in allreduce_perf",
                                "PyTorch Gloo allreduce", "p50_us", us, torch_t[nbytes], first,
                                rel(out["ours"], root), rel(out["peer"], root)))
                # The mean beside the p50: a side's tail (slow calls) shows as mean >> p50.
                rows.append(Row("gloo", f"gloo {nbytes} B vs PyTorch, mean", p, "Gloo allreduce in allreduce_perf",
                                "PyTorch Gloo allreduce", "t_mean_us", t_mean[(alg, nbytes)], torch_mean[nbytes],
                                first, rel(out["ours"], root), rel(out["peer"], root)))
    for kind in ("gpt", "resnet"):
        if kind not in only:
            continue
        cfg = plan[kind]
        for threads in cfg["threads"]:
            tag = f"{kind}_t{threads}_p{p}"
            out = {}
            for side in ordered(p, "ours", "peer"):
                if side == "ours":
                    out["ours"] = runs.trainer_run(ctx, kind, cfg, threads, tag, inits[kind])
                else:
                    out["peer"] = runs.torch_run(ctx, kind, cfg, threads, inits[kind], f"torch_{tag}")
            peer = runs.torch_result(out["peer"])
            runs.check_same_kernel_env(out["ours"], peer)
            rows.append(Row(kind, f"{threads} thread(s)", p, f"{kind}_train {cfg['model']}", peer["impl"], "step_ms",
                            runs.trace_median_step_s(out["ours"]) * 1e3, peer["wall_median_s"] * 1e3, first,
                            rel(out["ours"], root), rel(out["peer"], root)))
    if "ddp" in only:
        cfg = plan["ddp"]
        n, caps, b = cfg["ranks"], cfg["caps"], cfg["batch"]
        # Like for like: both sides on Gloo. scaleprobe on MPI (shared memory) runs beside it, labelled
        # as the other transport it is, and the 1-rank ratio (no communication) beside the N-rank one
        # tells how much of a difference is the transport's.
        sides = {
            "ours": lambda: runs.dp_run(ctx, cfg, n, f"ddp_np{n}_p{p}", caps, ["-B", str(b)], inits["ddp"]),
            "peer": lambda: runs.ddp_torch_run(ctx, cfg, n, b, f"torchddp_np{n}_p{p}", caps, inits["ddp"]),
            "ours1": lambda: runs.dp_run(ctx, cfg, 1, f"ddp_np1_p{p}", caps, ["-B", str(b)], inits["ddp"]),
            "peer1": lambda: runs.ddp_torch_run(ctx, cfg, 1, b, f"torchddp_np1_p{p}", caps, inits["ddp"]),
            "ours_mpi": lambda: runs.dp_run(ctx, cfg, n, f"ddp_mpi_np{n}_p{p}", caps, ["-B", str(b)], inits["ddp"],
                                            backend="mpi")}
        out = {k: sides[k]() for k in ordered(p, "ours", "peer") + ordered(p, "ours1", "peer1") + ["ours_mpi"]}
        t2, q2 = runs.trace_case_median_s(out["ours"]), runs.ddp_torch_case_median_s(out["peer"])
        t1, q1 = runs.trace_case_median_s(out["ours1"]), runs.ddp_torch_case_median_s(out["peer1"])
        t2_mpi = runs.trace_case_median_s(out["ours_mpi"])
        for cap in caps.split(","):
            rows.append(Row("ddp", f"cap {cap}", p, f"gpt_train ring on Gloo, {n} ranks", f"torch DDP gloo, {n} ranks",
                            "iteration_ms", t2[cap] * 1e3, q2[cap] * 1e3, first, rel(out["ours"], root),
                            rel(out["peer"], root)))
            rows.append(Row("ddp", f"cap {cap}, 1 rank (no communication)", p, "gpt_train, 1 rank",
                            "torch DDP, 1 rank", "iteration_ms", t1[cap] * 1e3, q1[cap] * 1e3, first,
                            rel(out["ours1"], root), rel(out["peer1"], root)))
            rows.append(Row("ddp", f"cap {cap}, scaleprobe on MPI (other transport)", p,
                            f"gpt_train ring on MPI, {n} ranks", f"torch DDP gloo, {n} ranks", "iteration_ms",
                            t2_mpi[cap] * 1e3, q2[cap] * 1e3, "peer", rel(out["ours_mpi"], root),
                            rel(out["peer"], root)))
            rows.append(Row("weak", f"cap {cap}", p, "gpt_train", "torch DDP", "efficiency", t1[cap] / t2[cap],
                            q1[cap] / q2[cap], first, rel(out["ours1"], root), rel(out["peer1"], root)))
    if "isa" in only:
        for kind in ("gpt", "resnet"):
            cfg = plan[kind]
            threads = max(cfg["threads"])
            tag = f"isa_{kind}_t{threads}_p{p}"
            sides = {"ours": lambda: runs.trainer_run(ctx, kind, cfg, threads, f"{tag}_portable", inits[kind]),
                     "peer": lambda: runs.trainer_run(ctx.native(), kind, cfg, threads, f"{tag}_native", inits[kind])}
            out = {k: sides[k]() for k in ordered(p, "ours", "peer")}
            isa_ours, isa_peer = runs.kernel_isa(out["ours"]), runs.kernel_isa(out["peer"])
            # Like for like only when both builds ran the same kernel variant; otherwise the ratio
            # compares different convolution code, and the case says so.
            same = isa_ours.split(" = ")[0] == isa_peer.split(" = ")[0] and "?" not in (isa_ours + isa_peer)
            rows.append(Row("isa", f"{kind} {cfg['model']}, {threads} thread(s)"
                            + ("" if same else " (different kernel variants: not comparable)"), p,
                            f"portable build, {isa_ours} kernels",
                            f"native build, {isa_peer} kernels", "step_ms",
                            runs.trace_median_step_s(out["ours"]) * 1e3, runs.trace_median_step_s(out["peer"]) * 1e3,
                            first, rel(out["ours"], root), rel(out["peer"], root)))
    if "strong" in only and plan["strong"]:
        cfg = plan["strong"]
        n, cap, g = cfg["ranks"], cfg["cap"], cfg["global_batch"]
        strong = ["--scaling", "strong", "-B", str(g)]
        sides = {
            "ours": lambda: runs.dp_run(ctx, cfg, n, f"strong_np{n}_p{p}", cap, strong, inits["ddp"]),
            "peer": lambda: runs.ddp_torch_run(ctx, cfg, n, g // n, f"torchstrong_np{n}_p{p}", cap, inits["ddp"]),
            "ours1": lambda: runs.dp_run(ctx, cfg, 1, f"strong_np1_p{p}", cap, strong, inits["ddp"]),
            "peer1": lambda: runs.ddp_torch_run(ctx, cfg, 1, g, f"torchstrong_np1_p{p}", cap, inits["ddp"])}
        out = {k: sides[k]() for k in ordered(p, "ours", "peer") + ordered(p, "ours1", "peer1")}
        ours = runs.trace_case_median_s(out["ours1"])[cap] / (n * runs.trace_case_median_s(out["ours"])[cap])
        peer = runs.ddp_torch_case_median_s(out["peer1"])[cap] / (n * runs.ddp_torch_case_median_s(out["peer"])[cap])
        rows.append(Row("strong", f"cap {cap}, global batch {g}", p, "gpt_train", "torch DDP", "efficiency", ours, peer,
                        first, rel(out["ours"], root), rel(out["peer"], root)))
    return rows


def make_inits(ctx: Context, plan: dict, only: set[str]) -> dict[str, Path]:
    """One set of initial weights per compared model (gpt, resnet, and the data-parallel runs' gpt)."""
    wanted = {"gpt": bool({"gpt", "isa"} & only), "resnet": bool({"resnet", "isa"} & only),
              "ddp": bool({"ddp", "strong"} & only)}
    return {kind: runs.make_init(ctx, "resnet" if kind == "resnet" else "gpt", plan[kind]["model"])
            for kind, want in wanted.items() if want}


def fingerprint_inits(ctx: Context, plan: dict, inits: dict[str, Path]) -> None:
    """Replace the initial-weight checkpoints (tens of MB, reproducible from the seed) by their
    sha256 and the command that makes them again, in raw/initial_weights.tsv."""
    lines = ["comparison\tsha256_of_model_tensors\tcommand (OMP_NUM_THREADS=1, paths relative to the campaign)"]
    for kind, init in sorted(inits.items()):
        cmd = runs.init_command(ctx, "resnet" if kind == "resnet" else "gpt", plan[kind]["model"])
        cmd = [rel(Path(c), ctx.raw.parent) if c.startswith("/") else c for c in cmd]
        lines.append(f"{kind}\t{runs.weights_fingerprint(init)}\t{shlex.join(cmd)}")
    (ctx.raw / "initial_weights.tsv").write_text("\n".join(lines) + "\n")
    for init in set(inits.values()):
        init.unlink()


SCALING_NOTE = (" The scaling runs are timings only: each side starts from its own random weights (same shapes), "
                "its ranks bound one per core by `mpirun --bind-to core` and the DDP workers pinned to the same "
                "CPUs (`raw/binding_np<n>.log`).")


def readme(root: Path, profile: str, argv: list[str], seconds: float, load: tuple[str, str],
           blas: tuple[str, str] | None = None) -> str:
    trace, ident = provenance_lines(root)
    if blas:
        ident += (f"\n\nOpenBLAS core: `OPENBLAS_CORETYPE={blas[0]}` set by bench-peers for every run of both sides, "
                  f"the core the trainers chose on this CPU ({blas[1]}; `raw/blas_probe.log`).")
    torch = ("PyTorch's build configuration: `raw/torch_config.txt`. Kernel-relevant variables of every "
             "PyTorch pair were identical (checked).\n\n") if (root / "raw" / "torch_config.txt").exists() else ""
    return (f"# Peer comparisons, profile `{profile}`\n\nMade by `{shlex.join(argv)}` in {seconds / 60:.1f} min "
            f"(load average {load[0]} at the start, {load[1]} at the end). Measured data.\n\n"
            f"## Machine (from `{trace}`'s provenance)\n\n{ident}\n\n{torch}"
            f"Both sides of each trainer comparison started from the same initial weights (`--save-init` of "
            f"a 1-step run); the checkpoints are replaced by their sha256 and the command that makes them "
            f"again in `raw/initial_weights.tsv`.{SCALING_NOTE if any((root / 'raw').glob('scaling_*')) else ''}\n\n"
            f"## Results\n\n`summary.md` (medians, every pass, min–max), `summary.tsv` (every pass), `raw/`.\n")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--quick", dest="profile", action="store_const", const="quick")
    which.add_argument("--full", dest="profile", action="store_const", const="full")
    which.add_argument("--doc", metavar="CAMPAIGN", help="write docs/performance.md's peer section from a stored campaign")
    which.add_argument("--from-node", metavar="TARBALL", help="make a campaign of scripts/device/node-scaling.sh's "
                       "output (its node-scaling.tgz)")
    ap.add_argument("--check", action="store_true", help="with --doc: compare instead of writing; exit 1 if different")
    ap.add_argument("--out", help="campaign folder (default results/<date>-<host>-<cpu>-peers-<profile>, "
                    "with --from-node results/<date>-<node>-<cpu>-scaling-node)")
    ap.add_argument("--build-dir", default=str(runs.REPO / "build" / "release"))
    ap.add_argument("--only", default=DEFAULT_ONLY, help=f"comma list of comparisons (default {DEFAULT_ONLY}; "
                    "also isa)")
    ap.add_argument("--native-build-dir", help="isa: the build of the native preset to compare the portable "
                    "--build-dir with (cmake --preset native && cmake --build --preset native)")
    ap.add_argument("--passes", type=int, help="override the profile's pass count (at least 3 for stored results)")
    ap.add_argument("--ranks", help="scaling: the rank counts, e.g. 1,2 (default: the profile's, auto = 1, N/2 when "
                    "N >= 4, N = this machine's CPUs)")
    a = ap.parse_args(argv)
    if a.doc:
        problem = doc.update(runs.REPO / "docs" / "performance.md", Path(a.doc), runs.REPO, TITLES, a.check)
        if problem:
            print(f"{PROG}: error: {problem}", file=sys.stderr)
            return 1
        return 0
    if a.check:
        ap.error("--check goes with --doc")
    if a.from_node:
        return import_node(Path(a.from_node), a.out)
    plan = json.loads(json.dumps(PROFILES[a.profile]))  # a copy: the scaling entry gets its ranks and bindings
    if a.passes is not None:
        if a.passes < 1:
            ap.error("--passes must be at least 1")
        plan["passes"] = a.passes
        plan["scaling"]["passes"] = min(plan["scaling"]["passes"], a.passes)
    only = set(a.only.split(","))
    unknown = only - set(CHOICES)
    if unknown:
        ap.error(f"--only: unknown comparison(s) {', '.join(sorted(unknown))} (choose from {', '.join(CHOICES)})")
    if "isa" in only and not a.native_build_dir:
        ap.error("--only isa needs --native-build-dir (a build of the native preset)")
    if "weak" in only:
        only.add("ddp")  # weak scaling comes from the data-parallel runs
    try:
        plan["scaling"]["ranks"] = scaling.parse_ranks(a.ranks or plan["scaling"]["ranks"])
    except PeerError as exc:
        ap.error(str(exc))
    date = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
    out = Path(a.out or runs.REPO / "results" / f"{date}-{socket.gethostname()}-{cpu_id()}-peers-{a.profile}")
    work = out.with_name(out.name + ".partial")
    if out.exists():
        ap.error(f"{out} exists: choose another --out")
    ctx = Context(Path(a.build_dir).resolve(), work / "raw",
                  Path(a.native_build_dir).resolve() if a.native_build_dir else None)
    missing = [b for b in map(ctx.binary, ("allreduce", "gpt", "resnet")) if not Path(b).is_file()]
    if missing:  # before anything is written: a wrong --build-dir is not a partial campaign
        ap.error(f"--build-dir {a.build_dir}: {missing[0]} not found (build first: cmake --build build/release)")
    shutil.rmtree(work, ignore_errors=True)
    try:
        (work / "raw").mkdir(parents=True)
    except OSError as exc:
        print(f"{PROG}: error: cannot create {work}: {exc.strerror}", file=sys.stderr)
        return 1
    load0, t0 = Path("/proc/loadavg").read_text().split()[0], time.monotonic()
    try:
        blas = runs.blas_core_for_both_sides(ctx)
        if blas:  # every run from here on, ours and PyTorch's, on the core the trainers chose
            os.environ["OPENBLAS_CORETYPE"] = blas[0]
        if "scaling" in only:  # the CPUs mpirun binds each rank count to: the DDP workers get the same
            plan["scaling"]["bindings"] = {str(n): scaling.probe_binding(ctx, n) for n in plan["scaling"]["ranks"]}
        inits = make_inits(ctx, plan, only)
        rows = []
        for p in range(1, plan["passes"] + 1):
            print(f"{PROG}: pass {p} of {plan['passes']} ({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)
            rows += run_pass(ctx, plan, p, only, inits, work)
        if "scaling" in only:
            rows += scaling.rows(work / "raw", work)
    except (PeerError, OSError, KeyError, ValueError) as exc:
        print(f"{PROG}: error: {exc} (partial campaign left in {work})", file=sys.stderr)
        return 1
    fingerprint_inits(ctx, plan, inits)
    torch_json = sorted((work / "raw").glob("torch_*.json"))
    if torch_json:
        (work / "raw" / "torch_config.txt").write_text(json.loads(torch_json[0].read_text())["torch_config"])
    write_tsv(rows, work / "summary.tsv")
    (work / "summary.md").write_text(summary_markdown(rows, work / "raw"))
    (work / "plan.json").write_text(json.dumps({"profile": a.profile, "plan": plan, "only": sorted(only)}, indent=1))
    load1 = Path("/proc/loadavg").read_text().split()[0]
    (work / "README.md").write_text(readme(work, a.profile, ["scripts/bench-peers", *argv], time.monotonic() - t0,
                                           (load0, load1), blas))
    return finish(work, out)
