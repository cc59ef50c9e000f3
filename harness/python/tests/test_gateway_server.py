"""The fake jcode gateway on real sockets (jcode_mobile.gateway), spoken to with aiohttp's client.

Each test starts its own gateway on 127.0.0.1, port 0, and bounds its run
time (``run`` gives every test coroutine at most 10 s; reads wait at most a
few seconds). The rules behind the wire are FakeJcodeServer's (tested in
test_fake_gateway_rules.py); these tests pin what the wire adds: one port for
HTTP and the upgrade, one event per text frame, drops without a close frame,
and each injected fault.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, List, Optional, Tuple, TypeVar

import aiohttp
import pytest

from jcode_mobile.fake_gateway import FakeJcodeServer, Reply
from jcode_mobile.gateway import Faults, GatewayServer, RawReply, RunningGateway, load_script

T = TypeVar("T")

HARNESS = Path(__file__).resolve().parents[1]
TOKEN = "ab" * 32  # a token the fake accepts (real tokens are 64 hex digits)
WORKDIR = "/home/dev/app"
FRESH = "session_otter_1700000000001_0000000000000001"  # the first brand-new session
FRESH2 = "session_heron_1700000000002_0000000000000002"
SUBSCRIBED = ['{"type":"ack","id":1}', '{"type":"session","session_id":"%s"}' % FRESH, '{"type":"done","id":1}']


def run(coro: Awaitable[T], timeout: float = 10.0) -> T:
    """Run a test coroutine on a fresh loop, never longer than ``timeout``."""
    return asyncio.run(asyncio.wait_for(coro, timeout))  # type: ignore[arg-type]


def fake(**options: Any) -> FakeJcodeServer:
    options.setdefault("accepted_tokens", (TOKEN,))
    return FakeJcodeServer(**options)


@contextlib.asynccontextmanager
async def serving(server: Optional[FakeJcodeServer] = None, **options: Any
                  ) -> AsyncIterator[Tuple[GatewayServer, aiohttp.ClientSession]]:
    """A started gateway (127.0.0.1, a free port) and a client session; both closed after."""
    gateway = GatewayServer(server if server is not None else fake(), host="127.0.0.1", port=0, **options)
    await gateway.start()
    try:
        async with aiohttp.ClientSession() as client:
            yield gateway, client
    finally:
        await gateway.stop()


def line(**request: Any) -> str:
    return json.dumps(request, separators=(",", ":"))


async def connect(gateway: GatewayServer, client: aiohttp.ClientSession, token: str = TOKEN,
                  **options: Any) -> aiohttp.ClientWebSocketResponse:
    return await client.ws_connect(gateway.url + "/ws", headers={"Authorization": f"Bearer {token}"}, **options)


async def texts(ws: aiohttp.ClientWebSocketResponse, n: int, timeout: float = 3.0) -> List[str]:
    """The next ``n`` text frames (fails on anything else)."""
    got = []
    for _ in range(n):
        message = await asyncio.wait_for(ws.receive(), timeout)
        assert message.type == aiohttp.WSMsgType.TEXT, (message, got)
        got.append(message.data)
    return got


async def subscribed(gateway: GatewayServer, client: aiohttp.ClientSession, **options: Any
                     ) -> aiohttp.ClientWebSocketResponse:
    ws = await connect(gateway, client, **options)
    await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
    assert len(await texts(ws, 3)) == 3
    return ws


async def ends_without_close_frame(ws: aiohttp.ClientWebSocketResponse, timeout: float = 3.0) -> None:
    """The next message says the connection ended abnormally: no close frame came (1006)."""
    message = await asyncio.wait_for(ws.receive(), timeout)
    assert message.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR), message
    assert ws.close_code == 1006


async def pair(gateway: GatewayServer, client: aiohttp.ClientSession, code: str = "123456") -> Tuple[int, Any]:
    body = {"code": code, "device_id": "dev-1", "device_name": "Test iPhone"}
    async with client.post(gateway.url + "/pair", json=body) as response:
        return response.status, await response.json()


# -- HTTP -------------------------------------------------------------------------------------------


def test_health_answers_ok_with_the_version_and_the_gateway_flag():
    async def scenario() -> None:
        async with serving(fake(version="0.9.2")) as (gateway, client):
            async with client.get(gateway.url + "/health") as response:
                assert response.status == 200
                assert response.headers["Content-Type"] == "application/json"
                assert "Access-Control-Allow-Origin" not in response.headers  # jcode sends "*"; the fake grants no page
                assert await response.text() == '{"status":"ok","version":"0.9.2","gateway":true}'
    run(scenario())


def test_pair_returns_a_token_and_the_code_works_once():
    async def scenario() -> None:
        async with serving(fake(token="cd" * 32)) as (gateway, client):
            assert await pair(gateway, client) == (200, {"token": "cd" * 32, "server_name": "jcode",
                                                         "server_version": "0.9.2"})
            assert await pair(gateway, client) == (401, {"error": "Invalid or expired pairing code"})
    run(scenario())


def test_pair_with_a_wrong_code_is_401_and_a_body_that_is_not_json_is_400():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            assert await pair(gateway, client, code="000000") == (401, {"error": "Invalid or expired pairing code"})
            async with client.post(gateway.url + "/pair", data=b"not json") as response:
                assert response.status == 400
                assert await response.json() == {"error": "Invalid JSON: expected value at line 1 column 1"}
            assert (await pair(gateway, client))[0] == 200  # the right code was not used up
    run(scenario())


def test_other_paths_are_404_and_options_is_a_204_preflight():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            async with client.get(gateway.url + "/ws") as response:  # /ws without an upgrade is plain HTTP
                assert (response.status, await response.json()) == (404, {"error": "Not found"})
            async with client.post(gateway.url + "/health") as response:
                assert (response.status, await response.json()) == (404, {"error": "Not found"})
            async with client.options(gateway.url + "/pair") as response:
                assert response.status == 204
                assert not [name for name in response.headers if name.lower().startswith("access-control-")]
    run(scenario())


# -- a web page the person has open -----------------------------------------------------------------


def test_a_web_page_cannot_pair_through_another_origin_or_host_name():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            body = {"code": "123456", "device_id": "dev-1", "device_name": "evil"}
            port = gateway.port
            for headers, error in [
                ({"Origin": "https://evil.example"}, "Forbidden: origin 'https://evil.example' is not a loopback page"),
                ({"Origin": "null"}, "Forbidden: origin 'null' is not a loopback page"),
                ({"Host": f"evil.example:{port}"}, f"Forbidden: host 'evil.example:{port}' is not this loopback gateway"),
                ({"Host": f"127.0.0.1:{port + 1}"}, f"Forbidden: host '127.0.0.1:{port + 1}' is not this loopback gateway"),
                ({"Host": f"localhost.evil.example:{port}"},
                 f"Forbidden: host 'localhost.evil.example:{port}' is not this loopback gateway"),
            ]:
                async with client.post(gateway.url + "/pair", json=body, headers=headers) as response:
                    assert (response.status, await response.json()) == (403, {"error": error}), headers
                    assert "Access-Control-Allow-Origin" not in response.headers
            assert (await pair(gateway, client))[0] == 200, "the code was not used up"
    run(scenario())


def test_a_web_page_cannot_drive_the_control_endpoint_with_a_cross_origin_text_post():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            command = b'{"command":"add_pair_code","code":"654321"}'
            async with client.post(gateway.url + "/_fake/control", data=command,
                                   headers={"Content-Type": "text/plain", "Origin": "https://evil.example"}) as response:
                assert response.status == 403
                assert "Access-Control-Allow-Origin" not in response.headers
            assert (await pair(gateway, client, code="654321"))[0] == 401, "no code was added"
    run(scenario())


def test_loopback_hosts_and_pages_pair_and_drive_the_fake():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            port = gateway.port
            for headers in [{"Host": f"localhost:{port}"}, {"Host": f"[::1]:{port}", "Origin": "http://localhost:3000"},
                            {"Host": f"LOCALHOST:{port}", "Origin": "http://127.0.0.1:8080"}]:
                command = {"command": "add_pair_code", "code": "654321"}
                async with client.post(gateway.url + "/_fake/control", json=command, headers=headers) as response:
                    assert response.status == 200, headers
                body = {"code": "654321", "device_id": "dev-1", "device_name": "Test iPhone"}
                async with client.post(gateway.url + "/pair", json=body, headers=headers) as response:
                    assert response.status == 200, headers
    run(scenario())


# -- the upgrade ------------------------------------------------------------------------------------


UPGRADE_HEADERS = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
                   "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}


def test_upgrade_with_an_unknown_token_is_refused_with_401_before_the_socket_opens():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await connect(gateway, client, token="ef" * 32)
            assert refused.value.status == 401
            headers = {**UPGRADE_HEADERS, "Authorization": "Bearer " + "ef" * 32}
            async with client.get(gateway.url + "/ws", headers=headers) as response:
                assert response.status == 401
                assert await response.text() == "Unknown or revoked auth token; re-pair this device\n"
            async with client.get(gateway.url + "/ws", headers=UPGRADE_HEADERS) as response:
                assert response.status == 401
                assert await response.text() == "Missing Authorization header or token query parameter\n"
            assert gateway.connections() == 0
    run(scenario())


def test_upgrade_anywhere_but_ws_is_404():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            headers = {**UPGRADE_HEADERS, "Authorization": f"Bearer {TOKEN}"}
            async with client.get(gateway.url + "/socket", headers=headers) as response:
                assert response.status == 404
                assert await response.text() == "WebSocket endpoint not found\n"
    run(scenario())


def test_the_token_may_come_in_the_query_string():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            ws = await client.ws_connect(gateway.url + f"/ws?token={TOKEN}")
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            assert await texts(ws, 3) == SUBSCRIBED
            await ws.close()
    run(scenario())


# -- frames ---------------------------------------------------------------------------------------


def test_subscribe_is_answered_with_ack_session_and_done_each_in_its_own_frame():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            ws = await connect(gateway, client)
            assert gateway.connections() == 1
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            assert await texts(ws, 3) == [
                '{"type":"ack","id":1}',
                '{"type":"session","session_id":"session_otter_1700000000001_0000000000000001"}',
                '{"type":"done","id":1}',
            ]
            await ws.close()
    run(scenario())


def test_one_frame_may_carry_several_requests():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            ws = await connect(gateway, client)
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR) + "\n" + line(type="ping", id=2))
            assert await texts(ws, 5) == SUBSCRIBED + ['{"type":"ack","id":2}', '{"type":"pong","id":2}']
            await ws.close()
    run(scenario())


def test_a_first_request_other_than_subscribe_gets_an_error_frame_then_the_connection_drops_without_close_frame():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            ws = await connect(gateway, client)
            await ws.send_str(line(type="get_history", id=7))
            assert await texts(ws, 1) == [
                '{"type":"error","id":7,'
                '"message":"Client must Subscribe with a working_dir before sending stateful requests"}',
            ]
            await ends_without_close_frame(ws)
            assert gateway.connections() == 0
    run(scenario())


def test_a_client_that_closes_leaves_the_server():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            ws = await subscribed(gateway, client)
            await ws.close()
            for _ in range(100):
                if gateway.connections() == 0:
                    break
                await asyncio.sleep(0.01)
            assert gateway.connections() == 0
            assert [s.open for s in gateway.fake.sockets] == [False]
    run(scenario())


def test_the_gateway_pings_and_answers_pings():
    async def scenario() -> None:
        async with serving(ping_interval=0.1) as (gateway, client):
            ws = await connect(gateway, client, autoping=False)
            message = await asyncio.wait_for(ws.receive(), 3)
            assert (message.type, message.data) == (aiohttp.WSMsgType.PING, b"")
            await ws.ping(b"are you there")
            while True:
                message = await asyncio.wait_for(ws.receive(), 3)
                if message.type != aiohttp.WSMsgType.PING:
                    break
            assert (message.type, message.data) == (aiohttp.WSMsgType.PONG, b"are you there")
            await ws.close()
    run(scenario())


# -- turns ---------------------------------------------------------------------------------------


def test_a_scripted_turn_streams_reasoning_a_tool_call_tokens_and_done():
    reply = Reply(text="All 12 tests pass.", reasoning="Run the suite first.", reasoning_secs=1.5,
                  preamble="Running them.", tokens=(1200, 80),
                  tools=[{"id": "toolu_1", "name": "bash", "input": {"command": "make test"}, "output": "12 passed"}])

    async def scenario() -> None:
        async with serving(fake(replies=[reply])) as (gateway, client):
            ws = await subscribed(gateway, client)
            await ws.send_str(line(type="message", id=2, content="Run the tests"))
            assert [json.loads(t) for t in await texts(ws, 14)] == [
                {"type": "ack", "id": 2},
                {"type": "reasoning_delta", "text": "Run the suite first."},
                {"type": "reasoning_done", "duration_secs": 1.5},
                {"type": "text_delta", "text": "Running them."},
                {"type": "tool_start", "id": "toolu_1", "name": "bash"},
                {"type": "tool_input", "delta": '{"command":"make test"}'},
                {"type": "tool_exec", "id": "toolu_1", "name": "bash"},
                {"type": "message_end", "stop_reason": "tool_use"},
                {"type": "tool_done", "id": "toolu_1", "name": "bash", "output": "12 passed"},
                {"type": "text_delta", "text": "All 12 "},
                {"type": "text_delta", "text": "tests pass."},
                {"type": "message_end", "stop_reason": "end_turn"},
                {"type": "tokens", "input": 1200, "output": 80},
                {"type": "done", "id": 2},
            ]
            await ws.close()
    run(scenario())


def test_a_raw_events_reply_streams_exactly_those_events_then_done_with_the_message_id():
    raw = load_script({"replies": [{"events": [
        {"type": "text_delta", "text": "Héllo"},
        {"type": "notification", "from_session": "session-owl", "notification_type": {"kind": "message"},
         "message": "ping from owl"},
        {"type": "message_end"},
    ]}]})

    async def scenario() -> None:
        async with serving(raw.build(accepted_tokens=(TOKEN,))) as (gateway, client):
            ws = await subscribed(gateway, client)
            await ws.send_str(line(type="message", id=5, content="hi"))
            assert await texts(ws, 5) == [
                '{"type":"ack","id":5}',
                '{"type":"text_delta","text":"Héllo"}',
                '{"type":"notification","from_session":"session-owl","notification_type":{"kind":"message"},'
                '"message":"ping from owl"}',
                '{"type":"message_end"}',
                '{"type":"done","id":5}',
            ]
            assert gateway.fake.sessions[FRESH]["messages"] == [
                {"role": "user", "content": "hi"}, {"role": "assistant", "content": "Héllo"},
            ]
            await ws.close()
    run(scenario())


def test_a_held_turn_is_finished_by_the_server_later():
    async def scenario() -> None:
        async with serving(fake(replies=[Reply(text="one two three four", hold_after=1)])) as (gateway, client):
            ws = await subscribed(gateway, client)
            await ws.send_str(line(type="message", id=2, content="count"))
            assert await texts(ws, 2) == ['{"type":"ack","id":2}', '{"type":"text_delta","text":"one two "}']
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(ws.receive(), 0.2)
            gateway.finish_turn()
            assert await texts(ws, 3) == ['{"type":"text_delta","text":"three four"}',
                                          '{"type":"message_end","stop_reason":"end_turn"}', '{"type":"done","id":2}']
            await ws.close()
    run(scenario())


# -- faults ---------------------------------------------------------------------------------------


def test_drop_after_ends_every_connection_after_that_many_events():
    async def scenario() -> None:
        async with serving(faults=Faults(drop_after=2)) as (gateway, client):
            for _ in range(2):  # a reconnection counts from 0 again
                ws = await connect(gateway, client)
                await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
                assert await texts(ws, 2) == SUBSCRIBED[:1] + [ws_session_line(gateway)]
                await ends_without_close_frame(ws)
    run(scenario())


def ws_session_line(gateway: GatewayServer) -> str:
    """The session frame of the newest connection."""
    return '{"type":"session","session_id":"%s"}' % gateway.fake.sockets[-1].session_id


def test_drop_times_limits_how_many_connections_drop_after_drops():
    async def scenario() -> None:
        async with serving(faults=Faults(drop_after=1, drop_times=1)) as (gateway, client):
            ws = await connect(gateway, client)
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            assert await texts(ws, 1) == ['{"type":"ack","id":1}']
            await ends_without_close_frame(ws)
            ws = await connect(gateway, client)
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            assert await texts(ws, 3) == ['{"type":"ack","id":1}',
                                          '{"type":"session","session_id":"%s"}' % FRESH2, '{"type":"done","id":1}']
            assert gateway.faults.drop_times == 0
            await ws.close()
    run(scenario())


def test_drop_on_request_drops_after_the_server_read_the_message_and_before_its_ack():
    async def scenario() -> None:
        async with serving(faults=Faults(drop_on_request="message", drop_times=1)) as (gateway, client):
            ws = await subscribed(gateway, client)
            await ws.send_str(line(type="message", id=2, content="Did it arrive?"))
            await ends_without_close_frame(ws)  # no ack, nothing of the turn
            # the server read it and did what it said
            assert [r["content"] for r in gateway.fake.requests if r["type"] == "message"] == ["Did it arrive?"]
            assert gateway.fake.sessions[FRESH]["messages"][0] == {"role": "user", "content": "Did it arrive?"}
            assert gateway.faults.drop_times == 0
    run(scenario())


def test_reload_sends_reloading_drops_every_connection_and_the_session_can_be_resumed():
    async def scenario() -> None:
        async with serving(fake(replies=[Reply(text="working on it", hold_after=1)])) as (gateway, client):
            ws = await subscribed(gateway, client)
            await ws.send_str(line(type="message", id=2, content="Fix the bug"))
            assert await texts(ws, 2) == ['{"type":"ack","id":2}', '{"type":"text_delta","text":"working on "}']
            assert gateway.reload() == 1
            assert await texts(ws, 1) == ['{"type":"reloading"}']
            await ends_without_close_frame(ws)
            again = await connect(gateway, client)
            await again.send_str(line(type="subscribe", id=1, working_dir=WORKDIR, target_session_id=FRESH))
            history = json.loads((await texts(again, 2))[1])
            assert (history["type"], history["session_id"]) == ("history", FRESH)
            assert history["messages"] == [{"role": "user", "content": "Fix the bug"}]
            assert history["was_interrupted"] is True
            await again.close()
    run(scenario())


def test_revoking_tokens_drops_their_connections_and_the_next_upgrade_gets_401():
    async def scenario() -> None:
        async with serving(fake(token="cd" * 32)) as (gateway, client):
            status, paired = await pair(gateway, client)
            ws = await subscribed(gateway, client, token=paired["token"])
            assert gateway.revoke_all_tokens() == 1
            await ends_without_close_frame(ws)
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await connect(gateway, client, token=paired["token"])
            assert refused.value.status == 401
    run(scenario())


def test_revoking_without_drop_keeps_open_connections_as_real_jcode_does():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            ws = await subscribed(gateway, client)
            assert gateway.revoke_token(TOKEN, drop=False) == 0
            await ws.send_str(line(type="ping", id=2))
            assert await texts(ws, 2) == ['{"type":"ack","id":2}', '{"type":"pong","id":2}']
            await ws.close()
    run(scenario())


def test_request_session_close_pushes_the_event_and_the_connection_stays():
    async def scenario() -> None:
        async with serving() as (gateway, client):
            ws = await subscribed(gateway, client)
            gateway.request_session_close("Stopped by coordinator")
            assert await texts(ws, 1) == ['{"type":"session_close_requested","reason":"Stopped by coordinator"}']
            await ws.send_str(line(type="ping", id=2))
            assert await texts(ws, 2) == ['{"type":"ack","id":2}', '{"type":"pong","id":2}']
            assert gateway.connections() == 1
            await ws.close()
    run(scenario())


def test_garble_next_puts_a_broken_line_before_the_next_frames_and_loses_nothing():
    async def scenario() -> None:
        async with serving(faults=Faults(garble_next=1)) as (gateway, client):
            ws = await connect(gateway, client)
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            assert await texts(ws, 4) == ['{"type":"a'] + SUBSCRIBED
            assert gateway.faults.garble_next == 0
            await ws.close()
    run(scenario())


def test_garble_every_breaks_every_nth_frame_of_a_connection():
    async def scenario() -> None:
        async with serving(faults=Faults(garble_every=2)) as (gateway, client):
            ws = await connect(gateway, client)
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            got = await texts(ws, 4)
            assert got == [SUBSCRIBED[0], SUBSCRIBED[1][: len(SUBSCRIBED[1]) // 2], SUBSCRIBED[1], SUBSCRIBED[2]]
            await ws.close()
    run(scenario())


def test_delay_keeps_the_order_of_frames():
    async def scenario() -> None:
        async with serving(faults=Faults(delay_ms=30)) as (gateway, client):
            ws = await connect(gateway, client)
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            await ws.send_str(line(type="ping", id=2))
            while len(gateway.fake.requests) < 2:  # both read: their answers wait in the delayed queue
                await asyncio.sleep(0.005)
            gateway.push({"type": "notification", "from_session": "session-owl",
                          "notification_type": {"kind": "message"}, "message": "hello"})
            assert await texts(ws, 6) == SUBSCRIBED + [
                '{"type":"ack","id":2}', '{"type":"pong","id":2}',
                '{"type":"notification","from_session":"session-owl","notification_type":{"kind":"message"},'
                '"message":"hello"}',
            ]
            await ws.close()
    run(scenario())


def test_duplicate_sends_every_event_frame_twice():
    async def scenario() -> None:
        async with serving(faults=Faults(duplicate=True)) as (gateway, client):
            ws = await connect(gateway, client)
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            assert await texts(ws, 6) == [SUBSCRIBED[0], SUBSCRIBED[0], SUBSCRIBED[1], SUBSCRIBED[1],
                                          SUBSCRIBED[2], SUBSCRIBED[2]]
            await ws.close()
    run(scenario())


def test_split_messages_arrive_whole():
    async def scenario() -> None:
        async with serving(faults=Faults(split=True, split_pause_ms=5)) as (gateway, client):
            ws = await connect(gateway, client)
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            assert await texts(ws, 3) == SUBSCRIBED
            gateway.push({"type": "text_delta", "text": "ünïcödé " * 40})  # a multi-byte character is cut
            assert await texts(ws, 1) == [json.dumps({"type": "text_delta", "text": "ünïcödé " * 40},
                                                     separators=(",", ":"), ensure_ascii=False)]
            await ws.close()
    run(scenario())


def masked_text_frame(text: str) -> bytes:
    payload = text.encode("utf-8")
    assert len(payload) < 126
    mask = b"\x01\x02\x03\x04"
    return bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def read_frame(reader: asyncio.StreamReader) -> Tuple[bool, int, bytes]:
    """One unmasked server frame: (fin, opcode, payload)."""
    head = await reader.readexactly(2)
    length = head[1] & 0x7F
    if length == 126:
        length = struct.unpack("!H", await reader.readexactly(2))[0]
    elif length == 127:
        length = struct.unpack("!Q", await reader.readexactly(8))[0]
    return bool(head[0] & 0x80), head[0] & 0x0F, await reader.readexactly(length)


def test_split_writes_a_text_frame_without_fin_then_a_continuation_frame():
    async def scenario() -> None:
        async with serving(faults=Faults(split=True, split_pause_ms=5)) as (gateway, _):
            reader, writer = await asyncio.open_connection("127.0.0.1", gateway.port)
            key = base64.b64encode(b"0123456789abcdef").decode()
            writer.write((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{gateway.port}\r\nUpgrade: websocket\r\n"
                          f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                          f"Authorization: Bearer {TOKEN}\r\n\r\n").encode())
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 101 ")
            writer.write(masked_text_frame(line(type="subscribe", id=1, working_dir=WORKDIR)))
            first, second = await read_frame(reader), await read_frame(reader)
            assert (first[0], first[1]) == (False, 0x1)  # text, FIN=0
            assert (second[0], second[1]) == (True, 0x0)  # continuation, FIN=1
            assert (first[2], second[2]) == (b'{"type":"a', b'ck","id":1}')
            writer.close()
    run(scenario())


def test_coalesce_puts_up_to_n_events_in_one_frame_newline_separated():
    async def scenario() -> None:
        async with serving(faults=Faults(coalesce=2)) as (gateway, client):
            ws = await connect(gateway, client)
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            assert await texts(ws, 2) == [SUBSCRIBED[0] + "\n" + SUBSCRIBED[1], SUBSCRIBED[2]]
            await ws.close()
    run(scenario())


def test_stall_leaves_requests_unanswered_until_it_is_lifted():
    async def scenario() -> None:
        async with serving(faults=Faults(stall=True)) as (gateway, client):
            ws = await connect(gateway, client)
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(ws.receive(), 0.3)  # the client times out
            assert gateway.fake.requests == []
            gateway.set_faults(stall=False)
            assert await texts(ws, 3) == SUBSCRIBED
            await ws.close()
    run(scenario())


def test_http_stall_never_answers_health():
    async def scenario() -> None:
        async with serving(faults=Faults(http_stall=True)) as (gateway, client):
            with pytest.raises(asyncio.TimeoutError):
                async with client.get(gateway.url + "/health", timeout=aiohttp.ClientTimeout(total=0.3)):
                    pass
            gateway.set_faults(http_stall=False)
            async with client.get(gateway.url + "/health") as response:
                assert response.status == 200
    run(scenario())


def test_http_status_answers_health_and_pair_with_that_status_without_using_the_code():
    async def scenario() -> None:
        async with serving(faults=Faults(http_status=500)) as (gateway, client):
            async with client.get(gateway.url + "/health") as response:
                assert (response.status, await response.json()) == (500, {"error": "Internal Server Error"})
            assert await pair(gateway, client) == (500, {"error": "Internal Server Error"})
            gateway.set_faults(http_status=None)
            assert (await pair(gateway, client))[0] == 200
    run(scenario())


def test_faults_refuse_unknown_names_and_bad_values():
    with pytest.raises(ValueError, match="unknown fault"):
        Faults().replace(explode=True)
    with pytest.raises(ValueError, match="must not be negative"):
        Faults(delay_ms=-1)
    with pytest.raises(ValueError, match="must be true or false"):
        Faults.from_dict({"split": 1})
    with pytest.raises(ValueError, match="drop_on_request must be a request type"):
        Faults(drop_on_request="")
    assert Faults.from_dict({"drop_on_request": "message"}).drop_on_request == "message"


# -- RunningGateway (synchronous callers) ---------------------------------------------------------


def http_get(url: str) -> Tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status, response.read()


def test_running_gateway_serves_from_a_thread_and_runs_calls_on_its_loop():
    with RunningGateway(fake()) as gateway:
        assert gateway.url == f"http://127.0.0.1:{gateway.port}"
        assert http_get(gateway.url + "/health") == (200, b'{"status":"ok","version":"0.9.2","gateway":true}')
        assert gateway.call(lambda server: server.health_checks) == [("127.0.0.1", gateway.port, False)]
        with pytest.raises(RuntimeError, match="0 turns are running"):
            gateway.finish_turn()
        assert gateway.set_faults(delay_ms=5).delay_ms == 5

        async def client() -> List[str]:
            async with aiohttp.ClientSession() as session:
                ws = await session.ws_connect(gateway.url + "/ws", headers={"Authorization": f"Bearer {TOKEN}"})
                await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
                got = await texts(ws, 3)
                assert gateway.connections() == 1  # called from another thread: hops onto the loop
                gateway.push({"type": "reloading"})
                got += await texts(ws, 1)
                gateway.revoke_all_tokens()
                await ends_without_close_frame(ws)
                return got

        assert run(client()) == SUBSCRIBED + ['{"type":"reloading"}']
        assert gateway.connections() == 0


def test_running_gateway_stops_quickly_even_with_stalled_clients():
    gateway = RunningGateway(fake(), faults=Faults(stall=True, http_stall=True)).start()

    async def hang() -> None:
        async with aiohttp.ClientSession() as session:
            ws = await session.ws_connect(gateway.url + "/ws", headers={"Authorization": f"Bearer {TOKEN}"})
            await ws.send_str(line(type="subscribe", id=1, working_dir=WORKDIR))
            with contextlib.suppress(asyncio.TimeoutError, aiohttp.ClientError):
                await session.get(gateway.url + "/health", timeout=aiohttp.ClientTimeout(total=0.2))
            started = time.monotonic()
            await asyncio.get_running_loop().run_in_executor(None, gateway.stop)
            assert time.monotonic() - started < 5
            message = await asyncio.wait_for(ws.receive(), 3)
            assert message.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR)

    run(hang())


# -- scripts --------------------------------------------------------------------------------------


def test_a_script_file_sets_the_code_history_replies_and_faults(tmp_path: Path):
    path = tmp_path / "session.json"
    path.write_text(json.dumps({
        "code": "246810",
        "history": [{"role": "user", "content": "earlier"}],
        "replies": [{"text": "Sure.", "tokens": [10, 2]}, {"events": [{"type": "text_delta", "text": "Raw"}],
                                                           "hold_after": 1}],
        "faults": {"coalesce": 3},
    }))
    server_kwargs, replies, faults = load_script(path)
    assert server_kwargs == {"pair_code": "246810", "history": [{"role": "user", "content": "earlier"}]}
    assert replies[0] == Reply(text="Sure.", tokens=(10, 2))
    assert replies[1] == RawReply(raw_events=[{"type": "text_delta", "text": "Raw"}], hold_after=1)
    assert faults == Faults(coalesce=3)
    assert load_script(path).build().pair_codes == {"246810"}


def test_a_script_with_an_unknown_key_is_refused():
    with pytest.raises(ValueError, match="unknown script key colour"):
        load_script({"colour": "red"})
    with pytest.raises(ValueError, match="unknown reply field txt"):
        load_script({"replies": [{"txt": "typo"}]})


# -- the control endpoint ------------------------------------------------------------------------


def test_the_control_endpoint_drives_the_fake_from_another_process():
    async def control(client: aiohttp.ClientSession, gateway: GatewayServer, **command: Any) -> Tuple[int, Any]:
        async with client.post(gateway.url + "/_fake/control", json=command) as response:
            return response.status, await response.json()

    async def scenario() -> None:
        async with serving() as (gateway, client):
            assert await control(client, gateway, command="add_pair_code", code="654321") == (200, {"ok": True})
            assert (await pair(gateway, client, code="654321"))[0] == 200
            ws = await subscribed(gateway, client)
            assert await control(client, gateway, command="push", events=[{"type": "reloading"}]) == (
                200, {"ok": True, "events": [{"type": "reloading"}], "connections": 1})
            assert await texts(ws, 1) == ['{"type":"reloading"}']
            status, answer = await control(client, gateway, command="set_faults", faults={"delay_ms": 7})
            assert (status, answer["faults"]["delay_ms"]) == (200, 7)
            status, state = await control(client, gateway, command="state")
            assert (status, state["connections"], state["paired_devices"]) == (200, 1, ["Test iPhone"])
            assert await control(client, gateway, command="request_session_close", reason="idle") == (
                200, {"ok": True, "event": {"type": "session_close_requested", "reason": "idle"}})
            assert await texts(ws, 1) == ['{"type":"session_close_requested","reason":"idle"}']
            assert await control(client, gateway, command="reload") == (200, {"ok": True, "dropped": 1})
            assert await texts(ws, 1) == ['{"type":"reloading"}']
            await ends_without_close_frame(ws)
            assert await control(client, gateway, command="explode") == (
                400, {"ok": False, "error": "unknown command 'explode'"})
    run(scenario())


def test_the_control_endpoint_pulls_the_switches_of_the_session_rules():
    """The switches of the rules in test_fake_gateway_rules.py, from another process:
    a foreign turn (held, then finished), reload_starting, compaction."""
    async def control(client: aiohttp.ClientSession, gateway: GatewayServer, **command: Any) -> Tuple[int, Any]:
        async with client.post(gateway.url + "/_fake/control", json=command) as response:
            return response.status, await response.json()

    async def scenario() -> None:
        async with serving() as (gateway, client):
            ws = await subscribed(gateway, client)
            status, answer = await control(client, gateway, command="foreign_turn", session_id=FRESH, request_id=41,
                                           reply={"text": "one two three", "hold_after": 1})
            assert (status, answer) == (200, {"ok": True, "events": [{"type": "text_delta", "text": "one two "}]})
            assert await texts(ws, 1) == ['{"type":"text_delta","text":"one two "}']
            await ws.send_str(line(type="clear", id=2))
            assert await texts(ws, 2) == ['{"type":"ack","id":2}', '{"type":"error","id":2,"message":"Cannot handle '
                                          'clear while the session is busy. Try again after the current turn '
                                          'finishes.","retry_after_secs":1}']
            assert (await control(client, gateway, command="finish_foreign_turn"))[0] == 200
            assert await texts(ws, 3) == ['{"type":"text_delta","text":"three"}',
                                          '{"type":"message_end","stop_reason":"end_turn"}', '{"type":"done","id":41}']
            assert await control(client, gateway, command="set_rules", rules={"reload_starting": True}) == (
                200, {"ok": True, "rules": {"reload_starting": True}})
            await ws.send_str(line(type="message", id=3, content="Ship it"))
            assert await texts(ws, 2) == ['{"type":"ack","id":3}', '{"type":"reloading"}']
            assert await control(client, gateway, command="compact_session", keep_last=1) == (
                200, {"ok": True, "compacted": 1, "messages": 1})
            assert (await control(client, gateway, command="finish_foreign_turn"))[0] == 400
            assert (await control(client, gateway, command="set_rules", rules={"reload": 1}))[0] == 400
    run(scenario())


# -- python -m jcode_mobile.gateway -------------------------------------------------------------------


class Lines:
    """The lines a process prints, read by a thread so each wait is bounded."""

    def __init__(self, process: "subprocess.Popen[str]"):
        self.queue: "queue.Queue[str]" = queue.Queue()
        self.thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self.thread.start()

    def _read(self, process: "subprocess.Popen[str]") -> None:
        assert process.stdout is not None
        for text in process.stdout:
            self.queue.put(text)

    def next(self, timeout: float = 10.0) -> str:
        return self.queue.get(timeout=timeout)


def test_the_command_line_gateway_listens_logs_without_tokens_and_exits_on_sigterm():
    process = subprocess.Popen([sys.executable, "-m", "jcode_mobile.gateway", "--port", "0", "--code", "246810"],
                               cwd=HARNESS, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    lines = Lines(process)
    try:
        first = lines.next()
        found = re.fullmatch(r"jcode fake gateway listening on http://127\.0\.0\.1:(\d+) \(pairing code 246810\)\n",
                             first)
        assert found, first
        url = f"http://127.0.0.1:{found.group(1)}"
        assert http_get(url + "/health")[0] == 200
        request = urllib.request.Request(url + "/pair", method="POST", data=json.dumps(
            {"code": "246810", "device_id": "dev-1", "device_name": "Test iPhone"}).encode())
        with urllib.request.urlopen(request, timeout=5) as response:
            token = json.loads(response.read())["token"]
        assert re.fullmatch(r"[0-9a-f]{64}", token)
        assert lines.next() == "HTTP GET /health -> 200\n"
        assert lines.next() == "HTTP POST /pair -> 200 (device 'Test iPhone')\n"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=5) == 0
        lines.thread.join(5)  # the pipe is at its end
        rest = []
        while not lines.queue.empty():
            rest.append(lines.queue.get())
        assert rest == ["jcode fake gateway stopped\n"]
        assert token not in first + "".join(rest)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(5)
        lines.thread.join(5)
        for pipe in (process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("port, message", [
    ("65536", "must be from 1 to 65535 (or 0: a free one)"),
    ("99999", "must be from 1 to 65535 (or 0: a free one)"),
    ("-1", "must be from 1 to 65535 (or 0: a free one)"),
    ("http", "'http' is not a port number"),
])
def test_the_command_line_gateway_refuses_a_port_out_of_0_to_65535(port, message):
    # before: --port 99999 listened on port 34463 (99999 - 65536), saying nothing
    result = subprocess.run([sys.executable, "-m", "jcode_mobile.gateway", "--port", port, "--code", "246810"],
                            cwd=HARNESS, capture_output=True, text=True, timeout=10)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == f"python -m jcode_mobile.gateway: error: argument --port: {message}"
    assert result.stderr.startswith("usage: python -m jcode_mobile.gateway ")
    assert result.stdout == ""  # it never listened


@pytest.mark.timeout(10)
@pytest.mark.parametrize("port", [-1, 65536, 99999])
def test_a_gateway_server_refuses_a_port_out_of_0_to_65535(port):
    with pytest.raises(ValueError) as refused:
        GatewayServer(port=port)
    assert str(refused.value) == f"port {port} is not from 1 to 65535 (or 0: a free one)"


def test_the_command_line_gateway_refuses_a_non_loopback_address():
    result = subprocess.run([sys.executable, "-m", "jcode_mobile.gateway", "--port", "0", "--host", "0.0.0.0"],
                            cwd=HARNESS, capture_output=True, text=True, timeout=10)
    assert result.returncode == 2
    assert result.stderr == ("refusing to listen on 0.0.0.0: not a loopback address "
                             "(use --allow-remote to force)\n")
