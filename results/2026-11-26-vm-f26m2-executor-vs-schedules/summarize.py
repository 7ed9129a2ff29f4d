import json, glob, statistics, sys, collections
out = sys.argv[1]
rows = collections.defaultdict(lambda: {"old": [], "new": []})
for f in sorted(glob.glob(f"{out}/*_p*.json")):
    side = f.split("/")[-1].split("_")[0]
    for r in json.load(open(f))["tables"]["summary"]["rows"]:
        rows[(r["algorithm"], r["bytes"])][side].append((r["t_mean_us"], r["p50_us"]))
print("| algorithm | bytes | old t_mean median (us) | new | new/old t_mean | old p50 median | new p50 | new/old p50 | passes |")
print("|---|---|---|---|---|---|---|---|---|")
for (alg, nb), s in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    o = statistics.median(x[0] for x in s["old"]); n = statistics.median(x[0] for x in s["new"])
    op = statistics.median(x[1] for x in s["old"]); np_ = statistics.median(x[1] for x in s["new"])
    print(f"| {alg} | {nb} | {o:.2f} | {n:.2f} | {n/o:.3f} | {op:.2f} | {np_:.2f} | {np_/op:.3f} | {len(s['old'])}/{len(s['new'])} |")
