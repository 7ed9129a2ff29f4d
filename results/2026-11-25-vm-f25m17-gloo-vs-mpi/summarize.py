"""Tables of results/<this>/raw: per size, the median over passes (min-max in brackets) of each
side's p50 latency, and of the same-run ratios to MPI_Allreduce. Writes markdown to stdout."""
import json
import pathlib
import statistics
import sys

raw = pathlib.Path(sys.argv[1]) / "raw"
passes = sorted({int(p.stem.split("_p")[1]) for p in raw.glob("unbound_p*.json")})


def rows(name: str, pas: int) -> list[dict]:
    return json.loads((raw / f"{name}_p{pas}.json").read_text())["tables"]["summary"]["rows"]


def torch_rows(pas: int) -> dict[int, dict]:
    return {r["bytes"]: r for r in map(json.loads, (raw / f"torch_p{pas}.jsonl").read_text().splitlines())}


# side -> bytes -> [p50 per pass]; ratio side -> bytes -> [p50 / MPI_Allreduce p50 of the same run]
p50: dict[str, dict[int, list[float]]] = {}
ratio: dict[str, dict[int, list[float]]] = {}
for pas in passes:
    for run, label in (("unbound", "on Gloo"), ("bound", "on Gloo, bound"), ("mpi", "on MPI")):
        table = rows(run, pas)
        ref = {r["bytes"]: r["p50_us"] for r in table if r["algorithm"] == "mpi"}
        for r in table:
            side = "MPI_Allreduce" + ("" if run != "bound" else " (bound run)") if r["algorithm"] == "mpi" else (
                "Gloo allreduce" + ("" if run == "unbound" else " (bound)") if r["algorithm"] == "gloo" else f"{r['algorithm']} {label}")
            if run == "mpi" and r["algorithm"] == "mpi":
                side = "MPI_Allreduce (mpi run)"
            p50.setdefault(side, {}).setdefault(r["bytes"], []).append(r["p50_us"])
            ratio.setdefault(side, {}).setdefault(r["bytes"], []).append(r["p50_us"] / ref[r["bytes"]])
    for b, r in torch_rows(pas).items():
        p50.setdefault("PyTorch Gloo allreduce", {}).setdefault(b, []).append(r["p50_us"])


def cell(values: list[float], fmt: str) -> str:
    return f"{format(statistics.median(values), fmt)} [{format(min(values), fmt)}-{format(max(values), fmt)}]"


sizes = sorted(next(iter(p50.values())).keys())
order = ["MPI_Allreduce", "Gloo allreduce", "PyTorch Gloo allreduce", "ring on Gloo", "rabenseifner on Gloo",
         "tree on Gloo", "naive on Gloo", "ring on MPI", "rabenseifner on MPI", "Gloo allreduce (bound)",
         "ring on Gloo, bound", "MPI_Allreduce (bound run)", "MPI_Allreduce (mpi run)"]
sides = [s for s in order if s in p50]
print(f"p50 latency in us, median over {len(passes)} passes [min-max]\n")
print("| side | " + " | ".join(str(b) for b in sizes) + " |")
print("|---|" + "---|" * len(sizes))
for s in sides:
    print(f"| {s} | " + " | ".join(cell(p50[s][b], ".1f") if b in p50[s] else "-" for b in sizes) + " |")
print("\np50 / p50 of MPI_Allreduce in the same run, median over passes [min-max]\n")
print("| side | " + " | ".join(str(b) for b in sizes) + " |")
print("|---|" + "---|" * len(sizes))
for s in sides:
    if s in ratio and not s.startswith("MPI_Allreduce"):
        print(f"| {s} | " + " | ".join(cell(ratio[s][b], ".2f") if b in ratio[s] else "-" for b in sizes) + " |")
