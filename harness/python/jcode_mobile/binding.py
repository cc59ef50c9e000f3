"""ctypes binding of the jcode mobile core (``include/jcode_mobile.h``).

The core speaks JSON over a C ABI. This module hides the ctypes plumbing:
every ``char *`` the library returns is copied, released with
``jcode_mobile_string_free`` and parsed, so callers only see Python dicts.

    from jcode_mobile import App

    with App({"scenario": "connected_chat"}) as app:
        report = app.dispatch({"type": "set_draft", "value": "hi"})
        print(report["revision"], app.state()["draft"])

Errors the library reports (``{"ok":false,"error":{...}}``) become
:class:`JcodeMobileError`; the ``*_raw`` methods return the parsed report
without raising, which is what the ABI tests use.
"""

from __future__ import annotations

import copy
import ctypes
import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Union

__all__ = [
    "JcodeMobileError",
    "App",
    "load_library",
    "library_path",
    "version",
    "abi_version",
    "library_versions",
    "encode_input",
    "find_node",
    "iter_nodes",
    "Subscription",
    "CallbackSubscription",
    "set_output_check",
]

#: What the library accepts as an action, an event or app_new options.
JSONInput = Union[None, dict, list, str, bytes, bytearray]

_ENV_VAR = "JCODE_MOBILE_LIB"
_lock = threading.Lock()
_library: Optional[ctypes.CDLL] = None


class JcodeMobileError(Exception):
    """An error object reported by the library.

    Attributes mirror ``{"ok":false,"error":{"code","message","offset"?,"field"?}}``:
    ``code`` is the stable machine-readable code (``invalid_json``…),
    ``message`` is for people, ``offset`` (a byte offset) and ``field`` (a
    path such as ``"event.text"``) are present for some codes, and
    ``payload`` is the whole parsed JSON object the library returned.
    """

    def __init__(self, payload: dict):
        error = payload.get("error") if isinstance(payload, dict) else None
        if not isinstance(error, dict):
            error = {"code": "internal", "message": f"malformed error object: {payload!r}"}
        self.payload = payload
        self.code: str = error.get("code", "internal")
        self.message: str = error.get("message", "")
        self.offset: Optional[int] = error.get("offset")
        self.field: Optional[str] = error.get("field")
        detail = self.message
        if self.field is not None:
            detail += f" (field {self.field})"
        if self.offset is not None:
            detail += f" (offset {self.offset})"
        super().__init__(f"{self.code}: {detail}")


def library_path() -> Path:
    """Where :func:`load_library` looks, first match wins:

    1. ``$JCODE_MOBILE_LIB``;
    2. ``<repo>/lib/libjcode_mobile.so`` when this package runs from a checkout;
    3. the copy bundled into an installed package (``jcode_mobile/_lib/``,
       made by ``pip install ./harness/python`` after ``make lib``);
    4. ``libjcode_mobile.so.1`` as the dynamic loader finds it (``make install``).
    """
    env = os.environ.get(_ENV_VAR)
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    # jcode_mobile/ -> python/ -> harness/ -> the repository
    in_repo = here.parents[2] / "lib" / "libjcode_mobile.so"
    if in_repo.exists():
        return in_repo
    bundled = here / "_lib" / "libjcode_mobile.so.1"
    if bundled.exists():
        return bundled
    return Path("libjcode_mobile.so.1")


