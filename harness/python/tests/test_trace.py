"""Traces: a session is recorded without its secrets and replays identically.

The golden traces in tests/golden/traces/ are the journeys of
``jcode_mobile.journeys`` recorded with the in-memory host. When the core's
behaviour changes on purpose, rewrite them with

    JCODE_UPDATE_GOLDENS=1 python3 -m pytest tests/test_trace.py

and review the diff like any other change of behaviour.
"""

import hashlib
import json
import os
from pathlib import Path

import pytest

from jcode_mobile import App
from jcode_mobile import journeys
from jcode_mobile.fake_gateway import FakeJcodeServer, Host
from jcode_mobile.journeys import JOURNEYS
from jcode_mobile.trace import Recorder, Redactor, Trace, TraceFormatError, first_difference, record_host, replay

GOLDEN = Path(__file__).resolve().parent / "golden" / "traces"
UPDATE_GOLDENS = os.environ.get("JCODE_UPDATE_GOLDENS") == "1"
UPDATE_HINT = "JCODE_UPDATE_GOLDENS=1 python3 -m pytest tests/test_trace.py"

JOURNEY_NAMES = [
    "pairing_to_chat",
    "streamed_reply_with_tool",
    "interrupt_running_turn",
    "reconnect_after_drop",
    "stdin_password",
]

# The secrets the journeys use, written out here so that the tests do not
# trust the module they check.
PAIR_CODE = "482915"
AUTH_TOKEN = "5f2b8c0e9a7d41368e2af0c1d3a59e7426b1c8d0f3e5a7b9c2d4e6f8a0b1c3d5"
SUDO_PASSWORD = "correct horse battery staple"
SECRETS = [PAIR_CODE, AUTH_TOKEN, SUDO_PASSWORD]

EMPTY_REPORT = {"ok": True, "revision": 1, "effects": []}


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.json"


def load_golden(name: str) -> Trace:
    return Trace.load(golden_path(name))


# -- the golden traces ----------------------------------------------------------------


def test_every_journey_has_a_golden_trace_and_every_golden_trace_a_journey():
    assert list(JOURNEYS) == JOURNEY_NAMES
    assert sorted(p.stem for p in GOLDEN.glob("*.json")) == sorted(JOURNEY_NAMES)


def test_the_journeys_use_the_secrets_these_tests_look_for():
    assert (journeys.PAIR_CODE, journeys.AUTH_TOKEN, journeys.SUDO_PASSWORD) == (PAIR_CODE, AUTH_TOKEN, SUDO_PASSWORD)


@pytest.mark.parametrize("name", JOURNEY_NAMES)
def test_replaying_a_golden_trace_reproduces_every_report_digest_state_tree_and_log(name):
    trace = load_golden(name)
    result = replay(trace)
    assert result.ok, str(result)
    assert result.mismatch is None
    assert result.steps == len(trace.steps)
    assert result.digests_checked == 2 * len(trace.steps)  # every step keeps its state and tree digests
    assert str(result).startswith(f"ok: {len(trace.steps)} steps replayed")


@pytest.mark.parametrize("name", JOURNEY_NAMES)
def test_recording_a_journey_today_gives_exactly_its_golden_file(name):
    path = golden_path(name)
    text = JOURNEYS[name].record().to_json()
    if UPDATE_GOLDENS:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing; record it with: {UPDATE_HINT}"
    golden = path.read_text(encoding="utf-8")
    if text != golden:
        where = first_difference(json.loads(golden), json.loads(text))
        detail = (f"first difference at {where[0] or '/'}: golden {json.dumps(where[1])[:200]}, "
                  f"today {json.dumps(where[2])[:200]}") if where else "same JSON, different layout"
        pytest.fail(f"{path.name} is not what the journey {name!r} records today ({detail}).\n"
                    f"If the change is intended, rewrite the golden traces: {UPDATE_HINT}")


@pytest.mark.parametrize("name", JOURNEY_NAMES)
def test_no_secret_of_the_journeys_is_anywhere_in_a_golden_file(name):
    text = golden_path(name).read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in text


