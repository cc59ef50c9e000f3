"""Command-line argument types the package's tools share."""

import argparse
from typing import Callable


def port_type(free_allowed: bool = False) -> Callable[[str], int]:
    """An argparse ``type`` for a TCP port, 1 to 65535; with ``free_allowed``, 0 too
    (the tool then listens on a free one)."""
    lowest = 0 if free_allowed else 1
    words = "must be from 1 to 65535" + (" (or 0: a free one)" if free_allowed else "")

    def port(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
        if not lowest <= value <= 65535:
            raise argparse.ArgumentTypeError(words)
        return value
    return port
