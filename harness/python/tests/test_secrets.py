"""Secrets (auth tokens, used pairing codes, typed passwords) reach the host
only inside the effects that need them; never the state, the tree or the logs."""

import json

from jcode_mobile import App
from jcode_mobile.fake_gateway import FakeJcodeServer, Host, Reply

from helpers import fill_pairing_form

TOKEN = "tok-secret-XYZ"
CODE = "123456"


def visible_text(app: App) -> dict:
    return {
        "state": json.dumps(app.state(), ensure_ascii=False),
        "tree": json.dumps(app.tree(), ensure_ascii=False),
        "logs": json.dumps(app.logs(0), ensure_ascii=False),
        "snapshot": json.dumps(app.snapshot(), ensure_ascii=False),
    }


def test_token_and_pairing_code_never_leave_the_effects():
    server = FakeJcodeServer(pair_code=CODE, token=TOKEN, replies=[Reply(text="hello")])
    host = Host(server=server)
    fill_pairing_form(host, code=CODE)
    host.dispatch({"type": "submit_pairing"})
    host.dispatch({"type": "send_message", "text": "hi"})
    host.drop_connection()
    host.fire_timers()  # reconnects with the token kept in memory
    assert host.app.state()["connection"]["phase"] == "connected"

    for where, text in visible_text(host.app).items():
        assert TOKEN not in text, where
        assert CODE not in text, where
    logs = host.app.logs(0)["entries"]
    assert any("[redacted]" in json.dumps(e) for e in logs)

    # ...but the host got them where it needs them.
    (pair,) = host.effects_of("http_pair")
    assert pair["code"] == CODE
    assert [e["value"] for e in host.effects_of("secure_store_write")] == [TOKEN]
    connects = host.effects_of("websocket_connect")
    assert len(connects) == 2 and all(e["auth_token"] == TOKEN for e in connects)
    assert host.keychain == {"jcode.token.devbox.local:7643": TOKEN}
    # what the host persists outside the secure store never holds a secret
    writes = host.effects_of("storage_write")
    assert writes and {e["key"] for e in writes} == {"snapshot"}
    for e in writes:
        assert TOKEN not in json.dumps(e) and CODE not in json.dumps(e)


def test_redacted_log_entries_keep_their_shape():
    host = Host(server=FakeJcodeServer(token=TOKEN))
    fill_pairing_form(host, code=CODE)
    host.dispatch({"type": "submit_pairing"})
    entries = {e["type"]: e for e in host.app.logs(0)["entries"]}
    assert entries["set_pair_code"]["payload"]["value"] == "[redacted]"
    assert entries["pair_finished"]["payload"]["token"] == "[redacted]"
    assert entries["pair_finished"]["payload"]["server_name"] == "jcode"  # not a secret (today's jcode always says "jcode")
    # no identity yet: submit asks the device for one, and the code goes out once it is there
    assert [e["type"] for e in entries["submit_pairing"]["effects"]] == ["create_device_id"]
    submit = entries["device_id_created"]["effects"][0]
    assert submit["type"] == "http_pair" and submit["code"] == "[redacted]" and submit["host"] == "devbox.local"
    connect = next(e for e in entries["pair_finished"]["effects"] if e["type"] == "websocket_connect")
    assert connect["auth_token"] == "[redacted]" and connect["url"] == "ws://devbox.local:7643/ws"


def test_password_typed_for_a_tool_is_only_in_the_socket_line():
    app = App({"scenario": "stdin_request_pending"})
    password = "hunter2-very-secret"
    report = app.dispatch({"type": "respond_stdin", "request_id": "stdin-1", "input": password})
    (send,) = report["effects"]
    assert json.loads(send["line"])["input"] == password
    for where, text in visible_text(app).items():
        assert password not in text, where