def test_the_golden_traces_show_placeholders_where_the_secrets_were():
    pairing = load_golden("pairing_to_chat")
    assert pairing.steps[2].input == {"type": "set_pair_code", "value": "000001"}
    assert pairing.steps[5].report["effects"][0]["code"] == "000001"
    assert pairing.steps[6].input["token"] == "redacted-token-1"
    assert pairing.steps[6].report["effects"][0]["value"] == "redacted-token-1"
    assert pairing.steps[6].report["effects"][1]["auth_token"] == "redacted-token-1"
    # the snapshot the core persists never carries the token
    assert [e["key"] for e in pairing.steps[6].report["effects"] if e["type"] == "storage_write"] == ["snapshot"]
    assert "redacted-token-1" not in json.dumps(pairing.steps[6].report["effects"][-1])
    stdin = load_golden("stdin_password")
    (answer,) = [s for s in stdin.steps if s.input.get("type") == "respond_stdin"]
    assert answer.input == {"type": "respond_stdin", "request_id": "stdin-1", "input": "redacted-input-1"}
    assert json.loads(answer.report["effects"][0]["line"]) == {
        "id": 6, "type": "stdin_response", "request_id": "stdin-1", "input": "redacted-input-1"}


# -- secrets in traces saved from a session -------------------------------------------


def test_a_trace_saved_from_a_session_holds_none_of_the_secrets_the_host_handled(tmp_path):
    host = JOURNEYS["stdin_password"].host()
    recorder = record_host(host)
    journeys.stdin_password(host)
    # The host did handle every secret...
    assert [e["code"] for e in host.effects_of("http_pair")] == [PAIR_CODE]
    assert [e["auth_token"] for e in host.effects_of("websocket_connect")] == [AUTH_TOKEN]
    assert host.keychain == {"jcode.token.devbox.local:7643": AUTH_TOKEN}
    assert any(SUDO_PASSWORD in e["line"] for e in host.effects_of("websocket_send"))
    # ...and the saved trace has none of them.
    recorder.finish(host.app)
    text = recorder.save(tmp_path / "session.json").read_text(encoding="utf-8")
    for secret in SECRETS:
        assert secret not in text


def test_a_pairing_code_inside_a_scanned_qr_payload_becomes_its_placeholder_in_place(tmp_path):
    payload = f"jcode://pair?host=devbox.local&port=7643&code={PAIR_CODE}"
    server = FakeJcodeServer(pair_code=PAIR_CODE, token=AUTH_TOKEN)
    host = Host(App({"device_id": "device-qr"}), server, qr_payload=payload)
    recorder = record_host(host)
    host.dispatch({"type": "set_device_name", "value": "Test iPhone"})
    host.dispatch({"type": "set_working_dir", "value": "/home/me/project"})
    host.dispatch({"type": "scan_qr"})  # the scanned link fills the form and pairs
    assert host.app.state()["connection"]["phase"] == "connected"
    trace = recorder.finish(host.app)

    (scanned,) = [s for s in trace.steps if s.input.get("type") == "qr_payload_scanned"]
    assert scanned.input == {"type": "qr_payload_scanned", "payload": "jcode://pair?host=devbox.local&port=7643&code=000001"}
    (pair,) = [e for s in trace.steps for e in s.report["effects"] if e["type"] == "http_pair"]
    assert pair["code"] == "000001"
    text = trace.save(tmp_path / "qr.json").read_text(encoding="utf-8")
    assert PAIR_CODE not in text and AUTH_TOKEN not in text
    assert replay(Trace.load(tmp_path / "qr.json")).ok


# -- replay finds differences ---------------------------------------------------------


def test_a_tampered_report_makes_replay_name_the_step_and_the_field(tmp_path):
    data = json.loads(golden_path("pairing_to_chat").read_text(encoding="utf-8"))
    assert data["steps"][5]["input"] == {"type": "submit_pairing"}
    data["steps"][5]["report"]["effects"][0]["host"] = "elsewhere.local"
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data), encoding="utf-8")

    result = replay(tampered)
    assert result.ok is False
    assert result.steps == 6
    mismatch = result.mismatch
    assert (mismatch.step, mismatch.what, mismatch.pointer) == (5, "report", "/effects/0/host")
    assert (mismatch.expected, mismatch.got) == ("elsewhere.local", "devbox.local")
    assert str(result).startswith(
        "MISMATCH: report differs after step 5 (action submit_pairing) at /effects/0/host\n"
        '  expected: "elsewhere.local"\n'
        '  got:      "devbox.local"')


