"""A host that executes the core's effects for real (asyncio + aiohttp).

- :class:`RealHost`: an asyncio host owning an :class:`~jcode_mobile.App`;
  HTTP health/pair, the WebSocket, timers, stores, a scripted device
- :class:`BackgroundHost`: a RealHost on its own loop thread, with a synchronous API
- clocks (:class:`RealClock`, :class:`VirtualClock`), stores
  (:class:`MemorySecureStore`, :class:`FileSecureStore`, :class:`MemoryStorage`,
  :class:`FileStorage`) and the scripted device (:class:`DeviceScript`)
"""

from .clock import Clock, RealClock, VirtualClock
from .device import DeviceScript, new_device_id
from .runtime import BackgroundHost, HostTimeout, RealHost
from .storage import (SNAPSHOT_KEY, FileSecureStore, FileStorage, MemorySecureStore, MemoryStorage, StoreError,
                      restore_options)

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
    "SNAPSHOT_KEY",
    "StoreError",
    "VirtualClock",
    "new_device_id",
    "restore_options",
]
