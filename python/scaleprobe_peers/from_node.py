"""scripts/bench-peers --from-node: scripts/device/node-scaling.sh's tarball (weak scaling run on the
GPU node) made a campaign folder under results/, with the same rows, tables and report as a
measured one and a README naming the node.
"""
from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from . import runs, scaling
from .campaign_folder import PROG, finish, provenance_lines, summary_markdown
from .runs import PeerError
from .summary import write_tsv

NODE_DIR = "node-scaling"  # the folder inside scripts/device/node-scaling.sh's tarball
NODE_README_KEYS = ("Model name", "CPU family", "Model", "Thread(s) per core", "Core(s) per socket", "Socket(s)",
                    "L3 cache", "NUMA node(s)", "Hypervisor vendor")


def node_facts(text: str) -> tuple[list[str], dict[str, str]]:
    """node.txt: its 'key: value' lines before '--- lscpu', and lscpu's fields."""
    head, _, lscpu = text.partition("--- lscpu")
    fields = dict(re.findall(r"^\s*([^:\n]+?):\s*(.*?)\s*$", lscpu, re.M))
    return [line for line in head.splitlines() if line.strip()], fields


def node_readme(root: Path, tarball: str, plan: dict, facts: list[str], cpu: dict[str, str]) -> str:
    trace, ident = provenance_lines(root)
    status = [line.split("\t") for line in (root / "runs.tsv").read_text().splitlines()[1:]]
    counts = {}
    for r in status:
        key = "ok" if r[5] == "ok" else ("skipped (time budget)" if r[5].startswith("skipped") else "failed")
        counts[key] = counts.get(key, 0) + 1
    sc = plan["plan"]["scaling"]
    models = ", ".join(f"{v['model']} ({v['batch']} per rank)" for v in sc["models"].values())
    machine = "\n".join(f"- {line}" for line in facts)
    lscpu = "\n".join(f"- `{k}`: {cpu[k]}" for k in NODE_README_KEYS if k in cpu)
    return (f"# Weak scaling beside PyTorch DDP on {cpu.get('Model name', 'the node')}, "
            f"{next((f.split(':', 1)[1].strip() for f in facts if f.startswith('nproc:')), '?')} CPUs\n\n"
            f"Made by `scripts/device/node-scaling.sh` on the machine below (its driver: "
            f"`{shlex.join(sc.get('command', []))}`), {sc.get('seconds', 0) / 60:.1f} min of runs, and made a "
            f"campaign by `scripts/bench-peers --from-node {tarball}`. Measured data: rank counts "
            f"{', '.join(map(str, sorted(sc['ranks'])))}, "
            f"{sc['passes']} pass(es), {sc['steps']} summarised steps per run, cap {sc['cap']} MiB; models "
            f"{models}.\n\n"
            f"Runs: {', '.join(f'{v} {k}' for k, v in sorted(counts.items()))} (`runs.tsv`: every run, its status and "
            f"seconds). What each row is: python/scaleprobe_peers/scaling.py.\n\n"
            f"## Machine (the node's `node.txt`: `nproc`, `lscpu`, the MPI and PyTorch it had)\n\n{machine}\n{lscpu}\n\n"
            f"## Programs (from `{trace}`'s provenance; built on the build machine, carried in a bundle)\n\n{ident}\n\n"
            f"## Results\n\n`summary.md` (medians, every pass, min–max), `summary.tsv` (every pass), `raw/` (traces, "
            f"PyTorch's JSON lines and per-step rows, logs, the binding probes), `node.txt`.\n")


def import_node(tarball: Path, out_arg: str | None) -> int:
    """--from-node: scripts/device/node-scaling.sh's tarball -> a campaign folder under results/."""
    try:
        with tempfile.TemporaryDirectory(prefix="bench-peers-node.") as tmp:
            with tarfile.open(tarball) as tar:
                members = tar.getmembers()
                bad = [m.name for m in members if m.name.startswith("/") or ".." in Path(m.name).parts
                       or not (m.isfile() or m.isdir()) or Path(m.name).parts[:1] != (NODE_DIR,)]
                if bad:
                    raise PeerError(f"{tarball}: unexpected member {bad[0]} (not a node-scaling.sh tarball)")
                tar.extractall(tmp, members=members)
            src = Path(tmp) / NODE_DIR
            for needed in ("plan.json", "node.txt", "runs.tsv", "raw"):
                if not (src / needed).exists():
                    raise PeerError(f"{tarball}: {NODE_DIR}/{needed} missing (not a complete node-scaling.sh output)")
            plan = json.loads((src / "plan.json").read_text())
            facts, cpu = node_facts((src / "node.txt").read_text())
            date = plan["plan"]["scaling"].get("started_utc", "")[:10] or "undated"
            host = next((f.split(":", 1)[1].strip() for f in facts if f.startswith("hostname:")), "node")
            cpuid = f"f{cpu.get('CPU family', '?')}m{cpu.get('Model', '?')}"
            out = Path(out_arg or runs.REPO / "results" / f"{date}-{host}-{cpuid}-scaling-node")
            if out.exists():
                raise PeerError(f"{out} exists: choose another --out")
            work = out.with_name(out.name + ".partial")
            shutil.rmtree(work, ignore_errors=True)
            shutil.copytree(src, work)
        rows = scaling.rows(work / "raw", work)
        if not rows:
            raise PeerError(f"{tarball}: no complete group of runs (runs.tsv says why)")
        write_tsv(rows, work / "summary.tsv")
        (work / "summary.md").write_text(summary_markdown(rows, work / "raw"))
        (work / "README.md").write_text(node_readme(work, tarball.name, plan, facts, cpu))
    except tarfile.TarError:  # its message lists every decompressor tried, one per line
        print(f"{PROG}: error: {tarball}: not a readable tar archive (not a node-scaling.sh tarball)", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{PROG}: error: {exc.filename or tarball}: {exc.strerror}", file=sys.stderr)
        return 1
    except (PeerError, KeyError, ValueError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    return finish(work, out)
