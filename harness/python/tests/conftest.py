"""Shared fixtures: the package is imported from harness/python (no install needed)."""

import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parents[1]
REPO = HARNESS.parents[1]
if str(HARNESS) not in sys.path:
    sys.path.insert(0, str(HARNESS))

from jcode_mobile import load_library  # noqa: E402


@pytest.fixture(scope="session")
def lib():
    """The loaded library (ctypes.CDLL with signatures declared)."""
    return load_library()


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
