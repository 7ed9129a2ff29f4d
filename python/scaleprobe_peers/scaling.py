"""Weak scaling at 1…N ranks beside PyTorch DDP, each side against its own same-load baseline.

For each model (gpt-tiny, 8 rows of 128 tokens per rank; ResNet-20, 32 images per rank), each rank
count n (default 1, N/2 when N >= 4, N = the CPUs this process may use) and each pass, one *group*
of runs, back to back, every rank bound to one core and running one thread:

- ``nocomm``: the trainer with --no-comm (each rank trains alone on its own batches: the same
  load without gradient communication);
- ``gloo``: the trainer with --backend gloo (scaleprobe's ring schedule over Gloo, --overlap auto);
- ``mpi``: the trainer on MPI (--overlap auto), labelled as such;
- ``ddp``: PyTorch DDP on gloo (<model>_ddp_torch.py) with its no_sync case in the
  same run, round robin with the cap: the peer's no-communication baseline under the same number
  of concurrent ranks.

The trainers run under ``mpirun --map-by core --bind-to core`` (``hwthread`` where a core per rank
cannot be had); the DDP workers are pinned with sched_setaffinity to the CPU sets that mpirun gave
the trainer's ranks (probed once per rank count), so both sides have the same binding. Side order
A B in odd passes (nocomm, gloo, mpi, ddp), B A in even ones.

Every number is the median over the summarised steps of the slowest rank's step (the trainers'
``cases/iteration_median_s``; the DDP lines' ``iteration_median_s`` and, for its no_sync case,
``baseline_iteration_median_s``). Rows, per pass:

- ``scaling`` (metric ``overhead``, lower is better): step ÷ the same side's no-communication step
  at the same rank count — scaleprobe on Gloo and on MPI, each beside DDP's;
- ``scaling_step`` (``step_ms``): the step times themselves (Gloo, MPI, and no communication), so
  the throughput ratio is there too;
- ``scaling_efficiency``: weak-scaling efficiency t(1 rank) / t(n ranks) of the same side in the
  same pass.

The same code runs on the GPU node (scripts/device/node-scaling.sh calls :func:`node_main`, whose
Python has torch but no h5py: nothing here reads a trace until :func:`rows`), and
``scripts/bench-peers --from-node TARBALL`` turns what it wrote into a campaign.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

from . import runs
from .runs import Context, PeerError
from .summary import Row

SIDES = ("nocomm", "gloo", "mpi", "ddp")  # run order in odd passes; reversed in even ones
TRAINER_SIDES = {"nocomm": ["--no-comm"], "gloo": ["--backend", "gloo"], "mpi": []}
MODELS = {"gpt": {"model": "gpt-tiny", "batch": 8}, "resnet": {"model": "resnet20", "batch": 32}}
PROGRAM = {"gpt": "gpt_train", "resnet": "resnet_train"}
BINDINGS = (["--map-by", "core", "--bind-to", "core"], ["--map-by", "hwthread", "--bind-to", "hwthread"])
KERNEL_PREFIXES = ("OMP_", "OPENBLAS_", "GOTO_")  # forwarded to the ranks by name (-x)
TITLES = {
    "scaling": "Weak scaling 1…N ranks: step ÷ the same ranks' no-communication step (same load), scaleprobe vs "
               "PyTorch DDP (gloo), one core and one thread per rank",
    "scaling_step": "Weak scaling 1…N ranks: step time (ms), scaleprobe vs PyTorch DDP (gloo), one core and one "
                    "thread per rank",
    "scaling_efficiency": "Weak scaling efficiency t(1 rank) / t(N ranks), same side, same pass",
}
NAME = re.compile(r"scaling_(gpt|resnet)_np(\d+)_(nocomm|gloo|mpi|ddp)_p(\d+)\.(h5|jsonl)$")


def default_ranks(cpus: int | None = None) -> list[int]:
    """1, N/2 (when N >= 4) and N, N the CPUs this process may run on: 2 -> [1, 2]; 16 -> [1, 8, 16]."""
    n = cpus or len(os.sched_getaffinity(0))
    return sorted({1, n // 2 if n >= 4 else 1, n})


def parse_ranks(text: str) -> list[int]:
    if text == "auto":
        return default_ranks()
    try:
        ranks = sorted({int(r) for r in text.split(",")})
    except ValueError:
        raise PeerError(f"--ranks: '{text}' is not a comma list of rank counts (or auto)")
    if not ranks or ranks[0] < 1:
        raise PeerError(f"--ranks: '{text}': rank counts must be >= 1")
    return ranks


def order(pass_no: int) -> tuple[str, ...]:
    return SIDES if pass_no % 2 else SIDES[::-1]


def stem(kind: str, n: int, side: str, pass_no: int) -> str:
    return f"scaling_{kind}_np{n}_{side}_p{pass_no}"


def kernel_env() -> dict:
    """One thread per rank, plus whatever kernel variables the caller set (e.g. OPENBLAS_CORETYPE)."""
    return {**{k: v for k, v in os.environ.items() if k.startswith(KERNEL_PREFIXES)}, **runs.threads_env(1)}


# --- binding ------------------------------------------------------------------------------------

def probe_binding(ctx: Context, n: int) -> dict:
    """The CPUs mpirun gives each of n ranks bound one per core: {"options": [...], "cpu_sets": ["0", ...]}.
    hwthread where core binding is refused (fewer cores than ranks); PeerError if neither works."""
    log = ctx.raw / f"binding_np{n}.log"
    report = 'echo "rank $OMPI_COMM_WORLD_RANK cpus $(grep Cpus_allowed_list /proc/self/status | cut -f2)"'
    for options in BINDINGS:
        try:
            runs.run(["mpirun", "-np", str(n), *options, "sh", "-c", report], log, {}, timeout=60)
        except PeerError:
            continue
        found = dict(re.findall(r"^rank (\d+) cpus (\S+)$", log.read_text(), re.M))
        if sorted(map(int, found)) == list(range(n)):
            return {"options": options, "cpu_sets": [found[str(r)] for r in range(n)]}
    raise PeerError(f"mpirun cannot bind {n} rank(s) one per core or hardware thread (log {log})")


# --- one group ----------------------------------------------------------------------------------

def trainer_command(ctx: Context, kind: str, cfg: dict, n: int, side: str, binding: dict, trace: Path) -> list[str]:
    forward = [x for k in sorted(kernel_env()) for x in ("-x", k)]
    data = ["--val-batches", "0"] if kind == "gpt" else \
        ["--synthetic-images", str(cfg["batch"] * n * (cfg["steps"] + 1)), "--synthetic-test", "1", "--val-images", "0"]
    # one more step than summarised: the trainers leave out their first (and verified) step
    return ["mpirun", "-np", str(n), *binding["options"], *forward, ctx.binary(kind), "-m", cfg["model"],
            "-B", str(cfg["batch"]), "-s", str(cfg["steps"] + 1), "-a", "ring", "--bucket-cap-mb", cfg["cap"],
            *TRAINER_SIDES[side], *data, "-q", "-o", str(trace)]


def ddp_command(ctx: Context, kind: str, cfg: dict, n: int, binding: dict, out: Path, timeout: float) -> list[str]:
    return ctx.peer(f"{kind}_ddp_torch", "--model", cfg["model"], "--batch", str(cfg["batch"]), "--steps",
                    str(cfg["steps"]), "--caps", cfg["cap"], "--ranks", str(n), "--threads", "1", "--cpu-sets",
                    ";".join(binding["cpu_sets"]), "--raw", str(out.with_suffix(".raw.json")),
                    "--timeout", f"{max(timeout - 5, 1):.0f}")


def run_group(ctx: Context, kind: str, cfg: dict, n: int, pass_no: int, binding: dict,
              timeout: float = 1800, deadline: float | None = None, on_run=None) -> dict[str, Path]:
    """The four sides of one (model, rank count, pass), in this pass's order; returns side -> file.
    Each run may take timeout seconds, and none goes past deadline (time.monotonic()); on_run(side,
    seconds, error) is called after each run (error: '' or the PeerError's line)."""
    files = {}
    for side in order(pass_no):
        name = stem(kind, n, side, pass_no)
        t0 = time.monotonic()
        if deadline is not None:
            timeout = min(timeout, deadline - t0)
        try:
            if timeout < 1:
                raise PeerError(f"{name}: not started, the time budget is spent")
            if side == "ddp":
                out = ctx.raw / f"{name}.jsonl"
                runs.run(ddp_command(ctx, kind, cfg, n, binding, out, timeout), out.with_suffix(".log"),
                         ctx.peer_environment(kernel_env()), timeout)
                runs.json_lines(out.with_suffix(".log"), out)
            else:
                out = ctx.raw / f"{name}.h5"
                runs.run(trainer_command(ctx, kind, cfg, n, side, binding, out), out.with_suffix(".log"), kernel_env(),
                         timeout)
        except PeerError as exc:
            if on_run:
                on_run(side, time.monotonic() - t0, str(exc))
            raise
        if on_run:
            on_run(side, time.monotonic() - t0, "")
        files[side] = out
    return files


# --- rows ---------------------------------------------------------------------------------------

def measurements(raw: Path) -> dict[tuple[str, int, int], dict[str, dict]]:
    """(kind, ranks, pass) -> side -> {"t": median slowest-rank step s, "file": name, ...} for every
    run file in raw (a DDP file gives "ddp" and its no_sync case "ddp_nosync")."""
    from scaleprobe_analysis.h5open import open_h5
    found: dict[tuple[str, int, int], dict[str, dict]] = {}
    for path in sorted(raw.iterdir()):
        m = NAME.fullmatch(path.name)
        if not m:
            continue
        kind, n, side, p = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))
        group = found.setdefault((kind, n, p), {})
        if side == "ddp":
            lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            if len(lines) != 1:
                raise PeerError(f"{path}: {len(lines)} JSON lines, expected the one cap's")
            d = lines[0]
            group["ddp"] = {"t": float(d["iteration_median_s"]), "file": path.name, "label": "torch DDP gloo"}
            group["ddp_nosync"] = {"t": float(d["baseline_iteration_median_s"]), "file": path.name,
                                   "label": "torch DDP gloo, no_sync"}
            continue
        with open_h5(path) as f:
            c, attrs = f["cases"], f.attrs
            if len(c["iteration_median_s"]) != 1:
                raise PeerError(f"{path}: {len(c['iteration_median_s'])} cases, expected one")
            group[side] = {"t": float(c["iteration_median_s"][0]), "file": path.name,
                           "imbalance": float(c["compute_imbalance"][0]),
                           "program": runs.text(attrs.get("program", PROGRAM[kind])),
                           "overlap": runs.text(attrs.get("overlap_mode", "?")),
                           "no_comm": int(attrs.get("no_comm", 0)), "backend": runs.text(attrs.get("backend", "?")),
                           "model": runs.text(attrs.get("model_name", "?")), "nranks": int(attrs.get("nranks", 0))}
            if group[side]["nranks"] != n or group[side]["no_comm"] != (side == "nocomm"):
                raise PeerError(f"{path}: {group[side]['nranks']} ranks, no_comm={group[side]['no_comm']}: "
                                "not the run its name says")
    return found


