"""The loaded library itself: finding and loading it, the answers it hands
back (copied, freed, parsed, and shown to an output check when one is
installed), its versions and its schema. :mod:`jcode_mobile.binding` builds
the app handle on it; :mod:`jcode_mobile.schema` reads the schema through it,
so neither of those imports the other at load time.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Optional, Union

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


def _require(lib: ctypes.CDLL, name: str, *, since: str = "0.3.0"):
    fn = getattr(lib, name, None)
    if fn is None:
        raise AttributeError(f"the loaded library has no {name} (it is older than {since})")
    return fn


def schema_document(library: Optional[ctypes.CDLL] = None) -> dict:
    """The runtime JSON Schema the loaded library publishes (``jcode_mobile_schema``)."""
    lib = library or load_library()
    return _checked(take_json(lib, _require(lib, "jcode_mobile_schema")()))["schema"]


def _checked(report: dict) -> dict:
    if not isinstance(report, dict) or report.get("ok") is not True:
        raise JcodeMobileError(report)
    return report
