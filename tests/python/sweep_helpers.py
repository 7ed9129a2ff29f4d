"""Building a sweep campaign in a test (test_sweep_submit.py, test_sweep_campaign_files.py): from
command-line arguments and campaign files written to tmp_path ('@' in an argument = tmp_path/), with
a fake repository root; a refusal's message, which must be one line."""
from __future__ import annotations

from pathlib import Path

import pytest

from scaleprobe_sweep import campaign, cli
from scaleprobe_sweep.errors import SweepError


def build(tmp_path: Path, argv, files=None, env=None) -> campaign.Campaign:
    """The campaign for ARGV (files: name -> text, written to tmp_path) with a fake repo root."""
    for name, text in (files or {}).items():
        (tmp_path / name).write_text(text)
    req = cli.parse([a.replace("@", str(tmp_path) + "/") for a in argv])
    return campaign.build(req, tmp_path / "repo", env or {})


def error_of(tmp_path, argv, files=None, env=None) -> str:
    with pytest.raises(SweepError) as e:
        build(tmp_path, argv, files, env)
    msg = str(e.value)
    assert "\n" not in msg
    return msg


def toml(*sweeps, top='name = "t"\n'):
    return top + "".join("[[sweep]]\n" + s + "\n" for s in sweeps)