def load_library(path: Union[str, Path, None] = None) -> ctypes.CDLL:
    """Load the library once and declare every function's signature.

    ``path`` overrides :func:`library_path`. Returned ``char *`` are declared
    ``c_void_p`` so they can be handed back to ``jcode_mobile_string_free``.
    """
    global _library
    with _lock:
        if _library is not None and path is None:
            return _library
        target = Path(path) if path is not None else library_path()
        if target.is_absolute() and not target.exists():
            raise OSError(f"{target} not found: run `make lib` in the repository (or set {_ENV_VAR})")
        try:
            lib = ctypes.CDLL(str(target))
        except OSError as problem:
            raise OSError(f"cannot load {target}: {problem} (run `make lib` in the repository, "
                          f"`make install`, or set {_ENV_VAR})") from None
        c_char_p, c_void_p = ctypes.c_char_p, ctypes.c_void_p
        signatures = {
            "jcode_mobile_version": ([], c_char_p),  # static: never freed
            "jcode_mobile_abi_version": ([], ctypes.c_uint32),
            "jcode_mobile_app_new": ([c_char_p], c_void_p),
            "jcode_mobile_last_error": ([], c_void_p),
            "jcode_mobile_app_free": ([c_void_p], None),
            "jcode_mobile_dispatch": ([c_void_p, c_char_p], c_void_p),
            "jcode_mobile_platform_event": ([c_void_p, c_char_p], c_void_p),
            "jcode_mobile_state": ([c_void_p], c_void_p),
            "jcode_mobile_tree": ([c_void_p], c_void_p),
            "jcode_mobile_logs": ([c_void_p, ctypes.c_uint32], c_void_p),
            "jcode_mobile_changes": ([c_void_p, ctypes.c_uint64], c_void_p),
            "jcode_mobile_string_free": ([c_void_p], None),
        }
        #: Functions a library older than the package may lack (library 0.2.0 added them).
        optional = {
            "jcode_mobile_snapshot": ([c_void_p], c_void_p),
            # library 0.3.0: the event stream and the runtime schema
            "jcode_mobile_subscribe": ([c_void_p, c_char_p], c_void_p),
            "jcode_mobile_subscribe_callback": ([c_void_p, c_char_p, EVENT_CALLBACK, c_void_p], c_void_p),
            "jcode_mobile_next_event": ([c_void_p, ctypes.c_int32], c_void_p),
            "jcode_mobile_unsubscribe": ([c_void_p], None),
            "jcode_mobile_schema": ([], c_void_p),
            # library 0.4.0: hit-testing and screenshots
            "jcode_mobile_hit_test": ([c_void_p, ctypes.c_double, ctypes.c_double], c_void_p),
            "jcode_mobile_screenshot_svg": ([c_void_p], c_void_p),
            # library 0.5.0: the tree's operations
            "jcode_mobile_tree_changes": ([c_void_p, ctypes.c_uint64], c_void_p),
        }
        for name, (argtypes, restype) in signatures.items():
            fn = getattr(lib, name)
            fn.argtypes = argtypes
            fn.restype = restype
        for name, (argtypes, restype) in optional.items():
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.argtypes = argtypes
                fn.restype = restype
        _watch_answers(lib)
        if path is None:
            _library = lib
        return lib


#: ``void (*)(void *user_data, const char *event_json)``
EVENT_CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)

#: The library functions whose ``char *`` answers the output check sees, by name.
_ANSWERING = (
    "jcode_mobile_last_error", "jcode_mobile_dispatch", "jcode_mobile_platform_event", "jcode_mobile_state",
    "jcode_mobile_tree", "jcode_mobile_logs", "jcode_mobile_changes", "jcode_mobile_snapshot",
    "jcode_mobile_next_event", "jcode_mobile_schema", "jcode_mobile_hit_test", "jcode_mobile_screenshot_svg",
    "jcode_mobile_tree_changes",
)
#: answer pointer -> the function that returned it, while an output check is installed.
_answer_origin: dict = {}
#: ``check(function_name, parsed_answer)``, or None (see :func:`set_output_check`).
_output_check: Optional[Callable[[str, Any], None]] = None


def set_output_check(check: Optional[Callable[[str, Any], None]]) -> Optional[Callable[[str, Any], None]]:
    """Install ``check(function_name, answer)``, called with every JSON answer
    the library returns through this module (before the caller sees it), or
    None to remove it; returns the previous one. The test suite installs a
    JSON Schema validator here (:mod:`jcode_mobile.schema`)."""
    global _output_check
    previous, _output_check = _output_check, check
    return previous


class _Answering:
    """A library function that notes which function returned each answer."""

    def __init__(self, name: str, fn):
        self.__name__ = name
        self._fn = fn

    @property
    def argtypes(self):
        return self._fn.argtypes

    @property
    def restype(self):
        return self._fn.restype

    def __call__(self, *args):
        ptr = self._fn(*args)
        if ptr and _output_check is not None:
            _answer_origin[ptr] = self.__name__
        return ptr


