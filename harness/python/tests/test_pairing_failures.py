"""Pairing that fails: a wrong code (401) and a server that cannot be reached."""

from jcode_mobile import App, find_node
from jcode_mobile.fake_gateway import Host

from helpers import fill_pairing_form, steps_with


def assert_back_on_the_form(host: Host, banner: str) -> None:
    state = host.app.state()
    assert state["screen"] == "onboarding"
    assert state["connection"]["phase"] == "disconnected"
    assert state["pairing"]["is_submitting"] is False
    assert state["servers"] == [] and state["selected_server_id"] is None
    assert state["banners"]["error"]["text"] == banner
    tree = host.app.tree()
    node = find_node(tree, "banner.error")
    assert node["visible"] is True and node["label"] == banner
    assert find_node(tree, "banner.error.dismiss")["visible"] is True
    assert find_node(tree, "pair.submit")["enabled"] is True
    assert host.effects_of("websocket_connect") == [] and host.effects_of("secure_store_write") == []
    assert host.haptics == ["error"]
    assert host.keychain == {}


def test_wrong_code_is_refused_with_401():
    host = Host()
    fill_pairing_form(host, code="654321")
    host.dispatch({"type": "submit_pairing"})
    (answer,) = steps_with(host, "pair_finished")
    assert answer.input["ok"] is False and answer.input["status"] == 401
    assert answer.input["error"] == "Invalid or expired pairing code"
    assert_back_on_the_form(host, "Invalid or expired pairing code")
    state = host.app.state()
    assert state["pairing"]["pair_code"] == ""  # the refused code is cleared
    assert state["pairing"]["host"] == "devbox.local"  # the rest of the form is kept


def test_unreachable_server():
    host = Host()
    fill_pairing_form(host, server="nowhere.invalid")
    host.dispatch({"type": "submit_pairing"})
    (answer,) = steps_with(host, "pair_finished")
    assert answer.input["ok"] is False and "status" not in answer.input
    assert host.server.pair_requests == []  # nothing answered
    banner = host.app.state()["banners"]["error"]["text"]
    assert banner.startswith("Could not reach nowhere.invalid:7643")
    assert "Check that jcode is running there" in banner
    assert_back_on_the_form(host, banner)


def test_other_http_status_is_reported():
    app = App({"scenario": "pairing_ready"})
    (pair,) = app.dispatch({"type": "submit_pairing"})["effects"]
    app.platform_event({"type": "pair_finished", "effect_id": pair["effect_id"], "ok": False, "status": 500, "error": "boom"})
    text = app.state()["banners"]["error"]["text"]
    assert "HTTP 500" in text and "boom" in text


def test_pairing_succeeds_after_a_wrong_code_and_the_banner_goes():
    host = Host()
    fill_pairing_form(host, code="000000")
    host.dispatch({"type": "submit_pairing"})
    assert host.app.state()["banners"]["error"] is not None
    host.dispatch({"type": "set_pair_code", "value": "123456"})
    host.dispatch({"type": "tap_node", "node_id": "pair.submit"})
    state = host.app.state()
    assert state["screen"] == "chat" and state["connection"]["phase"] == "connected"
    assert state["banners"]["error"] is None
    assert [r["code"] for r in host.server.pair_requests] == ["000000", "123456"]


def test_dismissing_the_error_banner():
    host = Host()
    fill_pairing_form(host, code="000000")
    host.dispatch({"type": "submit_pairing"})
    host.dispatch({"type": "tap_node", "node_id": "banner.error.dismiss"})
    assert host.app.state()["banners"]["error"] is None
    assert find_node(host.app.tree(), "banner.error")["visible"] is False
