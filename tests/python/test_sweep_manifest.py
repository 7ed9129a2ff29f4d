"""The sweep submitter's manifest (python/scaleprobe_sweep/manifest.py): the old format read as pass 1
and converted on the first append, dry runs, a half-written line, a foreign file, the queued jobs of
a campaign (array tasks folded), and the campaign.json history. No SLURM, no binaries."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from scaleprobe_sweep.errors import SweepError
from scaleprobe_sweep.manifest import COLUMNS, OLD_COLUMNS, History, Manifest


# ---------------------------------------------------------------- manifest

def row(**kw):
    base = dict(submitted_utc="t", benchmark="allreduce", nodes="1", tasks_per_node="1", cpus_per_task="1",
                gpus_per_node="0", scaling="strong", launcher="srun", status="submitted", job_id="", trace="",
                log="", sbatch_command="")
    return {**base, **kw}


def write_old(path: Path, rows):
    path.write_text("".join("\t".join(r) + "\n" for r in [OLD_COLUMNS] + [[x[c] for c in OLD_COLUMNS] for x in rows]))


def test_old_manifest_is_read_as_pass_1_and_converted_on_first_append(tmp_path):
    m = tmp_path / "manifest.tsv"
    write_old(m, [row(job_id="50", trace=str(tmp_path / "allreduce_N1_t1_c1_j50.h5")),
                  row(benchmark="report", status="report", job_id="51")])
    man = Manifest(m, write=True)
    assert [r["pass"] for r in man.rows] == ["1", ""]
    assert man.queued_job("allreduce_N1_t1_c1", {"50"}) == "50"
    assert man.queued_job("allreduce_N1_t1_c1_p2", {"50"}) is None       # another pass
    assert man.queued_job("allreduce_N1_t1_c1", {"49"}) is None          # not queued any more
    man.add(**row(job_id="60"), **{"pass": "2"})
    lines = m.read_text().splitlines()
    assert lines[0].split("\t") == list(COLUMNS) and len(lines) == 4
    assert all(len(x.split("\t")) == len(COLUMNS) for x in lines)
    assert lines[1].split("\t")[COLUMNS.index("pass")] == "1" and lines[3].split("\t")[COLUMNS.index("pass")] == "2"
    assert [r["pass"] for r in Manifest(m, write=False).rows] == ["1", "", "2"]


def test_dry_manifest_writes_nothing(tmp_path):
    m = tmp_path / "manifest.tsv"
    write_old(m, [row(job_id="50")])
    before = m.read_text()
    man = Manifest(m, write=False)
    man.add(**row(job_id="61"))
    assert m.read_text() == before and len(man.rows) == 2
    Manifest(tmp_path / "new.tsv", write=False).add(**row())
    assert not (tmp_path / "new.tsv").exists()


def test_manifest_new_file_half_line_and_foreign_file(tmp_path):
    m = tmp_path / "manifest.tsv"
    Manifest(m, write=True).add(**row(job_id="7"), **{"pass": "1"})
    text = m.read_text()
    assert text.startswith("\t".join(COLUMNS) + "\n") and text.count("\n") == 2
    m.write_text(text + "2026\tallreduce\t1")              # a writer died mid-line
    man = Manifest(m, write=True)
    assert len(man.rows) == 1
    man.add(**row(job_id="8"), **{"pass": "1"})
    assert [r["job_id"] for r in Manifest(m, write=False).rows] == ["7", "8"]
    (tmp_path / "other.tsv").write_text("a\tb\n")
    with pytest.raises(SweepError, match="not a submit-sweep manifest"):
        Manifest(tmp_path / "other.tsv", write=False)


def test_campaign_queued_folds_array_tasks(tmp_path):
    man = Manifest(tmp_path / "m.tsv", write=False)
    for j in ("1300_0", "1300_1", "99", "1000", "5"):
        man.add(**row(job_id=j))
    man.add(**row(job_id="6", status="queued"))
    assert man.campaign_queued({"1300_1", "99", "1000", "6", "77"}) == ["99", "1000", "1300"]


def test_history_appends_and_refuses_a_broken_file(tmp_path):
    h = tmp_path / "campaign.json"
    History(h).append({"n": 1})
    History(h).append({"n": 2})
    assert json.loads(h.read_text()) == [{"n": 1}, {"n": 2}]
    assert [p.name for p in tmp_path.iterdir()] == ["campaign.json"]      # no temporary file left
    h.write_text("[{")
    with pytest.raises(SweepError, match="not valid JSON"):
        History(h)
    h.write_text("{}")
    with pytest.raises(SweepError, match="expected a JSON list"):
        History(h)
