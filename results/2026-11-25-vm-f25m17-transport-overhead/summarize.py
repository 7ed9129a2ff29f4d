"""Median p50 latency ratio NEW/OLD per (algorithm, bytes) over interleaved passes (raw/*.json)."""
import json, statistics, sys, pathlib
out = pathlib.Path(sys.argv[1])
p50 = {}
for f in sorted((out / "raw").glob("*_p*.json")):
    side, pas = f.stem.split("_p")
    for row in json.loads(f.read_text())["tables"]["summary"]["rows"]:
        p50.setdefault((row["algorithm"], row["bytes"]), {}).setdefault(int(pas), {})[side] = row["p50_us"]
lines = ["| algorithm | bytes | old p50 us (median) | new p50 us (median) | new/old median | min-max | every pass |",
         "|---|---|---|---|---|---|---|"]
for (alg, b), passes in sorted(p50.items()):
    ratios = [v["new"] / v["old"] for _, v in sorted(passes.items()) if "new" in v and "old" in v]
    old = statistics.median(v["old"] for v in passes.values())
    new = statistics.median(v["new"] for v in passes.values())
    lines.append(f"| {alg} | {b} | {old:.2f} | {new:.2f} | {statistics.median(ratios):.3f} | "
                 f"{min(ratios):.2f}-{max(ratios):.2f} | {', '.join(f'{r:.2f}' for r in ratios)} |")
print("\n".join(lines))
