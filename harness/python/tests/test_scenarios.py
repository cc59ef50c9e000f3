"""Every named scenario: it loads through app_new and load_scenario, its
state and tree agree, and every tappable node can be tapped."""

import re

import pytest

from jcode_mobile import App, find_node, iter_nodes

from helpers import SPEC_SCENARIOS, all_scenarios, swift_scenarios, tappable

SCENARIOS = all_scenarios()

#: What each scenario of SPEC section 4 must show: (screen, connection phase, extra check).
EXPECTED = {
    "onboarding": ("onboarding", "disconnected", lambda s: s["pairing"]["host"] == "" and s["servers"] == []),
    "pairing_ready": ("onboarding", "disconnected", lambda s: s["pairing"]["can_submit"] is True),
    "connected_chat": ("chat", "connected", lambda s: len(s["transcript"]) > 0 and not s["session"]["is_processing"]),
    "pairing_invalid_code": (
        "onboarding", "disconnected", lambda s: s["banners"]["error"]["text"] == "Invalid or expired pairing code"),
    "server_unreachable": (
        "onboarding", "disconnected", lambda s: s["banners"]["error"]["text"].startswith("Could not reach")),
    "connected_empty_chat": ("chat", "connected", lambda s: s["transcript"] == [] and s["session"]["history_loaded"]),
    "chat_streaming": (
        "chat", "connected", lambda s: s["session"]["is_processing"] and s["transcript"][-1]["is_streaming"]),
    "tool_approval_required": ("chat", "connected", lambda s: len(s["permission_requests"]) == 1),
    "tool_failed": (
        "chat", "connected",
        lambda s: any(c["status"] == "failed" and c["error"] for m in s["transcript"] for c in m["tool_calls"])),
    "network_reconnect": ("chat", "reconnecting", lambda s: s["connection"]["reconnect_delay_ms"] == 1000),
    "offline_queued_message": ("chat", "offline", lambda s: len(s["outbox"]) == 1),
    "long_running_task": (
        "chat", "connected",
        lambda s: s["session"]["is_processing"] and any(
            c["status"] == "running" for m in s["transcript"] for c in m["tool_calls"])),
    "stdin_request_pending": ("chat", "connected", lambda s: s["stdin_requests"][0]["is_password"] is True),
    "model_switch_failed": (
        "chat", "connected", lambda s: s["banners"]["error"]["text"].startswith("Couldn't switch model")),
    "push_tool_approval_opened": ("chat", "connected", lambda s: len(s["permission_requests"]) == 1),
    "approval_unsupported": (
        "chat", "connected",
        lambda s: s["banners"]["error"]["text"].startswith("Invalid request: unknown variant `permission_response`")),
}

NODE_KEYS = {
    "id": str, "role": str, "label": str, "visible": bool, "enabled": bool, "focused": bool,
    "accessibility_label": str, "supported_actions": list, "bounds": dict, "children": list,
}


def test_the_spec_scenarios_all_exist_in_the_core():
    assert set(SPEC_SCENARIOS) <= set(swift_scenarios())