def _watch_answers(lib: ctypes.CDLL) -> None:
    for name in _ANSWERING:
        fn = getattr(lib, name, None)
        if fn is not None and not isinstance(fn, _Answering):
            setattr(lib, name, _Answering(name, fn))


def take_string(lib: ctypes.CDLL, ptr: Optional[int]) -> bytes:
    """Copy a caller-owned ``char *`` returned by the library, then free it."""
    if not ptr:
        raise MemoryError("the library returned NULL (out of memory)")
    origin = _answer_origin.pop(ptr, None)
    try:
        text = ctypes.string_at(ptr)
    finally:
        lib.jcode_mobile_string_free(ptr)
    if origin is not None and _output_check is not None:
        _output_check(origin, json.loads(text.decode("utf-8")))
    return text


def take_json(lib: ctypes.CDLL, ptr: Optional[int]) -> dict:
    """Copy, free and parse a returned JSON object (strict UTF-8)."""
    return json.loads(take_string(lib, ptr).decode("utf-8"))


def encode_input(value: JSONInput) -> Optional[bytes]:
    """The bytes passed to the library: dicts/lists are JSON-encoded, str is
    UTF-8 encoded, bytes pass through untouched (so tests can send invalid
    UTF-8), None stays None (a NULL pointer)."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def version() -> str:
    """The loaded library's version string, e.g. ``"0.1.0"``."""
    return load_library().jcode_mobile_version().decode("utf-8")


def abi_version() -> int:
    """The loaded library's ABI version."""
    return int(load_library().jcode_mobile_abi_version())


def library_versions(library: Optional[ctypes.CDLL] = None) -> dict:
    """``{"version": …, "abi_version": …}`` of ``library`` (default: the loaded one)."""
    lib = library or load_library()
    return {"version": lib.jcode_mobile_version().decode("utf-8"), "abi_version": int(lib.jcode_mobile_abi_version())}


def last_error() -> dict:
    """The parsed ``jcode_mobile_last_error()`` of the calling thread."""
    lib = load_library()
    return take_json(lib, lib.jcode_mobile_last_error())


