"""Shared fixtures: the package is imported from harness/python (no install needed).

Every JSON answer the library gives this suite — in this process and in the
simulator and CLI processes it starts (``JCODE_MOBILE_CHECK_OUTPUTS=1``) — is
validated against the JSON Schema the library itself publishes
(``jcode_mobile_schema``); an answer that does not match fails the test that
received it with :class:`jcode_mobile.schema.SchemaViolation`.
"""

import os
import sys
from pathlib import Path
from typing import Any, Callable, Iterator, List, Optional

import pytest

HARNESS = Path(__file__).resolve().parents[1]
REPO = HARNESS.parents[1]
if str(HARNESS) not in sys.path:
    sys.path.insert(0, str(HARNESS))

from jcode_mobile import load_library  # noqa: E402
from jcode_mobile.binding import set_output_check  # noqa: E402
from jcode_mobile.schema import OutputCheck  # noqa: E402


@pytest.fixture(scope="session", autouse=True)
def answers_match_the_schema():
    """Installs the schema check for the whole session (see the module doc)."""
    check = OutputCheck()
    previous = set_output_check(check)
    os.environ["JCODE_MOBILE_CHECK_OUTPUTS"] = "1"
    yield check
    set_output_check(previous)


@pytest.fixture(scope="session")
def lib():
    """The loaded library (ctypes.CDLL with signatures declared)."""
    return load_library()


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture
def hosts() -> Iterator[Callable[..., Any]]:
    """``hosts(app=None, **options)`` starts a BackgroundHost around ``app`` (its http and
    connect timeouts 2 s and a VirtualClock unless ``options`` say otherwise); all are closed
    after the test."""
    from jcode_mobile.host import BackgroundHost, VirtualClock

    started: List[BackgroundHost] = []

    def start(app: Optional[Any] = None, **options: Any) -> BackgroundHost:
        options.setdefault("http_timeout", 2.0)
        options.setdefault("connect_timeout", 2.0)
        options.setdefault("clock", VirtualClock())
        host = BackgroundHost(app, **options)
        started.append(host)
        return host

    yield start
    for host in started:
        host.close()


@pytest.fixture
def start_gateway() -> Iterator[Callable[..., Any]]:
    """``start_gateway(faults=None, **options)`` starts a gateway on loopback around
    ``FakeJcodeServer(**options)``, its faults injected; all are stopped after the test."""
    from jcode_mobile.fake_gateway import FakeJcodeServer
    from jcode_mobile.gateway import RunningGateway

    started: List[RunningGateway] = []

    def start(faults: Optional[Any] = None, **options: Any) -> RunningGateway:
        running = RunningGateway(FakeJcodeServer(**options), faults=faults).start()
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()