CASE = {"gloo": "Gloo", "mpi": "MPI", "nocomm": "no communication"}


def _label(m: dict, side: str) -> str:
    """What scaleprobe ran, as the rows name it: 'gpt_train ring on Gloo (overlap thread)', 'gpt_train --no-comm'."""
    return f"{m['program']} --no-comm" if side == "nocomm" else f"{m['program']} ring on {CASE[side]} (overlap {m['overlap']})"


def rows(raw: Path, root: Path) -> list[Row]:
    """Every row of every complete group in raw (a group missing a side gives no rows)."""
    found = measurements(raw)
    rel = os.path.relpath(raw, root)
    out: list[Row] = []

    def f(*names: str) -> str:
        return ";".join(f"{rel}/{name}" for name in dict.fromkeys(names))

    for (kind, n, p), g in sorted(found.items()):
        if not {"nocomm", "gloo", "mpi", "ddp"} <= set(g):
            continue
        model, first = g["nocomm"]["model"], "ours" if p % 2 else "peer"
        ranks = f"{n} rank{'s' if n > 1 else ''}"
        ddp, base = g["ddp"], g["ddp_nosync"]
        for side in ("gloo", "mpi"):
            s = g[side]
            out.append(Row("scaling", f"{model}, {ranks}, {CASE[side]}", p, f"{_label(s, side)} ÷ its --no-comm run",
                           "torch DDP gloo ÷ its no_sync case", "overhead", s["t"] / g["nocomm"]["t"],
                           ddp["t"] / base["t"], first, f(s["file"], g["nocomm"]["file"]), f(ddp["file"])))
        for side, peer in (("gloo", ddp), ("mpi", ddp), ("nocomm", base)):
            s = g[side]
            out.append(Row("scaling_step", f"{model}, {ranks}, {CASE[side]}", p, _label(s, side), peer["label"],
                           "step_ms", s["t"] * 1e3, peer["t"] * 1e3, first, f(s["file"]), f(peer["file"])))
        one = found.get((kind, 1, p), {})
        if n > 1 and {"gloo", "mpi", "ddp"} <= set(one):
            for side in ("gloo", "mpi"):
                out.append(Row("scaling_efficiency", f"{model}, 1→{n} ranks, {CASE[side]}", p, _label(g[side], side),
                               "torch DDP gloo", "efficiency", one[side]["t"] / g[side]["t"],
                               one["ddp"]["t"] / ddp["t"], first, f(one[side]["file"], g[side]["file"]),
                               f(one["ddp"]["file"], ddp["file"])))
    return out