class App:
    """One app handle. Use as a context manager, or call :meth:`close`.

    ``options`` is what ``jcode_mobile_app_new`` takes: None (first launch),
    a dict such as ``{"scenario": "connected_chat", "log_capacity": 64}``
    (JSON-encoded), or a str/bytes passed as is. Raises
    :class:`JcodeMobileError` (built from ``jcode_mobile_last_error``) when
    the library refuses the options.

    After :meth:`close` the handle is kept, so later calls reach the library
    and come back as ``invalid_handle`` errors, as the ABI promises.

    ``options`` stays readable as :attr:`options` (a copy), so a recorder can
    note what the app was created with (see :mod:`jcode_mobile.trace`).
    """

    def __init__(self, options: JSONInput = None, *, library: Optional[ctypes.CDLL] = None):
        self._lib = library or load_library()
        #: The options this app was created with (a deep copy of a dict or list).
        self.options: JSONInput = copy.deepcopy(options) if isinstance(options, (dict, list)) else options
        self._closed = True
        handle = self._lib.jcode_mobile_app_new(encode_input(options))
        if not handle:
            raise JcodeMobileError(take_json(self._lib, self._lib.jcode_mobile_last_error()))
        self._handle: int = handle
        self._closed = False

    # -- lifetime ---------------------------------------------------------

    @property
    def handle(self) -> int:
        """The opaque handle (a number), for tests that call the C functions directly."""
        return self._handle

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def library(self) -> ctypes.CDLL:
        """The loaded library this app calls (for its version, see :func:`library_versions`)."""
        return self._lib

    def close(self) -> None:
        """Free the handle. Calling it again does nothing."""
        if not self._closed:
            self._closed = True
            self._lib.jcode_mobile_app_free(self._handle)

    def __enter__(self) -> "App":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone
            pass

    # -- inputs -----------------------------------------------------------

    def dispatch_raw(self, action: JSONInput) -> dict:
        """``jcode_mobile_dispatch``; returns the parsed report, ok or not."""
        return take_json(self._lib, self._lib.jcode_mobile_dispatch(self._handle, encode_input(action)))

    def platform_event_raw(self, event: JSONInput) -> dict:
        """``jcode_mobile_platform_event``; returns the parsed report, ok or not."""
        return take_json(self._lib, self._lib.jcode_mobile_platform_event(self._handle, encode_input(event)))

    def dispatch(self, action: JSONInput) -> dict:
        """Dispatch an action; returns ``{"ok":true,"revision":N,"effects":[…]}``
        or raises :class:`JcodeMobileError`."""
        return _checked(self.dispatch_raw(action))

    def platform_event(self, event: JSONInput) -> dict:
        """Report a platform event; returns the dispatch report or raises."""
        return _checked(self.platform_event_raw(event))

    # -- outputs ----------------------------------------------------------

    def state_raw(self) -> dict:
        return take_json(self._lib, self._lib.jcode_mobile_state(self._handle))

    def tree_bytes(self) -> bytes:
        """``jcode_mobile_tree``'s answer as the library wrote it (for measuring its size)."""
        return take_string(self._lib, self._lib.jcode_mobile_tree(self._handle))

    def tree_raw(self) -> dict:
        return json.loads(self.tree_bytes().decode("utf-8"))

    def logs_raw(self, limit: int = 0) -> dict:
        return take_json(self._lib, self._lib.jcode_mobile_logs(self._handle, limit))

    def changes_bytes(self, since: int) -> bytes:
        """The change feed's answer as the library wrote it (for measuring its size)."""
        return take_string(self._lib, self._lib.jcode_mobile_changes(self._handle, since))

    def changes_raw(self, since: int) -> dict:
        return json.loads(self.changes_bytes(since).decode("utf-8"))

    def snapshot_raw(self) -> dict:
        """``jcode_mobile_snapshot``; the parsed answer, ok or not."""
        fn = getattr(self._lib, "jcode_mobile_snapshot", None)
        if fn is None:
            raise AttributeError("the loaded library has no jcode_mobile_snapshot (it is older than 0.2.0)")
        return take_json(self._lib, fn(self._handle))

    def snapshot(self) -> dict:
        """What the app would persist now (the ``snapshot`` member of
        ``jcode_mobile_snapshot``): pass it back as ``App({"snapshot": …})``
        at the next launch. Raises :class:`JcodeMobileError` (``invalid_handle``
        after :meth:`close`)."""
        return _checked(self.snapshot_raw())["snapshot"]

    def changes(self, since: int) -> dict:
        """What changed after revision ``since``: ``{"revision","since","changes":[{"revision","ops"}]}``,
        or ``{"revision","since","resync":true,"state"}`` when the feed cannot say."""
        return _checked(self.changes_raw(since))

    def tree_changes_bytes(self, since: int) -> bytes:
        """``jcode_mobile_tree_changes``'s answer as the library wrote it (for measuring its size)."""
        fn = _require(self._lib, "jcode_mobile_tree_changes", since="0.5.0")
        return take_string(self._lib, fn(self._handle, since))

    def tree_changes_raw(self, since: int) -> dict:
        """``jcode_mobile_tree_changes``; the parsed answer, ok or not."""
        return json.loads(self.tree_changes_bytes(since).decode("utf-8"))

    def tree_changes(self, since: int) -> dict:
        """What changed in the tree after revision ``since`` (the revision of a
        tree the caller holds: from :meth:`tree_raw` or an earlier answer):
        ``{"revision","since","ops":[…]}`` (operations keyed by node id:
        ``splice``, ``move``, ``update``, ``append``; empty when ``since`` is
        current), or ``{"revision","since","resync":true,"tree"}`` when the
        library cannot describe the way from ``since``.
        :class:`jcode_mobile.tree_mirror.TreeMirror` applies them. Raises
        :class:`JcodeMobileError` (``invalid_field`` for a ``since`` after the
        current revision) and AttributeError with a library older than 0.5.0."""
        return _checked(self.tree_changes_raw(since))

    def state(self) -> dict:
        """The domain state (the ``state`` member of ``jcode_mobile_state``)."""
        return _checked(self.state_raw())["state"]

    def tree(self) -> dict:
        """The root node of the semantic UI tree."""
        return _checked(self.tree_raw())["tree"]

    def logs(self, limit: int = 0) -> dict:
        """``{"ok","capacity","next_seq","entries"}``; ``limit`` 0 returns all kept."""
        return _checked(self.logs_raw(limit))

    # -- the laid-out screen (library 0.4.0) -------------------------------

    def hit_test_raw(self, x: float, y: float) -> dict:
        """``jcode_mobile_hit_test``; the parsed answer, ok or not."""
        fn = _require(self._lib, "jcode_mobile_hit_test", since="0.4.0")
        return take_json(self._lib, fn(self._handle, float(x), float(y)))

    def hit_test(self, x: float, y: float) -> dict:
        """What is at the point (``x``, ``y``) of the viewport, in points from
        its top-left corner, as the core's layout placed it (the message list
        scrolled as it is). Returns the whole answer,
        ``{"ok":true,"revision","node","path","tap_target"}``: ``node`` is the
        deepest visible node there (without its children; None outside the
        viewport), ``path`` the ids from ``"root"`` down to it, ``tap_target``
        the node ``app.actions.tap_xy(x=…, y=…)`` would tap (or None). Raises
        :class:`JcodeMobileError` (``invalid_field`` for a NaN or infinite
        coordinate) and AttributeError with a library older than 0.4.0."""
        return _checked(self.hit_test_raw(x, y))

    def screenshot_raw(self) -> dict:
        """``jcode_mobile_screenshot_svg``; the parsed answer, ok or not."""
        fn = _require(self._lib, "jcode_mobile_screenshot_svg", since="0.4.0")
        return take_json(self._lib, fn(self._handle))

    def screenshot(self) -> dict:
        """The current screen as the core draws it:
        ``{"ok":true,"revision","format":"svg","width","height","svg"}``
        (``width`` × ``height`` in points, the viewport). Raises like
        :meth:`hit_test`."""
        return _checked(self.screenshot_raw())

    def screenshot_svg(self) -> str:
        """The SVG document of the current screen (the ``svg`` member of
        :meth:`screenshot`): the same bytes for the same screen on every
        machine; :mod:`jcode_mobile.picture` turns it into a PNG and compares
        two of them."""
        return self.screenshot()["svg"]

    def screenshot_png(self, scale: float = 1.0) -> bytes:
        """The current screen as PNG bytes, ``scale`` pixels per point
        (needs cairosvg and the DejaVu Sans Mono font; see
        :func:`jcode_mobile.picture.svg_to_png`)."""
        from .picture import svg_to_png
        return svg_to_png(self.screenshot_svg(), scale=scale)

    @property
    def revision(self) -> int:
        """The state's current revision."""
        return _checked(self.tree_raw())["revision"]

    # -- typed helpers from the runtime schema (library 0.3.0) --------------

    @property
    def actions(self):
        """Every action the loaded library accepts, as a typed method built
        from its schema at run time: ``app.actions.set_draft(value="hi")``
        dispatches and returns the report (see :mod:`jcode_mobile.schema`)."""
        ops = self.__dict__.get("_actions")
        if ops is None:
            from .schema import Operations
            ops = self.__dict__["_actions"] = Operations("action", self.dispatch)
        return ops

    @property
    def platform(self):
        """Every platform event, likewise: ``app.platform.websocket_opened(effect_id=3)``."""
        ops = self.__dict__.get("_platform")
        if ops is None:
            from .schema import Operations
            ops = self.__dict__["_platform"] = Operations("platform_event", self.platform_event)
        return ops

    # -- the event stream (library 0.3.0) ----------------------------------

    def subscribe(self, *, kinds: Optional[list] = None, capacity: Optional[int] = None,
                  capacity_bytes: Optional[int] = None,
                  options: JSONInput = None, timeout: Optional[float] = 1.0) -> "Subscription":
        """A new subscription to this app's event stream (``jcode_mobile_subscribe``).

        ``kinds`` (any of ``"state"``, ``"effects"``, ``"app"`` and, library
        0.5.0, ``"tree"``: ``tree_changed`` with the tree's operations; default
        ``["state", "effects", "app"]``: ``"tree"`` is asked for by name) and
        ``capacity`` (events kept until taken, default 1024) and, library 0.5.0,
        ``capacity_bytes`` (bytes of them kept, default 16 MiB) build the options;
        ``options`` passes them as is instead (for tests of bad options).
        ``timeout`` is how long iterating waits for the next event (None: no limit).
        Raises :class:`JcodeMobileError` when the library refuses."""
        if options is None:
            options = {}
            if kinds is not None:
                options["kinds"] = list(kinds)
            if capacity is not None:
                options["capacity"] = capacity
            if capacity_bytes is not None:
                options["capacity_bytes"] = capacity_bytes
        return Subscription(self, options, timeout=timeout)

    def events(self, timeout: Optional[float] = 1.0, *, kinds: Optional[list] = None,
               capacity: Optional[int] = None) -> "Subscription":
        """An iterator over the app's events from now on: each ``next()`` waits
        up to ``timeout`` seconds (None: no limit) and the iteration ends when
        none came in that time or the stream closed. Subscribes at once, so no
        event after this call is missed; use it as a context manager (or call
        ``close()``) to unsubscribe.

            with app.events(timeout=2.0, kinds=["app"]) as events:
                app.dispatch({"type": "submit_pairing"})
                for event in events:
                    if event["type"] == "server_paired":
                        break
        """
        return self.subscribe(kinds=kinds, capacity=capacity, timeout=timeout)

    def on_event(self, callback: Callable[[dict], None], *, kinds: Optional[list] = None,
                 capacity: Optional[int] = None) -> "CallbackSubscription":
        """Call ``callback(event)`` for every event (``jcode_mobile_subscribe_callback``):
        on a thread that is calling into the library on this app, after its
        work, in order, never twice at once. ``close()`` the result to stop."""
        options: dict = {}
        if kinds is not None:
            options["kinds"] = list(kinds)
        if capacity is not None:
            options["capacity"] = capacity
        return CallbackSubscription(self, options, callback)


