"""The Python binding's overhead per call (``make bench`` runs it after the C
benchmark): the same text delta through the bare ctypes call, through
``App.platform_event_raw`` (bytes in, parsed report out) and through
``App.platform_event`` (a dict in: encode, call, decode, check).

Medians of many rounds; compare the ratios, not absolute numbers from
different runs: these machines are shared and noisy.
"""

from __future__ import annotations

import json
import statistics
import time

from .binding import App

EVENT = {"type": "websocket_event", "event": {"type": "text_delta", "text": "hello "}}
EVENT_BYTES = json.dumps(EVENT, separators=(",", ":")).encode()


def median_ns(call, rounds: int = 31, batch: int = 2000) -> float:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(batch):
            call()
        samples.append((time.perf_counter_ns() - start) / batch)
    return statistics.median(samples)


def main() -> None:
    with App({"scenario": "connected_chat"}) as app:
        app.dispatch({"type": "send_message", "text": "go"})
        lib, handle = app._lib, app.handle

        def bare():
            lib.jcode_mobile_string_free(lib.jcode_mobile_platform_event(handle, EVENT_BYTES))

        bare_ns = median_ns(bare)
        raw_ns = median_ns(lambda: app.platform_event_raw(EVENT_BYTES))
        full_ns = median_ns(lambda: app.platform_event(EVENT))

    print("Python binding, platform_event(text_delta), medians of 31 rounds of 2000 calls")
    print(f"  bare ctypes call (bytes in, string freed)   {bare_ns / 1000:8.2f} µs")
    print(f"  App.platform_event_raw (bytes in, dict out)  {raw_ns / 1000:8.2f} µs   (+{(raw_ns - bare_ns) / 1000:.2f} µs)")
    print(f"  App.platform_event (dict in, dict out)       {full_ns / 1000:8.2f} µs   (+{(full_ns - bare_ns) / 1000:.2f} µs)")


if __name__ == "__main__":
    main()
