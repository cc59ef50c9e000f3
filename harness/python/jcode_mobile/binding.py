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
from typing import Any, Callable, Iterator, Optional

from . import library as _library_module
from .library import (  # noqa: F401  (re-exported: the binding's public names)
    EVENT_CALLBACK,
    JcodeMobileError,
    JSONInput,
    _checked,
    _require,
    abi_version,
    encode_input,
    last_error,
    library_path,
    library_versions,
    load_library,
    schema_document,
    set_output_check,
    take_json,
    take_string,
    version,
)

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
    "last_error",
    "schema_document",
]

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
                check = _library_module._output_check
                if check is not None:
                    check("jcode_mobile_subscribe_callback", event)
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