def _require(lib: ctypes.CDLL, name: str, *, since: str = "0.3.0"):
    fn = getattr(lib, name, None)
    if fn is None:
        raise AttributeError(f"the loaded library has no {name} (it is older than {since})")
    return fn


#: The longest wait next_event takes (its timeout is an int32 of milliseconds).
_MAX_WAIT_MS = 2**31 - 1


class Subscription:
    """One subscription to an app's event stream: :meth:`next` waits for the
    next event; iterating yields events until one does not come within
    ``timeout`` seconds or the stream is closed. Close it (or use ``with``) to
    unsubscribe; the handle is released then, even after the app was freed."""

    def __init__(self, app: App, options: JSONInput, *, timeout: Optional[float] = 1.0):
        self._lib = app.library
        self.timeout = timeout
        self._closed = True
        handle = _require(self._lib, "jcode_mobile_subscribe")(app.handle, encode_input(options))
        if not handle:
            raise JcodeMobileError(take_json(self._lib, self._lib.jcode_mobile_last_error()))
        self._handle: int = handle
        self._closed = False

    @property
    def handle(self) -> int:
        return self._handle

    def next_raw(self, timeout_ms: int) -> dict:
        """``jcode_mobile_next_event``: the parsed answer, ok or not."""
        return take_json(self._lib, self._lib.jcode_mobile_next_event(self._handle, timeout_ms))

    def next(self, timeout: Optional[float] = None) -> Optional[dict]:
        """The next event, waiting up to ``timeout`` seconds (None: no limit,
        0: not at all); None when none came in time. After the stream closed
        it answers the ``closed`` event again; after :meth:`close` it raises
        :class:`JcodeMobileError` (``invalid_handle``)."""
        if timeout is None:
            ms = -1
        else:
            ms = min(_MAX_WAIT_MS, max(0, int(round(timeout * 1000))))
        return _checked(self.next_raw(ms))["event"]

    def __iter__(self) -> "Subscription":
        return self

    def __next__(self) -> dict:
        if self._closed:
            raise StopIteration
        event = self.next(self.timeout)
        if event is None or event.get("type") == "closed":
            raise StopIteration
        return event

    def close(self) -> None:
        """Unsubscribe (``jcode_mobile_unsubscribe``); a waiter gets ``closed``. Idempotent."""
        if not self._closed:
            self._closed = True
            self._lib.jcode_mobile_unsubscribe(self._handle)

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


