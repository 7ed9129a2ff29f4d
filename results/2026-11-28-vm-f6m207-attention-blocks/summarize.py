"""measure.log (tsv rows between the comment lines) -> summary.md: every pass, the ratios, their medians."""
import statistics
import sys

rows = [line.split("\t") for line in open(sys.argv[1]) if line[0].isdigit()]
print("| pass | threads | base tokens/s | new tokens/s | PyTorch tokens/s | new / base | new / PyTorch | base / PyTorch |")
print("|---|---|---|---|---|---|---|---|")
ratios = {}
for p, t, base, new, torch, *_ in rows:
    base, new, torch = float(base), float(new), float(torch)
    r = (new / base, new / torch, base / torch)
    ratios.setdefault(t, []).append(r)
    print(f"| {p} | {t} | {base:.0f} | {new:.0f} | {torch:.1f} | {r[0]:.3f} | {r[1]:.2f} | {r[2]:.2f} |")
print()
for t, rs in ratios.items():
    cols = list(zip(*rs))
    print(f"- {t} thread(s), {len(rs)} passes: new / base {min(cols[0]):.3f}–{max(cols[0]):.3f} (median "
          f"{statistics.median(cols[0]):.3f}); new / PyTorch {min(cols[1]):.2f}–{max(cols[1]):.2f} (median "
          f"{statistics.median(cols[1]):.2f}); base / PyTorch {min(cols[2]):.2f}–{max(cols[2]):.2f} (median "
          f"{statistics.median(cols[2]):.2f})")
