"""The ctypes binding itself: lifetime, errors, input encodings, tree helpers."""

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jcode_mobile import App, JcodeMobileError, find_node, iter_nodes, library_path, load_library
from jcode_mobile.binding import take_json

HARNESS = Path(__file__).resolve().parents[1]


def test_context_manager_frees_the_handle(lib):
    with App() as app:
        handle = app.handle
        assert app.state()["screen"] == "onboarding"
    assert app.closed
    assert take_json(lib, lib.jcode_mobile_state(handle))["error"]["code"] == "invalid_handle"
    app.close()  # idempotent


def test_garbage_collection_frees_the_handle(lib):
    app = App()
    handle = app.handle
    del app
    gc.collect()
    assert take_json(lib, lib.jcode_mobile_state(handle))["error"]["code"] == "invalid_handle"


def test_dispatch_accepts_dict_str_and_bytes():
    with App() as app:
        app.dispatch({"type": "set_host", "value": "dict.local"})
        assert app.state()["pairing"]["host"] == "dict.local"
        app.dispatch('{"type":"set_host","value":"str.local"}')
        assert app.state()["pairing"]["host"] == "str.local"
        app.dispatch(b'{"type":"set_host","value":"bytes.local"}')
        assert app.state()["pairing"]["host"] == "bytes.local"
        app.dispatch({"type": "set_device_name", "value": "Zoë’s iPhone ✨"})  # non-ASCII round-trips
        assert app.state()["pairing"]["device_name"] == "Zoë’s iPhone ✨"
        assert app.revision == 4


def test_errors_raise_with_code_field_offset_and_payload():
    with App() as app:
        with pytest.raises(JcodeMobileError) as info:
            app.dispatch({"type": "set_host", "value": 1})
        assert (info.value.code, info.value.field, info.value.offset) == ("invalid_field", "value", None)
        assert info.value.payload["ok"] is False and info.value.message
        with pytest.raises(JcodeMobileError) as info:
            app.platform_event(b'{"type":')
        assert (info.value.code, info.value.offset) == ("invalid_json", 8)
        assert "invalid_json" in str(info.value)
        raw = app.dispatch_raw({"type": "nope"})
        assert raw["ok"] is False and raw["error"]["code"] == "unknown_type"


def test_logs_limit():
    with App({"log_capacity": 3}) as app:
        for i in range(5):
            app.dispatch({"type": "set_host", "value": f"h{i}"})
        logs = app.logs()
        assert logs["capacity"] == 3 and logs["next_seq"] == 6
        assert [e["payload"]["value"] for e in logs["entries"]] == ["h2", "h3", "h4"]
        assert [e["seq"] for e in app.logs(1)["entries"]] == [5]


def test_viewport_option_sets_the_root_bounds():
    with App({"viewport": {"width": 320, "height": 568}}) as app:
        assert app.tree()["bounds"] == {"x": 0, "y": 0, "width": 320, "height": 568}


def test_a_safe_area_the_host_gives_places_the_screen_between_its_insets():
    safe = {"top": 20, "left": 0, "bottom": 0, "right": 0}  # a phone with a home button
    with App({"scenario": "connected_chat", "viewport": {"width": 320, "height": 568, "safe_area": safe}}) as app:
        header, composer = (find_node(app.tree(), i)["bounds"] for i in ("chat.header", "chat.composer"))
        assert header["y"] == 20
        assert composer["y"] + composer["height"] == 568
        assert "home_indicator" not in app.screenshot()["svg"]


def test_options_device_id_and_name():
    with App({"device_id": "dev-7", "device_name": "Lab iPad"}) as app:
        state = app.state()
        assert state["lifecycle"]["device_id"] == "dev-7"
        assert state["pairing"]["device_name"] == "Lab iPad"


def test_iter_nodes_and_find_node():
    tree = {
        "id": "root", "visible": True, "children": [
            {"id": "a", "visible": True, "children": [{"id": "a1", "visible": True, "children": []}]},
            {"id": "b", "visible": False, "children": [{"id": "b1", "visible": True, "children": []}]},
            {"id": "c", "visible": True, "children": []},
        ],
    }
    assert [n["id"] for n in iter_nodes(tree)] == ["root", "a", "a1", "b", "b1", "c"]
    assert [n["id"] for n in iter_nodes(tree, visible_only=True)] == ["root", "a", "a1", "c"]
    assert find_node(tree, "b1")["id"] == "b1"
    assert find_node({"ok": True, "tree": tree}, "a1")["id"] == "a1"
    assert find_node(tree, "zzz") is None


def test_library_path_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("JCODE_MOBILE_LIB", str(tmp_path / "libnothing.so"))
    assert library_path() == tmp_path / "libnothing.so"
    with pytest.raises(OSError, match="make lib"):
        load_library(tmp_path / "libnothing.so")


def test_fallback_path_is_the_repository_lib(monkeypatch):
    monkeypatch.delenv("JCODE_MOBILE_LIB", raising=False)
    assert library_path() == HARNESS.parents[1] / "lib" / "libjcode_mobile.so"


def test_package_loads_without_the_environment_variable():
    env = {k: v for k, v in os.environ.items() if k != "JCODE_MOBILE_LIB"}
    code = "import jcode_mobile as j; print(j.version(), j.App().state()['screen'])"
    out = subprocess.run([sys.executable, "-c", code], cwd=HARNESS, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[1] == "onboarding"


def test_snapshot_of_a_first_launch_and_its_round_trip():
    with App({"device_id": "ios-6F1C", "device_name": "Ana's phone"}) as app:
        app.dispatch({"type": "set_draft", "value": "half a thought"})
        snapshot = app.snapshot()
        assert snapshot == {
            "version": 1,
            "device": {"device_id": "ios-6F1C", "device_name": "Ana's phone"},
            "servers": [],
            "selected_server_id": None,
            "composer": {"draft": "half a thought", "attachments": [], "next_attachment_id": 1},
            "outbox": {"messages": [], "next_id": 1},
        }
        assert app.snapshot_raw() == {"ok": True, "snapshot": snapshot}
    with App({"snapshot": snapshot}) as restored:
        assert restored.snapshot() == snapshot
        state = restored.state()
        assert state["draft"] == "half a thought" and state["screen"] == "onboarding"


def test_snapshot_of_a_freed_app_raises_invalid_handle():
    app = App()
    app.close()
    with pytest.raises(JcodeMobileError) as info:
        app.snapshot()
    assert info.value.code == "invalid_handle"
