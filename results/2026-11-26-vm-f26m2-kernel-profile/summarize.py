"""Summary of measure.sh's runs, per model and thread count: throughput of the trainer and of the
PyTorch peer (unprofiled) in each pass and their ratio; the trainer's kernels (--profile-kernels:
ms per step, share of the step, GFLOP/s, GB/s; medians over the passes) and PyTorch's ops under
torch.profiler (self CPU ms per step, share of the profiled step; medians over the passes, the ops
above 0.5 % of the step).
    PYTHONPATH=../../python /usr/bin/python3 summarize.py raw > summary.md"""
import glob, json, re, statistics, sys
from scaleprobe_analysis.h5open import open_h5  # the one safe open

raw = sys.argv[1] if len(sys.argv) > 1 else "raw"
med = statistics.median
s = lambda x: x.decode() if isinstance(x, bytes) else str(x)
ours, rate, torch_rate, torch_ops, torch_step, cpu, core = {}, {}, {}, {}, {}, set(), set()
for path in sorted(glob.glob(f"{raw}/*.h5")):
    m, t, p = re.search(r"(gpt|resnet)-t(\d)-p(\d+)\.h5$", path).groups()
    with open_h5(path) as f:
        cpu.add(s(f["provenance"].attrs["cpu_signature"]))
        core.add(s(f.attrs["blas_core"]))
        unit = "tokens_per_s" if m == "gpt" else "images_per_s"
        rate[(m, t, p)] = float(f.attrs[unit])
        k = f["kernels"]
        wall = float(k["step_wall_s"][0]) / int(k["steps"][0])
        for i, name in enumerate(k["kernel"][()]):
            sec = float(k["seconds"][i]) / int(k["steps"][i])
            ours.setdefault((m, t), {}).setdefault(s(name), []).append(
                (sec, sec / wall, float(k["flops"][i]) / float(k["seconds"][i]), float(k["bytes"][i]) / float(k["seconds"][i])))
        ours.setdefault((m, t), {}).setdefault("(step)", []).append((wall, 1.0, 0, 0))
for path in sorted(glob.glob(f"{raw}/torch-*.json")):
    m, t, p, mode = re.search(r"torch-(gpt|resnet)-t(\d)-p(\d+)-(plain|profile)\.json$", path).groups()
    d = json.load(open(path))
    if mode == "plain":
        torch_rate[(m, t, p)] = d.get("tokens_per_s") or d.get("images_per_s")
        continue
    step = sum(o["self_ms_per_step"] for o in d["profile"])
    torch_step.setdefault((m, t), []).append(step)
    for o in d["profile"]:
        torch_ops.setdefault((m, t), {}).setdefault(o["op"], []).append((o["self_ms_per_step"], o["self_ms_per_step"] / step))

print(f"CPU: {', '.join(sorted(cpu))}; OpenBLAS core (both sides): {', '.join(sorted(core))}\n")
print("| model | threads | pass | scaleprobe /s | PyTorch /s | scaleprobe / PyTorch |")
print("|---|---|---|---|---|---|")
for key in sorted(rate):
    print(f"| {key[0]} | {key[1]} | {key[2]} | {rate[key]:.1f} | {torch_rate[key]:.1f} | {rate[key] / torch_rate[key]:.2f} |")
for (m, t) in sorted(ours):
    print(f"\n## {m}, {t} thread(s)\n\nscaleprobe kernels (medians over the passes; the step's wall time in the last row):\n")
    print("| kernel | ms/step | share | GFLOP/s | GB/s |\n|---|---|---|---|---|")
    rows = sorted(ours[(m, t)].items(), key=lambda kv: -med(x[0] for x in kv[1]))
    inside = 0.0
    for name, xs in rows:
        if name == "(step)":
            continue
        ms, share = med(x[0] for x in xs) * 1e3, med(x[1] for x in xs)
        inside += ms
        print(f"| {name} | {ms:.2f} | {100 * share:.1f} % | {med(x[2] for x in xs) * 1e-9:.1f} | {med(x[3] for x in xs) * 1e-9:.1f} |")
    step = med(x[0] for x in ours[(m, t)]["(step)"]) * 1e3
    print(f"| (outside the kernels) | {step - inside:.2f} | {100 * (step - inside) / step:.1f} % | | |")
    print(f"| (step) | {step:.2f} | 100 % | | |")
    print(f"\nPyTorch ops by self CPU time under torch.profiler (profiled step {med(torch_step[(m, t)]):.1f} ms, "
          "its overhead included; ops above 0.5 %):\n")
    print("| op | self ms/step | share |\n|---|---|---|")
    for op, xs in sorted(torch_ops[(m, t)].items(), key=lambda kv: -med(x[0] for x in kv[1])):
        if med(x[1] for x in xs) >= 0.005:
            print(f"| {op} | {med(x[0] for x in xs):.2f} | {100 * med(x[1] for x in xs):.1f} % |")
