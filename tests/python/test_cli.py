"""Command line: exit codes and the single-line error format."""
from __future__ import annotations

import shutil

import pytest

from helpers import ALLREDUCE_ALGORITHMS, run_cli
from scaleprobe_analysis.cli import main


def test_check_good_files(allreduce_trace, bucket_trace, capsys):
    assert main(["check", str(allreduce_trace), str(bucket_trace)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and all(line.startswith("ok: ") for line in out)
    assert "kind=allreduce" in out[0] and "kind=bucket_sweep" in out[1]


def test_check_reports_each_bad_file_on_one_line(allreduce_trace, tmp_path, capsys):
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"\0" * 100)
    missing = tmp_path / "missing.h5"
    assert main(["check", str(allreduce_trace), str(junk), str(missing)]) == 1
    captured = capsys.readouterr()
    assert captured.out.count("ok: ") == 1
    assert captured.err.splitlines() == [
        f"scaleprobe-analyze: error: {junk}: not a readable HDF5 file (corrupt or truncated)",
        f"scaleprobe-analyze: error: {missing}: trace file not found",
    ]


def test_report_goes_on_past_a_bad_file_but_plot_refuses_it(campaign_dir, tmp_path):
    camp = shutil.copytree(campaign_dir, tmp_path / "camp")
    bad = camp / "zz-bad.h5"
    bad.write_bytes(b"not hdf5 at all")
    # What goes on is the subject, not the per-trace figures: they are not drawn.
    proc = run_cli("report", str(camp), "-o", str(tmp_path / "out"), "--trace-figures", "none")
    assert proc.returncode == 0 and proc.stderr == ""
    text = (tmp_path / "out" / "report.md").read_text()
    assert "| ? | ? | unreadable | zz-bad.h5 | not a readable HDF5 file (corrupt or truncated) |" in text
    assert "the report goes on with the 2 valid trace(s)" in text and "### allreduce: allreduce" in text
    proc = run_cli("plot", str(camp), "-o", str(tmp_path / "figs"))  # every other command stays strict
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [f"scaleprobe-analyze: error: {bad}: not a readable HDF5 file (corrupt or truncated)"]


def test_report_without_any_valid_trace_exits_1_with_one_line(tmp_path):
    camp = tmp_path / "camp"
    camp.mkdir()
    (camp / "a.h5").write_bytes(b"not hdf5 at all")
    (camp / "b.h5.partial").write_bytes(b"")
    proc = run_cli("report", str(camp), "-o", str(tmp_path / "out"))
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [f"scaleprobe-analyze: error: {camp}: no valid trace in the campaign directory "
                                        "(1 incomplete, 1 unreadable)"]
    assert not (tmp_path / "out").exists()
    (camp / "b.h5.partial").unlink()  # one bad file alone: its own one-line reason
    proc = run_cli("report", str(camp), "-o", str(tmp_path / "out"))
    assert proc.returncode == 1
    assert proc.stderr == f"scaleprobe-analyze: error: {camp / 'a.h5'}: not a readable HDF5 file (corrupt or truncated)\n"


def test_an_output_the_system_refuses_is_one_line(allreduce_trace, tmp_path):
    over_a_file = tmp_path / "file"
    over_a_file.write_text("")
    for command, out in (("report", over_a_file / "rep"), ("plot", over_a_file / "figs"),
                         ("export", tmp_path / "missing" / "x.json")):
        proc = run_cli(command, str(allreduce_trace), "-o", str(out))
        assert proc.returncode == 1, command
        assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr, (command, proc.stderr)
        assert proc.stderr.startswith(f"scaleprobe-analyze: error: cannot write {out}: "), (command, proc.stderr)


def test_fit_prints_each_algorithm(campaign_dir, capsys):
    assert main(["fit", str(campaign_dir)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("# allreduce: ") and "measured" in lines[0]
    assert sorted(line.split()[0] for line in lines[2:]) == sorted(ALLREDUCE_ALGORITHMS)
    assert all(float(line.split()[1]) >= 0 for line in lines[2:])


def test_fit_without_allreduce_traces(bucket_trace, capsys):
    assert main(["fit", str(bucket_trace)]) == 1
    assert "no allreduce traces" in capsys.readouterr().err


def test_plot_single_file_default_output_dir(bucket_trace, tmp_path, capsys):
    trace = shutil.copyfile(bucket_trace, tmp_path / "sweep.h5")
    assert main(["plot", str(trace)]) == 0
    written = sorted(capsys.readouterr().out.split())
    assert written == sorted(str(tmp_path / "figures" / f"sweep-{name}.{ext}")
                             for name in ("bucket_sweep", "contention", "imbalance") for ext in ("png", "svg"))


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main([])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["check"])
    assert info.value.code == 2
    for threshold in ("nan", "-0.1", "abc", "10"):
        with pytest.raises(SystemExit) as info:
            main(["compare", "a", "b", "--threshold", threshold])
        assert info.value.code == 2
        assert capsys.readouterr().err.splitlines()[-1].endswith(
            f"--threshold: a relative change such as 0.05 (5 %), got {threshold}")


def test_wrapper_script_and_module_entry(campaign_dir, allreduce_trace, tmp_path):
    proc = run_cli("check", str(allreduce_trace), wrapper=True)
    assert proc.returncode == 0 and proc.stdout.startswith(f"ok: {allreduce_trace} kind=allreduce")
    proc = run_cli("fit", str(campaign_dir))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# allreduce: ")
    proc = run_cli("check", str(tmp_path / "nope.h5"), wrapper=True)
    assert proc.returncode == 1
    assert proc.stderr == f"scaleprobe-analyze: error: {tmp_path / 'nope.h5'}: trace file not found\n"
