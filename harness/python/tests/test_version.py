"""The loaded library's version and ABI match the header's macros."""

import ctypes
import shutil
import subprocess

import pytest

from jcode_mobile import abi_version, library_path, load_library, version

from helpers import header_int, header_macros


def test_version_matches_the_header():
    macros = header_macros()
    assert version() == macros["JCODE_MOBILE_VERSION"].strip('"')
    parts = [header_int(f"JCODE_MOBILE_VERSION_{p}") for p in ("MAJOR", "MINOR", "PATCH")]
    assert version() == ".".join(map(str, parts))


def test_abi_version_matches_the_header():
    assert abi_version() == header_int("JCODE_MOBILE_ABI_VERSION")


def test_version_string_is_static():
    raw = ctypes.CDLL(str(library_path())).jcode_mobile_version
    raw.restype = ctypes.c_void_p
    first, second = raw(), raw()
    assert first and first == second
    assert ctypes.string_at(first).decode() == version()


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) is not installed")
def test_library_depends_only_on_the_c_runtime(lib):
    out = subprocess.run(["readelf", "-d", str(library_path().resolve())], capture_output=True, text=True, check=True).stdout
    needed = {line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line}
    allowed = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}
    assert needed and needed <= allowed, needed
