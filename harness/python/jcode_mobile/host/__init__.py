"""A host that executes the core's effects for real (asyncio + aiohttp).

- :class:`RealHost`: an asyncio host owning an :class:`~jcode_mobile.App`;
  HTTP health/pair, the WebSocket, timers, stores, a scripted device
- :class:`BackgroundHost`: a RealHost on its own loop thread, with a synchronous API
- clocks (:class:`RealClock`, :class:`VirtualClock`), stores
  (:class:`MemorySecureStore`, :class:`FileSecureStore`, :class:`MemoryStorage`,
  :class:`FileStorage`) and the scripted device (:class:`DeviceScript`)
"""

from .clock import Clock, RealClock, VirtualClock
from .device import DeviceScript
from .runtime import BackgroundHost, HostTimeout, RealHost
from .storage import FileSecureStore, FileStorage, MemorySecureStore, MemoryStorage, StoreError

__all__ = [
    "BackgroundHost",
    "Clock",
    "DeviceScript",
    "FileSecureStore",
    "FileStorage",
    "HostTimeout",
    "MemorySecureStore",
    "MemoryStorage",
    "RealClock",
    "RealHost",
    "StoreError",
    "VirtualClock",
]
