"""Where the host keeps what the core asks it to keep.

- a *secure store* (the Keychain on iOS) for secrets, written by
  ``secure_store_write`` and read by ``secure_store_read``:
  :class:`MemorySecureStore` and :class:`FileSecureStore`;
- *storage* (UserDefaults / app support) for non-secret JSON values, written by
  ``storage_write``: :class:`MemoryStorage` and :class:`FileStorage`.

The core's snapshot (everything that survives a restart, never a secret)
arrives as ``storage_write {key: "snapshot"}``: storage keeps it under
:data:`SNAPSHOT_KEY` like any other value, and :func:`restore_options` turns
it back into ``app_new`` options.

Every store has ``read(key)``, ``write(key, value)`` and ``delete(key)``. A
store that cannot do what is asked raises :class:`StoreError`; the host turns
that into an ``ok:false`` answer (or a note in its ``errors``) and keeps
running. Error messages name the file and the key, never a stored value.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import threading
from pathlib import Path
from typing import Any, Dict, Optional, Protocol, Union

PathLike = Union[str, "os.PathLike[str]"]

#: The storage key the core writes its snapshot under.
SNAPSHOT_KEY = "snapshot"


class StoreError(Exception):
    """A store could not read or write (bad permissions, unreadable file, full disk…)."""


class SecureStore(Protocol):
    """What the host needs from a secure store (strings only)."""

    def read(self, key: str) -> Optional[str]:
        """The secret under ``key``, None when there is none; raises :class:`StoreError`."""

    def write(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key``; raises :class:`StoreError`."""

    def delete(self, key: str) -> None:
        """Forget ``key`` (nothing happens when it is absent); raises :class:`StoreError`."""


class Storage(Protocol):
    """What the host needs from non-secret storage (JSON values)."""

    def read(self, key: str) -> Any:
        """The value under ``key``, None when there is none; raises :class:`StoreError`."""

    def write(self, key: str, value: Any) -> None:
        """Keep the JSON value under ``key``; raises :class:`StoreError`."""

    def delete(self, key: str) -> None:
        """Forget ``key``; raises :class:`StoreError`."""


# -- in memory --------------------------------------------------------------------