class CallbackSubscription:
    """A subscription whose events go to a Python callable (see :meth:`App.on_event`).

    The callable gets each event as a dict. An exception it raises is kept
    in :attr:`errors` (it cannot cross the C boundary) and the stream goes on."""

    def __init__(self, app: App, options: JSONInput, callback: Callable[[dict], None]):
        self._lib = app.library
        self._callback = callback
        self.errors: list = []
        self._closed = True

        def deliver(_user_data, event_json):
            try:
                event = json.loads(ctypes.string_at(event_json).decode("utf-8"))
                if _output_check is not None:
                    _output_check("jcode_mobile_subscribe_callback", event)
                callback(event)
            except BaseException as problem:  # noqa: BLE001 - nothing may unwind into C
                self.errors.append(problem)

        # Kept on the object: the C side calls it until close() returns.
        self._trampoline = EVENT_CALLBACK(deliver)
        handle = _require(self._lib, "jcode_mobile_subscribe_callback")(
            app.handle, encode_input(options), self._trampoline, None)
        if not handle:
            raise JcodeMobileError(take_json(self._lib, self._lib.jcode_mobile_last_error()))
        self._handle: int = handle
        self._closed = False

    @property
    def handle(self) -> int:
        return self._handle

    def close(self) -> None:
        """Unsubscribe: once this returns the callable is not called again. Idempotent."""
        if not self._closed:
            self._closed = True
            self._lib.jcode_mobile_unsubscribe(self._handle)

    def __enter__(self) -> "CallbackSubscription":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def schema_document(library: Optional[ctypes.CDLL] = None) -> dict:
    """The runtime JSON Schema the loaded library publishes (``jcode_mobile_schema``)."""
    lib = library or load_library()
    return _checked(take_json(lib, _require(lib, "jcode_mobile_schema")()))["schema"]


