"""`pip install ./harness/python` gives a working `jcode-mobile` command that
carries its own copy of the library (no checkout, no $JCODE_MOBILE_LIB).

(`make install` for C hosts — pkg-config, rpath, valgrind suppressions — is
checked by harness/c/test_install.sh, `make test-install`.)"""

import os
import subprocess
import venv
from pathlib import Path

import pytest

from jcode_mobile.fake_gateway import FakeJcodeServer, Reply
from jcode_mobile.gateway import RunningGateway

HARNESS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A virtualenv with the package installed (its dependencies come from this
    interpreter's site-packages, so the test needs no network)."""
    root = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(root)
    python = root / "bin" / "python"
    out = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                          str(HARNESS)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return root


def clean_env():
    """No hint where the library is: the installed package must find its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("JCODE_MOBILE_LIB", "PYTHONPATH")}
    return env


def test_the_installed_package_loads_its_bundled_library(installed, tmp_path):
    out = subprocess.run([str(installed / "bin" / "python"), "-c",
                          "import jcode_mobile, jcode_mobile.binding as b; print(b.library_path()); "
                          "print(jcode_mobile.version())"],
                         cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    path, version = out.stdout.split()
    assert path.endswith("/site-packages/jcode_mobile/_lib/libjcode_mobile.so.1")
    assert version == "0.7.0"


def test_the_installed_command_runs_a_session_against_the_fake_gateway(installed, tmp_path):
    server = FakeJcodeServer(pair_code="246810", replies=[Reply(text="Installed and working.")])
    with RunningGateway(server) as gateway:
        out = subprocess.run([str(installed / "bin" / "jcode-mobile"), "run", "--host", "127.0.0.1", "--port",
                              str(gateway.port), "--code", "246810", "--working-dir", "/srv/app", "--message", "ping",
                              "--timeout", "30"],
                             cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["you: ping", "assistant: Installed and working."]


def test_the_installed_command_explains_a_bad_argument_in_one_line(installed, tmp_path):
    out = subprocess.run([str(installed / "bin" / "jcode-mobile"), "run", "--host", "h"], cwd=tmp_path,
                         env=clean_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "jcode-mobile: run: the following arguments are required: --code, --working-dir, --message (see --help)"]


def test_the_installed_command_prints_the_package_and_the_bundled_library_versions(installed, tmp_path):
    out = subprocess.run([str(installed / "bin" / "jcode-mobile"), "--version"], cwd=tmp_path, env=clean_env(),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("jcode-mobile 0.7.0; library 0.7.0 (ABI 1) at "), out.stdout
    assert out.stdout.endswith("/site-packages/jcode_mobile/_lib/libjcode_mobile.so.1\n")


def test_python_dash_m_runs_the_same_command(installed, tmp_path):
    out = subprocess.run([str(installed / "bin" / "python"), "-m", "jcode_mobile", "--help"], cwd=tmp_path,
                         env=clean_env(), capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: jcode-mobile ")