def assert_consistent(state: dict, tree: dict) -> None:
    # Tree shape: every node well-formed, ids unique.
    ids = []
    for node in iter_nodes(tree):
        for key, kind in NODE_KEYS.items():
            assert isinstance(node[key], kind), (node["id"], key)
        for key in ("value", "placeholder", "accessibility_value"):
            assert node[key] is None or isinstance(node[key], str), (node["id"], key)
        assert set(node["bounds"]) == {"x", "y", "width", "height"}
        ids.append(node["id"])
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert duplicates == [], duplicates

    assert tree["id"] == "root" and tree["role"] == "screen"
    assert tree["value"] == state["screen"]

    # Transcript ids: unique, stable form.
    entry_ids = [m["id"] for m in state["transcript"]]
    assert len(entry_ids) == len(set(entry_ids))
    assert all(re.fullmatch(r"m\d+", i) for i in entry_ids), entry_ids

    # Banners mirror the state.
    error = state["banners"]["error"]
    banner = find_node(tree, "banner.error")
    assert banner["visible"] is (error is not None)
    if error is not None:
        # The banner shows the state's text, unless it says a server's text in plain words (the text
        # then behind Details) or folds a long one (Show all): then it can be opened.
        if banner.get("expanded") is None:
            assert banner["label"] == error["text"]
        else:
            assert find_node(tree, "banner.error.more")["visible"] is True
            assert banner["accessibility_label"].startswith("Error: ")
    status = state["banners"]["status"]
    status_node = find_node(tree, "banner.status")
    assert status_node["visible"] is (status is not None)
    if status is not None:
        assert status_node["label"] == status

    if state["screen"] == "chat":
        listing = find_node(tree, "chat.messages")
        messages = listing["children"]
        # a message already sent (awaiting_ack, or unconfirmed after a drop) shows once, as its transcript
        # entry; only those still waiting to go get an outbox node
        expected = ["message." + i for i in entry_ids] + [
            "outbox." + m["id"] for m in state["outbox"] if m["delivery"] == "waiting"]
        sent = [m for m in state["outbox"] if m["delivery"] != "waiting"]
        for m in sent:
            assert [e["text"] for e in state["transcript"] if e["role"] == "user"].count(m["text"]) == 1
        assert [n["id"] for n in messages] == expected
        # a list this short is laid out whole: its window is every row
        assert listing["window"] == {"start": 0, "end": len(expected), "total": len(expected)}
        for entry, node in zip(state["transcript"], messages):
            assert node["value"] == entry["text"]
            assert node["label"].startswith({"user": "You", "assistant": "jcode", "system": "System"}[entry["role"]])
            assert (node.get("variant") == "typing") is entry["is_streaming"]
            for call in entry["tool_calls"]:
                card = find_node(node, f"tool.{entry['id']}.{call['id']}")
                assert card is not None and card["label"] == call["name"]
        if state["permission_requests"]:
            request = state["permission_requests"][0]
            sheet = find_node(tree, "permission." + request["request_id"])
            assert sheet["visible"] and sheet["role"] == "sheet"
            for answer in ("approve", "deny"):
                assert find_node(sheet, f"permission.{request['request_id']}.{answer}")["enabled"]
        if state["stdin_requests"]:
            request = state["stdin_requests"][0]
            field = find_node(tree, f"stdin.{request['request_id']}.input")
            assert field["role"] == ("secure_field" if request["is_password"] else "text_field")
        interrupt = find_node(tree, "chat.interrupt")
        assert interrupt["visible"] is state["session"]["is_processing"]
    else:
        assert find_node(tree, "chat.messages") is None


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_via_app_new(name):
    with App({"scenario": name}) as app:
        state = app.state()
        tree_report = app.tree_raw()
        assert state["revision"] == 0 and tree_report["revision"] == 0
        assert app.logs(0)["entries"] == []
        assert_consistent(state, tree_report["tree"])
        if name in EXPECTED:
            screen, phase, check = EXPECTED[name]
            assert state["screen"] == screen
            assert state["connection"]["phase"] == phase
            assert check(state), state


@pytest.mark.parametrize("name", SCENARIOS)
def test_scenario_via_load_scenario_matches_app_new(name):
    with App({"scenario": name}) as reference, App({"scenario": "connected_chat"}) as app:
        app.dispatch({"type": "set_draft", "value": "something to replace"})
        revision = app.revision
        report = app.dispatch({"type": "load_scenario", "scenario": name})
        assert report["ok"] is True and report["revision"] == revision + 1
        state, expected = app.state(), reference.state()
        assert state["revision"] == revision + 1
        # The app keeps its own device id; everything else is the fixture.
        for s in (state, expected):
            s.pop("revision")
            s["lifecycle"].pop("device_id")
        assert state == expected
        assert app.tree() == reference.tree()
        assert_consistent(app.state(), app.tree())


@pytest.mark.parametrize("name", SCENARIOS)
def test_every_tappable_node_can_be_tapped(name):
    with App({"scenario": name}) as app:
        targets = [n["id"] for n in tappable(app.tree())]
    assert targets, "every screen has something to tap"
    for node_id in targets:
        with App({"scenario": name}) as app:
            node = find_node(app.tree(), node_id)
            report = app.dispatch_raw({"type": "tap_node", "node_id": node_id})
            assert report["ok"] is True, (node_id, report)
            assert report["revision"] > 0 or report["effects"], f"tapping {node_id} did nothing"
            notes = app.logs(1)["entries"][0]["notes"]
            assert not any("no tappable node" in n or "disabled" in n for n in notes), (node_id, notes)
            if node["role"] in ("text_field", "secure_field"):
                assert app.state()["focused_node_id"] == node_id
                assert find_node(app.tree(), node_id)["focused"] is True


@pytest.mark.parametrize("name", SCENARIOS)
def test_hidden_or_disabled_nodes_cannot_be_tapped(name):
    with App({"scenario": name}) as app:
        tree = app.tree()
        live = {n["id"] for n in tappable(tree)}
        dead = [n["id"] for n in iter_nodes(tree) if "tap" in n["supported_actions"] and n["id"] not in live]
        for node_id in dead + ["no.such.node"]:
            state = app.state()
            report = app.dispatch({"type": "tap_node", "node_id": node_id})
            assert report["effects"] == [] and report["revision"] == state["revision"], node_id
            assert app.state() == state
