"""`python -m jcode_mobile.demo` (what `make demo` runs)."""

import subprocess
import sys
from pathlib import Path

import pytest

from jcode_mobile import demo
from jcode_mobile.fake_gateway import FakeJcodeServer

HARNESS = Path(__file__).resolve().parents[1]


def test_demo_runs_and_exits_zero():
    out = subprocess.run([sys.executable, "-m", "jcode_mobile.demo"], cwd=HARNESS, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    for heading in ("1. First launch", "2. Pairing form filled in", "3. Paired and connected", "4. Message sent",
                    "Streaming: frame", "Reply complete"):
        assert heading in text
    assert text.count("Streaming: frame") >= 3
    assert "jcode: All 42 tests pass." in text
    assert "tok-fake" not in text  # the demo prints no token
    assert text.rstrip().splitlines()[-1].startswith("ok: ")


def test_demo_fails_when_pairing_fails():
    lines = []
    run = demo.Demo(out=lines.append, server=FakeJcodeServer(pair_code="999999"))
    with pytest.raises(demo.DemoFailure, match="not chat"):
        run.run()


def test_main_reports_failure_with_exit_code_1(monkeypatch, capsys):
    class Broken(demo.Demo):
        def __init__(self):
            super().__init__(out=lambda line: None, server=FakeJcodeServer(pair_code="999999"))

    monkeypatch.setattr(demo, "Demo", Broken)
    assert demo.main() == 1
    assert "demo failed" in capsys.readouterr().err