def markdown(rows_: list[Row], raw: Path, level: str = "##") -> str:
    """Per model and rank count: each side's overhead (median and every pass) and scaleprobe's compute
    imbalance in its three runs (median over passes), read back from the traces the rows name."""
    from scaleprobe_analysis.h5open import open_h5
    over = [r for r in rows_ if r.comparison == "scaling"]
    if not over:
        return ""
    table: dict[tuple[str, int], dict] = {}
    for r in sorted(over, key=lambda r: r.pass_no):
        model, ranks, side = r.case.split(", ")
        cell = table.setdefault((model, int(ranks.split()[0])), {"imbalance": {}})
        cell.setdefault(side, []).append(r.ours_value)
        if side == "Gloo":
            cell.setdefault("DDP", []).append(r.peer_value)
        for path in r.ours_file.split(";"):  # the run and its --no-comm baseline (shared by Gloo and MPI)
            name = Path(path).name
            with open_h5(raw / name) as h:
                cell["imbalance"].setdefault(NAME.fullmatch(name).group(3), {})[name] = \
                    float(h["cases"]["compute_imbalance"][0])

    def values(xs: list[float]) -> str:
        return f"{statistics.median(xs):.2f} ({', '.join(f'{x:.2f}' for x in xs)})" if xs else "–"

    def pct(xs: list[float]) -> str:
        return f"{100 * statistics.median(xs):.0f} %" if xs else "–"

    lines = [f"{level} Weak scaling overhead per rank count (every pass)", "",
             "Overhead = median step ÷ the median step of the same side's no-communication run at the same rank "
             "count (scaleprobe: `--no-comm`; DDP: its `no_sync` case in the same run), per pass; the median, then "
             "every pass in order. Imbalance: scaleprobe's compute imbalance (slowest rank's compute ÷ mean − 1), "
             "median over passes, in its no-comm, Gloo and MPI runs.", "",
             "| model | ranks | scaleprobe on Gloo | scaleprobe on MPI | PyTorch DDP (gloo) | imbalance no-comm / Gloo / "
             "MPI |", "|---|---|---|---|---|---|"]
    for (model, n), c in table.items():
        imb = " / ".join(pct(list(c["imbalance"].get(s, {}).values())) for s in ("nocomm", "gloo", "mpi"))
        lines.append(f"| {model} | {n} | {values(c.get('Gloo', []))} | {values(c.get('MPI', []))} | "
                     f"{values(c.get('DDP', []))} | {imb} |")
    return "\n".join(lines) + "\n"