def test_a_tampered_state_digest_makes_replay_name_the_step_and_the_state():
    trace = load_golden("pairing_to_chat")
    trace.steps[3].state_sha256 = "0" * 64
    mismatch = replay(trace).mismatch
    assert (mismatch.step, mismatch.what, mismatch.pointer) == (3, "state", "")
    assert mismatch.expected == "sha256 " + "0" * 64


def test_a_tampered_final_log_makes_replay_name_the_log_entry():
    trace = load_golden("pairing_to_chat")
    trace.final["logs"][1]["type"] = "set_host"
    mismatch = replay(trace).mismatch
    assert (mismatch.step, mismatch.what, mismatch.pointer) == (None, "logs", "/1/type")
    assert (mismatch.expected, mismatch.got) == ("set_host", "set_port")


def test_a_tampered_final_state_makes_replay_name_the_member():
    trace = load_golden("reconnect_after_drop")
    trace.final["state"]["connection"]["phase"] = "offline"
    mismatch = replay(trace).mismatch
    assert (mismatch.step, mismatch.what, mismatch.pointer) == (None, "state", "/connection/phase")
    assert (mismatch.expected, mismatch.got) == ("offline", "connected")


def test_a_trace_from_a_newer_version_is_refused_with_a_clear_error(tmp_path):
    data = json.loads(golden_path("pairing_to_chat").read_text(encoding="utf-8"))
    data["version"] = 2
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(TraceFormatError, match="trace format version 2 is newer than this harness reads"):
        Trace.load(newer)
    with pytest.raises(TraceFormatError, match="newer.json"):
        replay(newer)


def test_a_file_that_is_not_a_trace_is_refused(tmp_path):
    other = tmp_path / "other.json"
    other.write_text('{"format": "something-else", "version": 1}', encoding="utf-8")
    with pytest.raises(TraceFormatError, match="not a jcode mobile trace"):
        Trace.load(other)


# -- the recorder ---------------------------------------------------------------------


def test_a_trace_file_has_the_documented_members_in_order():
    data = json.loads(JOURNEYS["pairing_to_chat"].record().to_json())
    assert list(data) == ["format", "version", "library", "options", "steps", "final"]
    assert (data["format"], data["version"]) == ("jcode-mobile-trace", 1)
    assert sorted(data["library"]) == ["abi_version", "version"]
    assert data["options"] == {"device_id": "device-journeys-01"}
    assert list(data["steps"][0]) == ["kind", "input", "report", "state_sha256", "tree_sha256"]
    assert data["steps"][0]["kind"] == "action"
    assert data["steps"][0]["input"] == {"type": "set_host", "value": "devbox.local"}
    assert data["steps"][0]["report"] == {"ok": True, "revision": 1, "effects": []}
    assert list(data["final"]) == ["state", "tree", "logs"]
    assert [e["type"] for e in data["final"]["logs"][:3]] == ["set_host", "set_port", "set_pair_code"]


def test_a_step_digest_is_the_sha256_of_the_canonical_json_of_the_state_and_tree():
    app = App({"device_id": "device-digest"})
    recorder = Recorder(app.options, app=app)
    action = {"type": "set_host", "value": "devbox.local"}
    step = recorder.record("action", action, app.dispatch(action))

    def sha(value) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                              .encode("utf-8")).hexdigest()

    assert step.state_sha256 == sha(app.state())
    assert step.tree_sha256 == sha(app.tree())


def test_a_recorder_without_the_app_keeps_no_digests():
    app = App()
    recorder = Recorder(None)
    step = recorder.record("action", {"type": "set_host", "value": "h"}, app.dispatch({"type": "set_host", "value": "h"}))
    assert (step.state_sha256, step.tree_sha256) == (None, None)
    assert list(recorder.finish(app).to_dict()["steps"][0]) == ["kind", "input", "report"]


def test_finishing_needs_the_app():
    with pytest.raises(ValueError, match="finish needs the app"):
        Recorder(None).finish()


def test_the_host_hands_every_call_into_the_core_to_its_recorder():
    recorder = Recorder({"device_id": "device-hook"})
    host = Host(App({"device_id": "device-hook"}), recorder=recorder)
    host.dispatch({"type": "set_host", "value": "devbox.local"})
    host.dispatch({"type": "check_server"})  # http_health, answered by health_finished
    assert [(s.kind, s.input["type"]) for s in recorder.steps] == [
        ("action", "set_host"), ("action", "check_server"), ("event", "health_finished")]
    assert len(recorder.steps) == len(host.steps)