class MemorySecureStore:
    """A secure store in a dict (what tests and demos use)."""

    def __init__(self, initial: Optional[Dict[str, str]] = None) -> None:
        self._items: Dict[str, str] = dict(initial or {})
        self._lock = threading.Lock()

    def read(self, key: str) -> Optional[str]:
        """The secret under ``key`` or None."""
        with self._lock:
            return self._items.get(key)

    def write(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key``."""
        if not isinstance(value, str):
            raise StoreError(f"secure store: the value for {key!r} is not a string")
        with self._lock:
            self._items[key] = value

    def delete(self, key: str) -> None:
        """Forget ``key``."""
        with self._lock:
            self._items.pop(key, None)

    def items(self) -> Dict[str, str]:
        """A copy of everything kept (for tests)."""
        with self._lock:
            return dict(self._items)


class MemoryStorage:
    """Non-secret storage in a dict."""

    def __init__(self, initial: Optional[Dict[str, Any]] = None) -> None:
        self._items: Dict[str, Any] = dict(initial or {})
        self._lock = threading.Lock()

    def read(self, key: str) -> Any:
        """The value under ``key`` or None."""
        with self._lock:
            return self._items.get(key)

    def write(self, key: str, value: Any) -> None:
        """Keep ``value`` under ``key``."""
        with self._lock:
            self._items[key] = value

    def delete(self, key: str) -> None:
        """Forget ``key``."""
        with self._lock:
            self._items.pop(key, None)

    def items(self) -> Dict[str, Any]:
        """A copy of everything kept (for tests)."""
        with self._lock:
            return dict(self._items)


# -- in a file ----------------------------------------------------------------------

#: Flags that keep an open from following a symbolic link someone planted.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def write_private(path: PathLike, data: bytes, mode: int = 0o600) -> None:
    """Replace the file at ``path`` with ``data``, atomically and privately.

    The bytes go to a new temporary file beside it, created with ``mode``
    (0600: only the owner reads it), never an existing file nor through a
    symbolic link (``O_CREAT | O_EXCL | O_NOFOLLOW``, a random name), synced,
    then renamed over ``path``: a symbolic link planted at ``path`` is
    replaced, never followed. Raises OSError."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, mode)
    try:
        try:
            os.fchmod(fd, mode)  # what the umask took off is not put back wider than mode
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise



class _JSONFile:
    """One JSON object in one file, rewritten atomically (temporary file, then rename)."""

    def __init__(self, path: PathLike, *, mode: int, private: bool) -> None:
        self.path = Path(path)
        self.mode = mode
        self.private = private
        self._lock = threading.Lock()

    def load(self) -> Dict[str, Any]:
        """The object in the file; {} when the file does not exist."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return {}
        except OSError as problem:
            raise StoreError(f"{self.path}: cannot open ({problem.strerror})") from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise StoreError(f"{self.path}: not a regular file")
            if self.private and info.st_mode & 0o077:
                raise StoreError(
                    f"{self.path}: permissions {stat.S_IMODE(info.st_mode):04o} are wider than 0600; refusing to read it")
            with os.fdopen(fd, "rb") as handle:
                fd = -1
                raw = handle.read()
        except OSError as problem:
            raise StoreError(f"{self.path}: cannot read ({problem.strerror})") from None
        finally:
            if fd >= 0:
                os.close(fd)
        try:
            data = json.loads(raw.decode("utf-8")) if raw.strip() else {}
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise StoreError(f"{self.path}: not a JSON object") from None
        if not isinstance(data, dict):
            raise StoreError(f"{self.path}: not a JSON object")
        return data

    def save(self, data: Dict[str, Any]) -> None:
        """Write ``data`` with :func:`write_private` (a new temporary file
        created with ``mode``, never through a symbolic link, renamed over the file)."""
        text = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_private(self.path, text.encode("utf-8"), self.mode)
        except OSError as problem:
            raise StoreError(f"{self.path}: cannot write ({problem.strerror})") from None

    def update(self, key: str, value: Any, *, remove: bool = False) -> None:
        """Read, change one key, write back (under the lock)."""
        with self._lock:
            data = self.load()
            if remove:
                if key not in data:
                    return
                del data[key]
            else:
                data[key] = value
            self.save(data)

    def get(self, key: str) -> Any:
        """The value under ``key`` or None."""
        with self._lock:
            return self.load().get(key)


class FileSecureStore:
    """Secrets in one JSON file that only its owner may read (mode 0600).

    The file is created and rewritten atomically with mode 0600. A file whose
    permissions are wider than 0600 is not trusted: reading it (and so
    writing or deleting, which read it first) fails with :class:`StoreError`.
    """

    def __init__(self, path: PathLike) -> None:
        self._file = _JSONFile(path, mode=0o600, private=True)

    @property
    def path(self) -> Path:
        """The file."""
        return self._file.path

    def read(self, key: str) -> Optional[str]:
        """The secret under ``key`` or None."""
        value = self._file.get(key)
        if value is not None and not isinstance(value, str):
            raise StoreError(f"{self.path}: the value for {key!r} is not a string")
        return value

    def write(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key``."""
        if not isinstance(value, str):
            raise StoreError(f"secure store: the value for {key!r} is not a string")
        self._file.update(key, value)

    def delete(self, key: str) -> None:
        """Forget ``key``."""
        self._file.update(key, None, remove=True)


class FileStorage:
    """Non-secret JSON values in one JSON file, rewritten atomically (mode
    0600: the snapshot holds what the person wrote, the draft and unsent
    messages, so only its owner reads it). It is opened without following a
    symbolic link."""

    def __init__(self, path: PathLike) -> None:
        self._file = _JSONFile(path, mode=0o600, private=False)

    @property
    def path(self) -> Path:
        """The file."""
        return self._file.path

    def read(self, key: str) -> Any:
        """The value under ``key`` or None."""
        return self._file.get(key)

    def write(self, key: str, value: Any) -> None:
        """Keep the JSON value under ``key``."""
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            raise StoreError(f"storage: the value for {key!r} is not JSON") from None
        self._file.update(key, value)

    def delete(self, key: str) -> None:
        """Forget ``key``."""
        self._file.update(key, None, remove=True)


def restore_options(storage: "Storage", options: Any = None) -> Any:
    """``app_new`` options that restore the snapshot ``storage`` holds:
    ``options`` (a dict or None) plus ``{"snapshot": …}``. Without a stored
    snapshot, ``options`` unchanged (a first launch). A stored snapshot
    cannot be combined with a ``scenario``: ValueError."""
    stored = storage.read(SNAPSHOT_KEY)
    if stored is None:
        return options
    if options is not None and not isinstance(options, dict):
        raise ValueError("restoring a snapshot needs options as a dict (or None)")
    merged = dict(options or {})
    if "scenario" in merged:
        raise ValueError("a stored snapshot and a scenario cannot be combined: start fresh or drop the scenario")
    merged["snapshot"] = stored
    return merged