# --- the GPU node -------------------------------------------------------------------------------

def node_main(argv: list[str] | None = None) -> int:
    """What scripts/device/node-scaling.sh runs: every group within a time budget, a failed run
    recorded and the next group started, then plan.json and runs.tsv beside raw/ in --out."""
    ap = argparse.ArgumentParser(prog="node-scaling", description="weak scaling beside PyTorch DDP (run on a node)")
    ap.add_argument("--bin-dir", required=True, help="folder with gpt_train and resnet_train (a bundle's bin/)")
    ap.add_argument("--out", required=True, help="folder to write raw/, plan.json and runs.tsv into")
    ap.add_argument("--ranks", default="auto", help="rank counts, e.g. 1,8,16 (default: 1, N/2, N)")
    ap.add_argument("--models", default="gpt,resnet")
    ap.add_argument("--passes", type=int, default=2)
    ap.add_argument("--steps", type=int, default=5, help="summarised steps per run")
    ap.add_argument("--cap", default="25", help="bucket cap in MiB")
    ap.add_argument("--budget-s", type=float, default=230, help="no run starts after this many seconds")
    ap.add_argument("--run-timeout-s", type=float, default=90, help="the longest one run may take")
    ap.add_argument("--size", action="append", default=[], metavar="KIND=MODEL:BATCH",
                    help="another model or batch per rank, e.g. gpt=gpt-micro:2 (tests)")
    ap.add_argument("--python", default=sys.executable, help="the PyTorch peers' interpreter")
    a = ap.parse_args(argv)
    t_start = time.monotonic()
    out = Path(a.out)
    (out / "raw").mkdir(parents=True, exist_ok=True)
    peer_env = {"LD_LIBRARY_PATH": os.environ["SP_PEER_LD_LIBRARY_PATH"]} \
        if "SP_PEER_LD_LIBRARY_PATH" in os.environ else {}
    ctx = Context(Path(a.bin_dir).resolve(), out / "raw", python=a.python, peer_env=peer_env)
    models = [m for m in a.models.split(",") if m]
    if not set(models) <= set(MODELS) or not models:
        ap.error(f"--models: choose from {', '.join(MODELS)}")
    sizes = {k: dict(MODELS[k]) for k in models}
    for item in a.size:
        m = re.fullmatch(r"(\w+)=([\w-]+):(\d+)", item)
        if not m or m.group(1) not in sizes:
            ap.error(f"--size {item}: KIND=MODEL:BATCH with KIND one of --models")
        sizes[m.group(1)] = {"model": m.group(2), "batch": int(m.group(3))}
    plan = {"passes": a.passes, "steps": a.steps, "cap": a.cap, "models": sizes}
    status = [("kind", "ranks", "pass", "side", "seconds", "status")]

    def left() -> float:
        return a.budget_s - (time.monotonic() - t_start)

    def say(msg: str) -> None:
        print(f"[{time.monotonic() - t_start:5.0f} s] {msg}", flush=True)

    try:
        ranks = parse_ranks(a.ranks)
    except PeerError as exc:
        ap.error(str(exc))
    bindings = {}
    for n in ranks:
        try:
            bindings[n] = probe_binding(ctx, n)
            say(f"{n} rank(s): mpirun {' '.join(bindings[n]['options'])} -> CPUs {' '.join(bindings[n]['cpu_sets'])}")
        except PeerError as exc:
            say(f"{n} rank(s) dropped: {exc}")
    # the largest count first, then 1 (the efficiency's reference), then the rest, in every pass
    counts = sorted(bindings, reverse=True)
    counts = counts[:1] + [n for n in counts[1:] if n == 1] + [n for n in counts[1:] if n != 1]
    took: dict[tuple[str, int], float] = {}
    stop = False
    for p in range(1, a.passes + 1):
        for n in counts:
            for kind in models:
                need = took.get((kind, n), 0.0)
                if stop or left() < max(need, 5.0):
                    status.append((kind, n, p, "*", 0, "skipped: time budget"))
                    continue
                cfg = {**sizes[kind], "steps": a.steps, "cap": a.cap}
                t0 = time.monotonic()
                try:
                    run_group(ctx, kind, cfg, n, p, bindings[n], a.run_timeout_s, t_start + a.budget_s,
                              on_run=lambda side, s, err, kind=kind, n=n, p=p:
                              status.append((kind, n, p, side, f"{s:.1f}", err or "ok")))
                except PeerError as exc:
                    say(f"pass {p} {kind} {n} rank(s): {exc}")
                    stop = left() <= 0
                    continue
                took[(kind, n)] = time.monotonic() - t0
                say(f"pass {p} {kind} {n} rank(s): {took[(kind, n)]:.0f} s; " + group_line(ctx.raw, kind, n, p))
    plan.update(ranks=counts, bindings={str(n): b for n, b in bindings.items()}, budget_s=a.budget_s,
                seconds=round(time.monotonic() - t_start, 1), started_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                                        time.gmtime()),
                command=["node-scaling", *(argv if argv is not None else sys.argv[1:])])
    (out / "plan.json").write_text(json.dumps({"profile": "node", "plan": {"scaling": plan}}, indent=1) + "\n")
    (out / "runs.tsv").write_text("".join("\t".join(map(str, r)) + "\n" for r in status))
    done = sum(1 for r in status[1:] if r[5] == "ok")
    say(f"{done} run(s) ok of {len(status) - 1} listed; {out}")
    return 0 if done else 1


def group_line(raw: Path, kind: str, n: int, p: int) -> str:
    """A rough line for the node's log without reading HDF5: each trainer's printed ms/iteration (a
    mean) and DDP's medians; the campaign's numbers come from the traces at import."""
    parts = []
    for side in ("nocomm", "gloo", "mpi"):
        log = raw / f"{stem(kind, n, side, p)}.log"
        m = re.search(r"([\d.]+) ms/iteration", log.read_text(errors="replace")) if log.exists() else None
        parts.append(f"{side} {m.group(1) if m else '?'} ms")
    try:
        d = json.loads((raw / f"{stem(kind, n, 'ddp', p)}.jsonl").read_text().splitlines()[0])
        parts.append(f"ddp {d['iteration_median_s'] * 1e3:.1f} ms, no_sync {d['baseline_iteration_median_s'] * 1e3:.1f}"
                     " ms (medians)")
    except (OSError, IndexError, KeyError, ValueError):
        parts.append("ddp ?")
    return "; ".join(parts)