def _checked(report: dict) -> dict:
    if not isinstance(report, dict) or report.get("ok") is not True:
        raise JcodeMobileError(report)
    return report


# -- the semantic tree --------------------------------------------------------


def _root(tree: dict) -> dict:
    """Accept either a root node or a whole ``jcode_mobile_tree`` response."""
    if "id" not in tree and isinstance(tree.get("tree"), dict):
        return tree["tree"]
    return tree


def iter_nodes(tree: dict, *, visible_only: bool = False) -> Iterator[dict]:
    """Every node of the tree, depth-first, parents before children.

    With ``visible_only`` a hidden node and its whole subtree are skipped
    (a node is shown only when it and all its ancestors are visible).
    """
    stack = [_root(tree)]
    while stack:
        node = stack.pop()
        if visible_only and not node.get("visible", True):
            continue
        yield node
        stack.extend(reversed(node.get("children") or []))


def find_node(tree: dict, node_id: str) -> Optional[dict]:
    """The node with ``id == node_id`` (first depth-first), or None."""
    for node in iter_nodes(tree):
        if node.get("id") == node_id:
            return node
    return None


class _CheckFromEnvironment:
    """The output check ``JCODE_MOBILE_CHECK_OUTPUTS=1`` installs: a
    :class:`jcode_mobile.schema.OutputCheck`, made on the first answer (so
    importing this module loads nothing). The test suite sets the variable,
    so the simulator and CLI processes it starts check their answers too."""

    def __init__(self) -> None:
        self._check = None
        self._making = threading.local()

    def __call__(self, function: str, answer: Any) -> None:
        if getattr(self._making, "busy", False):
            return  # the schema's own answer, fetched while making the check
        if self._check is None:
            self._making.busy = True
            try:
                from .schema import OutputCheck
                self._check = OutputCheck()
            finally:
                self._making.busy = False
        self._check(function, answer)


if os.environ.get("JCODE_MOBILE_CHECK_OUTPUTS") == "1":
    set_output_check(_CheckFromEnvironment())
