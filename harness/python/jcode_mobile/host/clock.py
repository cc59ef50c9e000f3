"""Clocks that run the core's timers (``schedule_timer`` / ``cancel_timer``).

Both clocks keep at most one pending timer per ``timer_id``: scheduling an id
that is pending replaces it (the ABI's rule), and a cancelled or replaced
timer never fires.

- :class:`RealClock` fires on the running asyncio loop (``loop.call_later``).
- :class:`VirtualClock` fires nothing until :meth:`VirtualClock.advance`, so a
  test decides when a reconnect backoff has passed.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
from typing import Callable, Dict, List, Optional, Protocol, Tuple

TimerCallback = Callable[[], None]


class Clock(Protocol):
    """What the host needs from a clock."""

    def schedule(self, timer_id: str, after_ms: int, callback: TimerCallback) -> None:
        """Call ``callback()`` once, ``after_ms`` milliseconds from now,
        replacing a pending timer with the same id."""

    def cancel(self, timer_id: str) -> bool:
        """Forget a pending timer; True when there was one."""

    def cancel_all(self) -> None:
        """Forget every pending timer."""


class RealClock:
    """Timers on the asyncio loop that is running when :meth:`schedule` is called.

    ``schedule`` and ``cancel`` must be called on the loop's thread.
    """

    def __init__(self) -> None:
        self._handles: Dict[str, asyncio.TimerHandle] = {}

    def schedule(self, timer_id: str, after_ms: int, callback: TimerCallback) -> None:
        """Fire ``callback()`` after ``after_ms`` ms (negative counts as 0); replaces ``timer_id``."""
        self.cancel(timer_id)
        loop = asyncio.get_running_loop()

        def fire() -> None:
            self._handles.pop(timer_id, None)
            callback()

        self._handles[timer_id] = loop.call_later(max(0, after_ms) / 1000.0, fire)

    def cancel(self, timer_id: str) -> bool:
        """Cancel a pending timer; True when one was pending."""
        handle = self._handles.pop(timer_id, None)
        if handle is None:
            return False
        handle.cancel()
        return True

    def cancel_all(self) -> None:
        """Cancel every pending timer."""
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()

    def pending(self) -> List[str]:
        """The ids of the timers not fired yet."""
        return list(self._handles)


class VirtualClock:
    """A clock that only moves when told to.

    ``now_ms`` starts at ``start_ms``. :meth:`advance` moves it forward and
    fires every timer that falls due on the way, in due order (timers due at
    the same moment fire in the order they were scheduled); a timer scheduled
    by a callback during ``advance`` fires too when it falls due before the
    end of the advance.
    """

    def __init__(self, start_ms: int = 0) -> None:
        self.now_ms: int = start_ms
        self._timers: Dict[str, Tuple[int, int, TimerCallback]] = {}
        self._heap: List[Tuple[int, int, str]] = []
        self._serial = itertools.count()

    def schedule(self, timer_id: str, after_ms: int, callback: TimerCallback) -> None:
        """Due at ``now_ms + after_ms`` (negative counts as 0); replaces ``timer_id``."""
        due = self.now_ms + max(0, int(after_ms))
        serial = next(self._serial)
        self._timers[timer_id] = (due, serial, callback)
        heapq.heappush(self._heap, (due, serial, timer_id))

    def cancel(self, timer_id: str) -> bool:
        """Forget a pending timer; True when one was pending."""
        return self._timers.pop(timer_id, None) is not None

    def cancel_all(self) -> None:
        """Forget every pending timer."""
        self._timers.clear()
        self._heap.clear()

    def pending(self) -> Dict[str, int]:
        """Pending timers: ``{timer_id: due_ms}``."""
        return {timer_id: due for timer_id, (due, _, _) in self._timers.items()}

    def next_due(self) -> Optional[int]:
        """When the next pending timer falls due, or None."""
        self._drop_stale()
        return self._heap[0][0] if self._heap else None

    def advance(self, ms: int) -> List[str]:
        """Move the clock ``ms`` forward, firing what falls due; returns the fired ids in order."""
        if ms < 0:
            raise ValueError("a clock does not go back")
        target = self.now_ms + ms
        fired: List[str] = []
        while True:
            self._drop_stale()
            if not self._heap or self._heap[0][0] > target:
                break
            due, _, timer_id = heapq.heappop(self._heap)
            _, _, callback = self._timers.pop(timer_id)
            self.now_ms = due
            fired.append(timer_id)
            callback()
        self.now_ms = target
        return fired

    def _drop_stale(self) -> None:
        """Pop heap entries of timers that were cancelled or replaced."""
        while self._heap:
            due, serial, timer_id = self._heap[0]
            current = self._timers.get(timer_id)
            if current is not None and current[0] == due and current[1] == serial:
                return
            heapq.heappop(self._heap)