def test_record_host_takes_the_app_options_and_the_steps_already_made():
    host = JOURNEYS["pairing_to_chat"].host()
    host.dispatch({"type": "set_host", "value": "devbox.local"})
    recorder = record_host(host)
    journeys.pair_and_open_history(host)
    trace = recorder.finish(host.app)
    assert trace.options == {"device_id": "device-journeys-01"}
    assert trace.steps[0].input == {"type": "set_host", "value": "devbox.local"}
    assert (trace.steps[0].state_sha256, trace.steps[1].state_sha256 is not None) == (None, True)
    assert replay(trace).ok


def test_raw_json_inputs_and_error_reports_are_recorded_and_replayed():
    app = App()
    recorder = Recorder(None, app=app)
    for text in ['{"type":"set_pair_code","value":"482915"}', '{"type":"no_such_action"}',
                 '{"type": "set_pair_code", "value": 482916}']:
        recorder.record("action", text, app.dispatch_raw(text))
    trace = recorder.finish(app)
    assert trace.steps[0].input == '{"type":"set_pair_code","value":"000001"}'
    assert trace.steps[1].report["ok"] is False
    assert trace.steps[1].report["error"]["code"] == "unknown_type"
    assert trace.steps[2].input == '{"type":"set_pair_code","value":"000002"}'  # a number code: the text is rewritten
    assert replay(trace).ok


def test_an_app_keeps_the_options_it_was_created_with():
    options = {"device_id": "device-options"}
    app = App(options)
    options["device_id"] = "changed"
    assert app.options == {"device_id": "device-options"}


# -- redaction ------------------------------------------------------------------------


def test_the_same_secret_gets_the_same_placeholder_wherever_it_appears():
    r = Redactor()
    r.learn_step({"type": "set_pair_code", "value": PAIR_CODE}, EMPTY_REPORT)
    r.learn_step({"type": "pair_finished", "effect_id": 1, "ok": True, "token": AUTH_TOKEN}, EMPTY_REPORT)
    assert r.redact({
        "effect": {"type": "http_pair", "code": PAIR_CODE},
        "payload": f"jcode://pair?host=devbox.local&code={PAIR_CODE}&port=7643",
        "keychain": {"jcode.token.devbox.local:7643": AUTH_TOKEN},
        "url": f"ws://devbox.local:7643/ws?token={AUTH_TOKEN}",
    }) == {
        "effect": {"type": "http_pair", "code": "000001"},
        "payload": "jcode://pair?host=devbox.local&code=000001&port=7643",
        "keychain": {"jcode.token.devbox.local:7643": "redacted-token-1"},
        "url": "ws://devbox.local:7643/ws?token=redacted-token-1",
    }


def test_secrets_are_learned_from_effects_too():
    r = Redactor()
    r.learn_step({"type": "timer_fired", "timer_id": "t1"}, {"ok": True, "revision": 2, "effects": [
        {"effect_id": 1, "type": "websocket_connect", "url": "ws://h:7643/ws", "auth_token": "fixture-token"},
        {"effect_id": 2, "type": "websocket_send",
         "line": '{"id":3,"type":"stdin_response","request_id":"stdin-1","input":"hunter2"}'},
    ]})
    assert r.redact(["fixture-token", "hunter2"]) == ["redacted-token-1", "redacted-input-1"]


def test_a_code_placeholder_keeps_the_shape_the_core_validates():
    r = Redactor()
    r.learn_input({"type": "set_pair_code", "value": "482 915"})
    r.learn_input({"type": "set_pair_code", "value": "482-915"})
    r.learn_input({"type": "set_pair_code", "value": 482915})  # the core also takes a number
    r.learn_input({"type": "set_pair_code", "value": "777777"})
    r.learn_input({"type": "set_pair_code", "value": "48a915"})
    assert r.redact(["482 915", "482-915", "482915", "777777", "48a915"]) == [
        "000 001", "000-001", "000001", "000002", "00x001"]
    assert r.redact_input({"type": "set_pair_code", "value": 482915}) == {"type": "set_pair_code", "value": "000001"}


