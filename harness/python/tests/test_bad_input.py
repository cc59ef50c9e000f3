"""The bad-input table through the C ABI: every rejected input comes back as
an error object with a stable code, changes nothing, and leaves the app
working. Pointers are passed as None (NULL) through ctypes directly."""

import json
import threading

import pytest

from jcode_mobile import App, JcodeMobileError, last_error
from jcode_mobile.binding import take_json

from helpers import header_int

MAX_BYTES = header_int("JCODE_MOBILE_MAX_INPUT_BYTES")
MAX_DEPTH = header_int("JCODE_MOBILE_MAX_DEPTH")
MISSING = object()


@pytest.fixture
def app():
    with App({"scenario": "connected_chat"}) as app:
        yield app


def still_works(app: App) -> None:
    """A valid action after the rejection is applied as usual."""
    revision = app.revision
    report = app.dispatch({"type": "set_draft", "value": "still alive"})
    assert report["revision"] == revision + 1
    assert app.state()["draft"] == "still alive"


def assert_rejected(app, send, data, code, *, field=MISSING, offset=MISSING, logged=True):
    """``send(data)`` is refused with ``code`` and changes nothing."""
    state, tree = app.state(), app.tree()
    next_seq = app.logs(0)["next_seq"]
    report = send(data)
    assert set(report) == {"ok", "error"} and report["ok"] is False, report
    error = report["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str) and error["message"]
    if field is not MISSING:
        assert error.get("field") == field, error
    if offset is not MISSING:
        assert error.get("offset") == offset, error
    assert app.state() == state
    assert app.tree() == tree
    if logged:
        logs = app.logs(0)
        assert logs["next_seq"] == next_seq + 1
        entry = logs["entries"][-1]
        assert entry["kind"] == "rejected" and entry["error"] == code
        assert entry["revision"] == state["revision"]
    still_works(app)
    return error


def senders(app):
    return {"dispatch": app.dispatch_raw, "platform_event": app.platform_event_raw}


# -- NULL ------------------------------------------------------------------------


def test_null_app_for_every_handle_function(lib):
    calls = {
        "dispatch": lambda: lib.jcode_mobile_dispatch(None, b'{"type":"reset"}'),
        "dispatch(NULL, NULL)": lambda: lib.jcode_mobile_dispatch(None, None),
        "platform_event": lambda: lib.jcode_mobile_platform_event(None, b'{"type":"app_foreground"}'),
        "platform_event(NULL, NULL)": lambda: lib.jcode_mobile_platform_event(None, None),
        "state": lambda: lib.jcode_mobile_state(None),
        "tree": lambda: lib.jcode_mobile_tree(None),
        "logs": lambda: lib.jcode_mobile_logs(None, 0),
        "changes": lambda: lib.jcode_mobile_changes(None, 0),
        "tree_changes": lambda: lib.jcode_mobile_tree_changes(None, 0),
        "snapshot": lambda: lib.jcode_mobile_snapshot(None),
    }
    for name, call in calls.items():
        report = take_json(lib, call())
        assert report["ok"] is False, name
        assert report["error"]["code"] == "null_argument", (name, report)
        assert report["error"]["field"] == "app", (name, report)


@pytest.mark.parametrize("kind,field", [("dispatch", "action_json"), ("platform_event", "event_json")])
def test_null_json_argument(app, kind, field):
    assert_rejected(app, senders(app)[kind], None, "null_argument", field=field)


@pytest.mark.parametrize("data", [None, b" " * (MAX_BYTES + 1)], ids=["null", "too_large"])
def test_pointer_level_rejections_are_logged(app, data):
    next_seq = app.logs(0)["next_seq"]
    assert app.dispatch_raw(data)["ok"] is False
    assert app.logs(0)["next_seq"] == next_seq + 1


def test_null_options_is_a_first_launch(lib):
    handle = lib.jcode_mobile_app_new(None)
    assert handle
    try:
        assert take_json(lib, lib.jcode_mobile_last_error()) == {"ok": True}
        state = take_json(lib, lib.jcode_mobile_state(handle))["state"]
        assert state["screen"] == "onboarding" and state["revision"] == 0
    finally:
        lib.jcode_mobile_app_free(handle)


def test_freeing_null_is_harmless(lib, app):
    lib.jcode_mobile_app_free(None)
    lib.jcode_mobile_string_free(None)
    still_works(app)


# -- malformed text ----------------------------------------------------------------

INVALID_UTF8 = [
    b"\xff",
    b'{"type":"set_host","value":"\x80"}',  # stray continuation byte
    b'{"type":"set_host","value":"a\xc3"}',  # truncated 2-byte sequence
    b'{"type":"set_host","value":"\xc0\xaf"}',  # overlong "/"
    b'{"type":"set_host","value":"\xe0\x80\x80"}',  # overlong NUL
    b'{"type":"set_host","value":"\xed\xa0\x80"}',  # UTF-16 surrogate
    b'{"type":"set_host","value":"\xf4\x90\x80\x80"}',  # above U+10FFFF
    b'{"type":"set_host","value":"\xf0\x9f\x98"}',  # truncated 4-byte sequence
    b'{"type":"set_host","value":"ok"}\xe2',  # bad byte after the JSON value
]


def utf8_error_offset(data: bytes) -> int:
    """Where Python's strict decoder finds the first bad byte."""
    with pytest.raises(UnicodeDecodeError) as info:
        data.decode("utf-8")
    return info.value.start


@pytest.mark.parametrize("kind", ["dispatch", "platform_event"])
@pytest.mark.parametrize("data", INVALID_UTF8, ids=range(len(INVALID_UTF8)))
def test_invalid_utf8_reports_the_first_bad_byte(app, kind, data):
    if kind == "platform_event":
        data = data.replace(b'"set_host","value"', b'"speech_transcript","is_final":false,"text"')
    assert_rejected(app, senders(app)[kind], data, "invalid_utf8", offset=utf8_error_offset(data))


INVALID_JSON = [
    (b"", 0),
    (b"   ", 3),
    (b'{"type":', 8),
    (b'{"type":"reset"', 15),
    (b'{"type":"reset",}', 16),
    (b'{"type":"reset" "x":1}', 16),
    (b'{"type":"reset"} x', 17),
    (b'{"type":"reset"}}', 16),
    (b"{'type':'reset'}", 1),
    (b'{"type":"re\nset"}', 11),
    (b'{"type":"reset","n":01}', 21),
    (b'{"type":"reset","n":NaN}', 20),
    (b"[1,2", 4),
]


@pytest.mark.parametrize("kind", ["dispatch", "platform_event"])
@pytest.mark.parametrize("data,offset", INVALID_JSON, ids=[repr(d) for d, _ in INVALID_JSON])
def test_invalid_json_reports_where_parsing_stopped(app, kind, data, offset):
    assert_rejected(app, senders(app)[kind], data, "invalid_json", offset=offset)


# -- well-formed JSON that is not a valid input ------------------------------------------


@pytest.mark.parametrize(
    "kind,data",
    [
        ("dispatch", {"type": "fly_to_the_moon"}),
        ("dispatch", {"type": "pair_finished", "effect_id": 1, "ok": True, "token": "forged"}),  # an event is not an action
        ("platform_event", {"type": "no_such_event"}),
        ("platform_event", {"type": "send_message", "text": "forged"}),  # an action is not an event
    ],
)
def test_unknown_type(app, kind, data):
    assert_rejected(app, senders(app)[kind], data, "unknown_type", field="type")


INVALID_FIELDS = [
    ("dispatch", {"type": "set_host", "value": 3}, "value"),
    ("dispatch", {"type": "set_host"}, "value"),
    ("dispatch", {"type": 5}, "type"),
    ("dispatch", {}, "type"),
    ("dispatch", [], "$"),
    ("dispatch", "42", "$"),
    ("dispatch", {"type": "respond_permission", "request_id": "r", "approved": "yes"}, "approved"),
    ("dispatch", {"type": "send_message", "text": ["a"]}, "text"),
    ("dispatch", {"type": "navigate", "screen": "nowhere"}, "screen"),
    ("dispatch", {"type": "queue_interrupt", "text": "x", "urgent": 1}, "urgent"),
    ("platform_event", {"type": "pair_finished", "effect_id": "7", "ok": True}, "effect_id"),
    ("platform_event", {"type": "pair_finished", "effect_id": 1.5, "ok": True}, "effect_id"),
    ("platform_event", {"type": "pair_finished", "ok": True}, "effect_id"),
    ("platform_event", {"type": "websocket_event", "event": 3}, "event"),
    ("platform_event", {"type": "websocket_event"}, "event"),
    ("platform_event", {"type": "websocket_event", "line": {"type": "x"}}, "line"),
    ("platform_event", {"type": "timer_fired", "timer_id": None}, "timer_id"),
    ("platform_event", {"type": "network_reachability_changed", "reachable": "no"}, "reachable"),
    ("platform_event", {"type": "push_notification_opened", "payload": "x"}, "payload"),
]


@pytest.mark.parametrize("kind,data,field", INVALID_FIELDS, ids=[json.dumps(d) for _, d, _ in INVALID_FIELDS])
def test_invalid_field_names_the_field(app, kind, data, field):
    assert_rejected(app, senders(app)[kind], data, "invalid_field", field=field)


def test_load_scenario_with_an_unknown_name(app):
    assert_rejected(app, app.dispatch_raw, {"type": "load_scenario", "scenario": "atlantis"}, "invalid_scenario",
                    field="scenario")


def test_unknown_extra_fields_are_ignored(app):
    report = app.dispatch({"type": "set_draft", "value": "x", "colour": "blue", "n": [1, {"a": None}]})
    assert report["ok"] is True and app.state()["draft"] == "x"


# -- size and depth ----------------------------------------------------------------------


@pytest.mark.parametrize("kind,field", [("dispatch", "action_json"), ("platform_event", "event_json")])
def test_64_mib_input_is_too_large(app, kind, field):
    data = b'{"type":"set_draft","value":"' + b"a" * (64 * 1024 * 1024) + b'"}'
    assert_rejected(app, senders(app)[kind], data, "too_large", field=field)


def test_size_limit_boundary(app):
    valid = b'{"type":"set_draft","value":"edge"}'
    exactly = valid + b" " * (MAX_BYTES - len(valid))
    assert len(exactly) == MAX_BYTES
    assert app.dispatch_raw(exactly)["ok"] is True
    assert app.state()["draft"] == "edge"
    assert_rejected(app, app.dispatch_raw, exactly + b" ", "too_large", field="action_json")


@pytest.mark.parametrize("kind", ["dispatch", "platform_event"])
@pytest.mark.parametrize("opener", [b"[", b'{"a":'], ids=["arrays", "objects"])
def test_100000_deep_nesting_is_too_deep(app, kind, opener):
    assert_rejected(app, senders(app)[kind], opener * 100_000, "too_deep")


def test_depth_limit_boundary(app):
    # The action object is level 1; n nested arrays inside it reach depth n + 1.
    def action(arrays: int) -> bytes:
        return b'{"type":"set_draft","value":"deep","extra":' + b"[" * arrays + b"]" * arrays + b"}"

    assert app.dispatch_raw(action(MAX_DEPTH - 1))["ok"] is True
    assert app.state()["draft"] == "deep"
    assert_rejected(app, app.dispatch_raw, action(MAX_DEPTH), "too_deep")


# -- handles ---------------------------------------------------------------------------


def handle_calls(lib, handle):
    return {
        "dispatch": lambda: lib.jcode_mobile_dispatch(handle, b'{"type":"reset"}'),
        "platform_event": lambda: lib.jcode_mobile_platform_event(handle, b'{"type":"app_foreground"}'),
        "state": lambda: lib.jcode_mobile_state(handle),
        "tree": lambda: lib.jcode_mobile_tree(handle),
        "logs": lambda: lib.jcode_mobile_logs(handle, 0),
        "changes": lambda: lib.jcode_mobile_changes(handle, 0),
        "tree_changes": lambda: lib.jcode_mobile_tree_changes(handle, 0),
        "snapshot": lambda: lib.jcode_mobile_snapshot(handle),
    }


def assert_invalid_handle(lib, handle):
    for name, call in handle_calls(lib, handle).items():
        report = take_json(lib, call())
        assert report["ok"] is False and report["error"]["code"] == "invalid_handle", (name, hex(handle), report)


def test_freed_handle(lib):
    other = App({"scenario": "connected_chat"})
    app = App()
    handle = app.handle
    app.close()
    assert_invalid_handle(lib, handle)
    with pytest.raises(JcodeMobileError) as info:
        app.state()
    assert info.value.code == "invalid_handle"
    with pytest.raises(JcodeMobileError) as info:
        app.snapshot()
    assert info.value.code == "invalid_handle"
    # Other apps are unaffected.
    assert other.state()["screen"] == "chat"
    other.close()


@pytest.mark.parametrize("garbage", [0xDEADBEEF, 1, 0x10, 0xFFFFFFFFFFFFFFFF, 0x7FFF0000DEAD0005])
def test_garbage_handle(lib, app, garbage):
    assert_invalid_handle(lib, garbage)
    lib.jcode_mobile_app_free(garbage)  # ignored
    still_works(app)


def test_never_issued_handle_next_to_a_live_one(lib, app):
    for delta in (1, 2, 8, 16, 1 << 20):
        if app.handle + delta < 1 << 64:
            assert_invalid_handle(lib, app.handle + delta)
    still_works(app)


def test_double_free_is_harmless(lib):
    keep = App({"scenario": "onboarding"})
    handle = lib.jcode_mobile_app_new(None)
    lib.jcode_mobile_app_free(handle)
    lib.jcode_mobile_app_free(handle)
    assert_invalid_handle(lib, handle)
    app = App()
    app.close()
    app.close()  # the binding's close is idempotent too
    # A new handle is never the freed one.
    fresh = App()
    assert fresh.handle not in (handle, app.handle)
    assert fresh.state()["screen"] == "onboarding"
    still_works(keep)


# -- app_new ------------------------------------------------------------------------------

BAD_OPTIONS = [
    (b"{", "invalid_json", None),
    (b'{"scenario":"connected_chat",}', "invalid_json", None),
    (b"\xff{}", "invalid_utf8", None),
    (b"[]", "invalid_scenario", None),
    (b"null", "invalid_scenario", None),
    (b'"connected_chat"', "invalid_scenario", None),
    (b'{"scenario":"atlantis"}', "invalid_scenario", "scenario"),
    (b'{"bogus":1}', "invalid_scenario", "bogus"),
    (b'{"snapshot":{}}', "invalid_snapshot", "snapshot.version"),
    (b'{"snapshot":[]}', "invalid_snapshot", "snapshot"),
    (b'{"snapshot":"v1"}', "invalid_snapshot", "snapshot"),
    (b'{"snapshot":{"version":"1"}}', "invalid_snapshot", "snapshot.version"),
    (b'{"snapshot":{"version":1.5}}', "invalid_snapshot", "snapshot.version"),
    (b'{"snapshot":{"version":2}}', "unsupported_snapshot", "snapshot.version"),
    (b'{"snapshot":{"version":0}}', "unsupported_snapshot", "snapshot.version"),
    (b'{"scenario":"connected_chat","snapshot":{"version":1}}', "invalid_scenario", "snapshot"),
    (b'{"device_id":""}', "invalid_field", "device_id"),
    (b'{"device_id":"has space"}', "invalid_field", "device_id"),
    (b'{"device_id":"' + b"x" * 129 + b'"}', "invalid_field", "device_id"),
    (b'{"scenario":3}', "invalid_field", "scenario"),
    (b'{"log_capacity":0}', "invalid_field", "log_capacity"),
    (b'{"log_capacity":100001}', "invalid_field", "log_capacity"),
    (b'{"log_capacity":"big"}', "invalid_field", "log_capacity"),
    (b'{"viewport":{"width":390}}', "invalid_field", "viewport.height"),
    (b'{"viewport":{"width":0,"height":10}}', "invalid_field", "viewport.width"),
    (b'{"viewport":{"width":390,"height":844,"safe_area":{"top":500,"left":0,"bottom":344,"right":0}}}',
     "invalid_field", "viewport.safe_area"),
    (b'{"viewport":{"width":390,"height":844,"safe_area":{"top":-1,"left":0,"bottom":0,"right":0}}}',
     "invalid_field", "viewport.safe_area.top"),
    (b'{"viewport":{"width":390,"height":844,"safe_area":{"top":47}}}', "invalid_field", "viewport.safe_area.left"),
    (b'{"device_id":5}', "invalid_field", "device_id"),
    (b"[" * 100_000, "too_deep", None),
]


@pytest.mark.parametrize("options,code,field", BAD_OPTIONS, ids=[o[:40].decode("latin-1") for o, _, _ in BAD_OPTIONS])
def test_app_new_with_bad_options(lib, options, code, field):
    assert lib.jcode_mobile_app_new(options) is None  # NULL
    error = take_json(lib, lib.jcode_mobile_last_error())
    assert error["ok"] is False and error["error"]["code"] == code, error
    if field is not None:
        assert error["error"]["field"] == field
    # The binding raises the same error.
    with pytest.raises(JcodeMobileError) as info:
        App(options)
    assert info.value.code == code and info.value.payload == error
    # A later success resets the thread's last error.
    App().close()
    assert last_error() == {"ok": True}


def test_app_new_too_large(lib):
    assert lib.jcode_mobile_app_new(b" " * (MAX_BYTES + 1)) is None
    assert last_error()["error"]["code"] == "too_large"


@pytest.mark.parametrize("options", [None, b"", b"{}", b"  \n", {}])
def test_app_new_first_launch_spellings(options):
    with App(options) as app:
        state = app.state()
        assert state["screen"] == "onboarding" and state["revision"] == 0 and state["servers"] == []


def test_last_error_is_per_thread(lib):
    assert lib.jcode_mobile_app_new(b'{"scenario":"atlantis"}') is None
    seen = {}

    def other_thread():
        seen["before"] = last_error()
        assert lib.jcode_mobile_app_new(b"{") is None
        seen["after"] = last_error()["error"]["code"]

    thread = threading.Thread(target=other_thread)
    thread.start()
    thread.join()
    assert seen == {"before": {"ok": True}, "after": "invalid_json"}
    assert last_error()["error"]["code"] == "invalid_scenario"
