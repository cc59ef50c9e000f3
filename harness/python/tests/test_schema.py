"""The runtime schema (``jcode_mobile_schema``): a valid JSON Schema 2020-12
that describes every answer (the suite validates each answer it receives
against it, see conftest.py), strict about what the library writes, and the
source of typed helpers a host builds at run time."""

import copy
import inspect

import pytest
from jsonschema import Draft202012Validator

from jcode_mobile import App, JcodeMobileError, version
from jcode_mobile.binding import schema_document
from jcode_mobile.schema import OutputCheck, SchemaViolation, schema

FUNCTIONS = {
    "jcode_mobile_app_new", "jcode_mobile_dispatch", "jcode_mobile_platform_event", "jcode_mobile_state",
    "jcode_mobile_tree", "jcode_mobile_logs", "jcode_mobile_changes", "jcode_mobile_snapshot",
    "jcode_mobile_last_error", "jcode_mobile_subscribe", "jcode_mobile_subscribe_callback",
    "jcode_mobile_next_event", "jcode_mobile_schema", "jcode_mobile_hit_test", "jcode_mobile_screenshot_svg",
    "jcode_mobile_tree_changes",
}


def test_the_schema_is_a_valid_2020_12_schema_whose_references_all_resolve():
    document = schema_document()
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(document)
    defs = document["$defs"]

    def refs(node):
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                yield node["$ref"]
            for value in node.values():
                yield from refs(value)
        elif isinstance(node, list):
            for value in node:
                yield from refs(value)

    named = {entry[k] for entry in document["x-functions"].values() for k in ("input", "answer", "events") if k in entry}
    for ref in set(refs(document)) | named:
        assert ref.startswith("#/$defs/") and ref[len("#/$defs/"):] in defs, ref


def test_the_schema_names_the_library_version_it_describes():
    assert schema()["$id"] == f"urn:jcode-mobile:schema:{version()}"


def test_every_function_of_the_header_is_in_the_functions_map(repo):
    assert set(schema()["x-functions"]) == FUNCTIONS
    header = (repo / "include" / "jcode_mobile.h").read_text()
    for name in FUNCTIONS:
        assert f"{name}(" in header


def test_the_suite_checks_the_answers_of_every_function_it_calls(answers_match_the_schema):
    check = answers_match_the_schema
    before = dict(check.checked)
    with App({"scenario": "connected_chat"}) as app:
        with app.events(timeout=0.1) as events:
            app.dispatch({"type": "set_draft", "value": "hi"})
            app.dispatch({"type": "send_message"})
            list(events)
        app.platform_event({"type": "app_background"})
        app.state(), app.tree(), app.logs(), app.changes(0), app.snapshot()
        app.tree_changes(0), app.tree_changes(app.revision)
        with app.events(timeout=0.1, kinds=["tree"]) as events:
            app.dispatch({"type": "set_draft", "value": "tree"})
            assert [e["type"] for e in events] == ["subscribed", "tree_changed"]
        app.hit_test(200, 800), app.hit_test(-1, -1), app.screenshot()
        with pytest.raises(JcodeMobileError):
            app.dispatch({"type": "no_such_action"})
        with pytest.raises(JcodeMobileError):
            app.hit_test(float("nan"), 0)
    after = check.checked
    for function in ["jcode_mobile_dispatch", "jcode_mobile_platform_event", "jcode_mobile_state", "jcode_mobile_tree",
                     "jcode_mobile_logs", "jcode_mobile_changes", "jcode_mobile_snapshot", "jcode_mobile_next_event",
                     "jcode_mobile_hit_test", "jcode_mobile_screenshot_svg", "jcode_mobile_tree_changes",
                     "gateway_request"]:
        assert after[function] > before.get(function, 0), function


def test_what_the_library_writes_is_strict_an_extra_or_missing_member_fails():
    check = OutputCheck()
    with App({"scenario": "connected_chat"}) as app:
        state_answer = app.state_raw()
        report = app.dispatch_raw({"type": "set_draft", "value": "hi"})
    check("jcode_mobile_state", state_answer)
    check("jcode_mobile_dispatch", report)

    extra = copy.deepcopy(state_answer)
    extra["state"]["connection"]["colour"] = "blue"
    with pytest.raises(SchemaViolation):
        check("jcode_mobile_state", extra)

    retyped = copy.deepcopy(state_answer)
    retyped["state"]["draft"] = 7
    with pytest.raises(SchemaViolation):
        check("jcode_mobile_state", retyped)

    missing = copy.deepcopy(report)
    del missing["effects"][0]["effect_id"]
    with pytest.raises(SchemaViolation):
        check("jcode_mobile_dispatch", missing)


def test_a_gateway_request_the_core_would_never_write_fails_the_check():
    check = OutputCheck()
    line = '{"id":1,"type":"message","content":"hi","surprise":true}'
    report = {"ok": True, "revision": 3, "effects": [{"effect_id": 4, "type": "websocket_send", "line": line}]}
    with pytest.raises(SchemaViolation):
        check("jcode_mobile_dispatch", report)


def test_typed_helpers_are_discovered_from_the_loaded_library_and_dispatch():
    with App({"scenario": "connected_empty_chat"}) as app:
        assert {"set_draft", "send_message", "respond_permission", "load_scenario"} <= set(app.actions.names)
        assert {"websocket_opened", "timer_fired", "app_background"} <= set(app.platform.names)
        report = app.actions.set_draft(value="Run the tests")
        assert report["ok"] is True
        assert app.state()["draft"] == "Run the tests"
        assert "value" in inspect.signature(app.actions.set_draft).parameters
        assert app.actions.set_draft.__doc__.strip() != ""


def test_a_typed_helper_refuses_a_wrong_type_or_a_missing_field_before_sending():
    with App({"scenario": "connected_empty_chat"}) as app:
        revision = app.revision
        with pytest.raises(TypeError) as wrong:
            app.actions.set_draft(value=42)
        assert "set_draft" in str(wrong.value)
        with pytest.raises(TypeError) as missing:
            app.actions.set_draft()
        assert "value" in str(missing.value)
        assert app.revision == revision, "nothing was sent"


def test_recorded_answers_of_another_program_are_checked_line_by_line(tmp_path):
    from jcode_mobile.schema import check_recorded_answers

    good = tmp_path / "good.jsonl"
    good.write_text('{"ok":true}\n{"ok":false,"error":{"code":"invalid_json","message":"x","offset":0}}\n'
                    '{"ok":true,"event":null}\n')
    assert check_recorded_answers([str(good)]) == (3, [])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"ok":true,"revision":3,"effects":[{"type":"websocket_send","line":"{}"}]}\nnot json\n')
    checked, problems = check_recorded_answers([str(bad)])
    assert checked == 2
    assert [p.split(":")[1] for p in problems] == ["1", "2"]


def test_a_recorded_answer_repeated_is_judged_once_and_reported_at_every_line_it_is_on(tmp_path):
    from jcode_mobile.schema import check_recorded_answers

    answers = tmp_path / "repeated.jsonl"
    answers.write_text('{"ok":true}\nnot json\n{"ok":true}\nnot json\n')
    checked, problems = check_recorded_answers([str(answers)])
    assert checked == 4
    assert [p.split(":")[1] for p in problems] == ["2", "4"]