def test_tokens_and_answers_are_numbered_in_order_of_appearance():
    r = Redactor()
    assert [r.learn("token-a", "token"), r.learn("token-b", "token"), r.learn("token-a", "token")] == [
        "redacted-token-1", "redacted-token-2", "redacted-token-1"]
    assert [r.learn("first answer", "input"), r.learn("second answer", "input")] == [
        "redacted-input-1", "redacted-input-2"]


def test_a_placeholder_maps_to_itself_and_is_never_handed_to_another_secret():
    r = Redactor()
    assert r.learn("000001", "code") == "000001"
    assert r.learn("redacted-token-1", "token") == "redacted-token-1"
    assert r.learn("redacted-input-2", "input") == "redacted-input-2"
    assert r.learn(PAIR_CODE, "code") == "000002"
    assert r.learn(AUTH_TOKEN, "token") == "redacted-token-2"
    assert r.learn(SUDO_PASSWORD, "input") == "redacted-input-1"
    assert r.redact("000001 redacted-token-1") == "000001 redacted-token-1"


def test_redacting_a_redacted_session_again_changes_nothing():
    inputs = [
        {"type": "set_pair_code", "value": PAIR_CODE},
        {"type": "pair_finished", "effect_id": 1, "ok": True, "token": AUTH_TOKEN},
        {"type": "respond_stdin", "request_id": "stdin-1", "input": SUDO_PASSWORD},
    ]
    first = Redactor()
    redacted = []
    for value in inputs:
        first.learn_step(value, EMPTY_REPORT)
        redacted.append(first.redact_input(value))
    second = Redactor()
    for value in redacted:
        second.learn_step(value, EMPTY_REPORT)
    assert [second.redact_input(v) for v in redacted] == redacted
    assert [v.get("value") or v.get("token") or v.get("input") for v in redacted] == [
        "000001", "redacted-token-1", "redacted-input-1"]


def test_a_secret_inside_a_request_line_is_replaced_in_its_json_spelling():
    password = 'pa"ss\\wörd'
    line = json.dumps({"id": 7, "type": "stdin_response", "request_id": "stdin-1", "input": password},
                      ensure_ascii=False, separators=(",", ":"))
    r = Redactor()
    r.learn_report({"ok": True, "revision": 1, "effects": [{"effect_id": 1, "type": "websocket_send", "line": line}]})
    assert r.redact(line) == '{"id":7,"type":"stdin_response","request_id":"stdin-1","input":"redacted-input-1"}'
    ascii_line = json.dumps({"input": password})
    assert r.redact(ascii_line) == '{"input": "redacted-input-1"}'


def test_a_short_secret_is_replaced_only_as_a_whole_or_quoted_string():
    r = Redactor()
    r.learn("ok", "input")
    assert r.redact({"answer": "ok", "text": "looks ok", "line": '{"input":"ok"}'}) == {
        "answer": "redacted-input-1", "text": "looks ok", "line": '{"input":"redacted-input-1"}'}


def test_a_digit_code_is_not_replaced_inside_a_longer_number():
    r = Redactor()
    r.learn(PAIR_CODE, "code")
    assert r.redact(["ts 14829150", "code=482915&", "482915"]) == ["ts 14829150", "code=000001&", "000001"]


def test_a_percent_encoded_code_in_a_qr_payload_becomes_the_placeholder_of_the_decoded_code():
    r = Redactor()
    scanned = {"type": "qr_payload_scanned", "payload": "jcode://pair?host=devbox.local&code=482%20915"}
    r.learn_input(scanned)
    assert r.redact_input(scanned) == {"type": "qr_payload_scanned", "payload": "jcode://pair?host=devbox.local&code=000 001"}
    assert r.redact("482 915") == "000 001"


def test_a_code_a_scenario_put_in_the_form_is_a_secret_too():
    app = App({"scenario": "pairing_ready"})  # the fixture's form holds the code "123456"
    recorder = Recorder(app.options, app=app)
    action = {"type": "set_device_name", "value": "Test iPad"}
    recorder.record("action", action, app.dispatch(action))
    trace = recorder.finish(app)
    assert trace.final["state"]["pairing"]["pair_code"] == "000001"
    assert "123456" not in trace.to_json()
    assert replay(trace).ok
