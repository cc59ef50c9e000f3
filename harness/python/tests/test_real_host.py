"""RealHost: the core's effects executed for real, over loopback sockets.

Each test starts a tiny aiohttp gateway on 127.0.0.1 (port 0) that speaks just
enough of today's jcode (GET /health, POST /pair, /ws with a Bearer token) and
bounds its own run time. Expected values are literals.
"""

import asyncio
import json
import os
import socket
import stat
from typing import Any, Awaitable, Callable, List, Optional

import pytest
from aiohttp import WSMsgType, web

from jcode_mobile import App, find_node
from jcode_mobile.host import (
    BackgroundHost,
    DeviceScript,
    FileSecureStore,
    FileStorage,
    HostTimeout,
    MemorySecureStore,
    MemoryStorage,
    RealHost,
    StoreError,
    VirtualClock,
)
from jcode_mobile.host.storage import write_private

from helpers import connected, fill_pairing_form, steps_with

TOKEN = "tok-real-7f3a9c41"
CODE = "482913"
WORKING_DIR = "/home/me/project"
HISTORY = [
    {"role": "user", "content": "Why does the build fail?"},
    {"role": "assistant", "content": "A missing semicolon in main.c."},
]
TINY_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgAAIAAAUAAdK1jwAAAABJRU5ErkJggg=="


def run(test: Callable[[], Awaitable[None]], timeout: float = 10.0) -> None:
    """Run an async test body on a fresh loop, failing it after ``timeout`` seconds."""
    asyncio.run(asyncio.wait_for(test(), timeout))


def compact(value: dict) -> str:
    return json.dumps(value, separators=(",", ":"))


class Gateway:
    """A tiny jcode gateway on 127.0.0.1: /health, /pair and /ws.

    ``/pair`` accepts ``CODE`` and issues ``issued_token``; ``/ws`` accepts
    ``accepted_token``. Every server event goes out as one text frame unless
    ``frame_events`` > 1 (then that many events share a frame, newline-separated).
    """

    def __init__(self, *, issued_token: str = TOKEN, accepted_token: str = TOKEN, frame_events: int = 1,
                 health_status: int = 200, server_heartbeat: Optional[float] = None, chatter: bool = False,
                 bind: str = "127.0.0.1"):
        self.issued_token = issued_token
        self.accepted_token = accepted_token
        self.frame_events = frame_events
        self.health_status = health_status
        self.server_heartbeat = server_heartbeat
        self.chatter = chatter
        self.chatter_sent = 0
        self.bind = bind
        self.pair_bodies: List[dict] = []
        self.auth_headers: List[Optional[str]] = []
        self.requests: List[dict] = []
        self.frames_received: List[str] = []
        self.sockets: List[web.WebSocketResponse] = []
        self.transports: List[asyncio.Transport] = []
        self.close_codes: List[Optional[int]] = []
        self.port = 0
        self._runner: Optional[web.AppRunner] = None

    async def __aenter__(self) -> "Gateway":
        app = web.Application()
        app.router.add_get("/health", self.health)
        app.router.add_post("/pair", self.pair)
        app.router.add_get("/ws", self.ws)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.bind, 0)
        await site.start()
        self.port = self._runner.addresses[0][1]
        return self

    async def __aexit__(self, *exc) -> None:
        await self._runner.cleanup()

    async def health(self, request: web.Request) -> web.Response:
        if self.health_status != 200:
            return web.json_response({"error": "database on fire"}, status=self.health_status)
        return web.json_response({"status": "ok", "version": "0.9.2", "gateway": True})

    async def pair(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.pair_bodies.append(body)
        if body.get("code") != CODE:
            return web.json_response({"error": "Invalid or expired pairing code"}, status=401)
        return web.json_response({"token": self.issued_token, "server_name": "devbox", "server_version": "0.9.2"})

    async def ws(self, request: web.Request) -> web.StreamResponse:
        self.auth_headers.append(request.headers.get("Authorization"))
        if request.headers.get("Authorization") != f"Bearer {self.accepted_token}":
            return web.json_response({"error": "Unauthorized"}, status=401)
        ws = web.WebSocketResponse(heartbeat=self.server_heartbeat)
        await ws.prepare(request)
        self.sockets.append(ws)
        self.transports.append(request.transport)
        async for message in ws:
            if message.type != WSMsgType.TEXT:
                continue
            self.frames_received.append(message.data)
            for line in message.data.split("\n"):
                if line.strip():
                    request_ = json.loads(line)
                    self.requests.append(request_)
                    await self.send(ws, self.answer(request_))
                    if self.chatter and request_["type"] == "get_history" and len(self.sockets) == 1:
                        asyncio.get_running_loop().create_task(self.chat_on(ws))
        self.close_codes.append(ws.close_code)
        return ws

    async def send(self, ws: web.WebSocketResponse, events: List[dict]) -> None:
        for i in range(0, len(events), self.frame_events):
            await ws.send_str("\n".join(compact(e) for e in events[i:i + self.frame_events]))

    def answer(self, request: dict) -> List[dict]:
        rid, kind = request["id"], request["type"]
        if kind == "subscribe":
            return [{"type": "ack", "id": rid}, {"type": "session", "session_id": "s1"}, {"type": "done", "id": rid}]
        if kind == "get_history":
            return [{"type": "ack", "id": rid}, {"type": "history", "id": rid, "session_id": "s1", "messages": HISTORY,
                                                 "provider_name": "anthropic", "provider_model": "claude-sonnet-4",
                                                 "all_sessions": ["s1"], "server_version": "0.9.2"}]
        if kind == "message":
            return [{"type": "ack", "id": rid}, {"type": "text_delta", "text": "Fixed "},
                    {"type": "text_delta", "text": "it."}, {"type": "message_end"}, {"type": "done", "id": rid}]
        return [{"type": "ack", "id": rid}, {"type": "error", "id": rid, "message": f"not implemented: {kind}"}]

    async def chat_on(self, ws: web.WebSocketResponse) -> None:
        """Send a status_detail frame every 2 ms until the socket closes."""
        while not ws.closed:
            try:
                await ws.send_str(compact({"type": "status_detail", "detail": f"ghost {self.chatter_sent}"}))
            except Exception:  # the connection went away
                return
            self.chatter_sent += 1
            await asyncio.sleep(0.002)

    async def push(self, events: List[dict]) -> None:
        """Send events on the newest socket, one frame each."""
        for event in events:
            await self.sockets[-1].send_str(compact(event))

    def drop(self) -> None:
        """End the newest connection without a close frame (TCP reset)."""
        self.transports[-1].abort()


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_host(**options) -> RealHost:
    options.setdefault("http_timeout", 2.0)
    options.setdefault("connect_timeout", 2.0)
    return RealHost(App({"device_id": "device-under-test"}), **options)


def against_a_gateway(*, virtual_clock: bool = False, timeout: float = 10.0, **gateway_options: Any):
    """Makes ``async def test_…(host, gateway)`` a test: it runs on a fresh event loop against a
    ``Gateway(**gateway_options)`` with a :func:`new_host` (on a VirtualClock when asked), which is
    closed after it; past ``timeout`` seconds it fails."""
    def decorate(body: Callable[[RealHost, "Gateway"], Awaitable[None]]) -> Callable[[], None]:
        def test() -> None:
            async def main() -> None:
                async with Gateway(**gateway_options) as gateway:
                    host = new_host(clock=VirtualClock()) if virtual_clock else new_host()
                    try:
                        await body(host, gateway)
                    finally:
                        await host.close()
            run(main, timeout)
        test.__name__, test.__qualname__, test.__doc__ = body.__name__, body.__qualname__, body.__doc__
        return test
    return decorate


async def pair_and_connect(host: RealHost, gateway: Gateway) -> dict:
    fill_pairing_form(host, server="127.0.0.1", port=str(gateway.port), code=CODE, working_dir=WORKING_DIR)
    host.dispatch({"type": "submit_pairing"})
    return await host.wait_for(connected, timeout=5.0)


def effect_types(host: RealHost, since: int = 0) -> List[str]:
    return [e["type"] for e in host.effects[since:]]


# -- http_health --------------------------------------------------------------------------


def check_server(host: RealHost, port: int) -> None:
    host.dispatch({"type": "set_host", "value": "127.0.0.1"})
    host.dispatch({"type": "set_port", "value": str(port)})
    host.dispatch({"type": "check_server"})


@against_a_gateway()
async def test_health_of_a_gateway_answers_ok_with_its_version(host: RealHost, gateway: Gateway) -> None:
    check_server(host, gateway.port)
    assert await host.settle(timeout=3.0)
    (answer,) = steps_with(host, "health_finished")
    assert answer.input == {"type": "health_finished", "effect_id": host.effects[-1]["effect_id"],
                            "ok": True, "version": "0.9.2"}
    assert host.app.state()["pairing"]["health"]["status"] == "reachable"
    assert host.errors == []


@against_a_gateway(health_status=500)
async def test_health_answered_with_500_reports_the_status_and_the_servers_error(host: RealHost, gateway: Gateway) -> None:
    check_server(host, gateway.port)
    assert await host.settle(timeout=3.0)
    (answer,) = steps_with(host, "health_finished")
    assert {k: v for k, v in answer.input.items() if k != "effect_id"} == {
        "type": "health_finished", "ok": False, "status": 500, "error": "database on fire"}
    assert host.app.state()["pairing"]["health"]["status"] == "failed"


def test_health_of_a_refused_port_is_unreachable_without_status():
    async def main():
        host = new_host()
        try:
            check_server(host, closed_port())
            assert await host.settle(timeout=3.0)
            (answer,) = steps_with(host, "health_finished")
            assert answer.input["ok"] is False
            assert "status" not in answer.input
            assert isinstance(answer.input["error"], str) and answer.input["error"] != ""
            assert host.app.state()["pairing"]["health"]["status"] == "unreachable"
        finally:
            await host.close()
    run(main)


def test_health_of_a_server_that_never_answers_times_out_as_unreachable():
    async def main():
        accepted: List[asyncio.StreamWriter] = []

        async def silent(reader, writer):
            accepted.append(writer)  # read nothing, answer nothing

        server = await asyncio.start_server(silent, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        host = new_host(http_timeout=0.3)
        try:
            check_server(host, port)
            assert await host.settle(timeout=3.0)
            (answer,) = steps_with(host, "health_finished")
            assert {k: v for k, v in answer.input.items() if k != "effect_id"} == {
                "type": "health_finished", "ok": False, "error": f"no answer from 127.0.0.1:{port} within 0.3 s"}
            assert len(accepted) == 1
        finally:
            await host.close()
            for writer in accepted:
                writer.close()
            server.close()
            await server.wait_closed()
    run(main)


# -- http_pair ------------------------------------------------------------------------------


def test_pairing_stores_the_token_in_the_secure_store_and_never_in_errors():
    async def main():
        async with Gateway() as gateway:
            store = MemorySecureStore()
            storage = MemoryStorage()
            host = new_host(secure_store=store, storage=storage)
            try:
                await pair_and_connect(host, gateway)
                assert gateway.pair_bodies == [
                    {"code": CODE, "device_id": "device-under-test", "device_name": "Test iPhone"}]
                (answer,) = steps_with(host, "pair_finished")
                assert {k: v for k, v in answer.input.items() if k != "effect_id"} == {
                    "type": "pair_finished", "ok": True, "token": TOKEN, "server_name": "devbox",
                    "server_version": "0.9.2"}
                key = f"jcode.token.127.0.0.1:{gateway.port}"
                assert store.items() == {key: TOKEN}
                (written,) = steps_with(host, "secure_store_write_finished")
                assert written.input["ok"] is True and written.input["key"] == key
                snapshot = storage.read("snapshot")
                assert snapshot["servers"][0]["id"] == f"127.0.0.1:{gateway.port}"
                assert snapshot["selected_server_id"] == f"127.0.0.1:{gateway.port}"
                assert snapshot == host.app.snapshot()  # the storage holds the latest snapshot
                assert storage.read("servers") is None
                assert TOKEN not in json.dumps(storage.items())
                assert host.errors == []
                assert TOKEN not in json.dumps(host.app.state())
            finally:
                await host.close()
            assert TOKEN not in json.dumps(host.errors) and CODE not in json.dumps(host.errors)
    run(main)


@against_a_gateway()
async def test_pairing_with_a_wrong_code_reports_401_and_the_servers_error_text(host: RealHost, gateway: Gateway) -> None:
    fill_pairing_form(host, server="127.0.0.1", port=str(gateway.port), code="000000")
    host.dispatch({"type": "submit_pairing"})
    assert await host.settle(timeout=3.0)
    (answer,) = steps_with(host, "pair_finished")
    assert {k: v for k, v in answer.input.items() if k != "effect_id"} == {
        "type": "pair_finished", "ok": False, "status": 401, "error": "Invalid or expired pairing code"}
    state = host.app.state()
    assert state["screen"] == "onboarding"
    assert state["banners"]["error"] is not None
    assert "websocket_connect" not in effect_types(host)


def test_pairing_with_an_unreachable_server_reports_no_status():
    async def main():
        host = new_host()
        try:
            fill_pairing_form(host, server="127.0.0.1", port=str(closed_port()), code=CODE)
            host.dispatch({"type": "submit_pairing"})
            assert await host.settle(timeout=3.0)
            (answer,) = steps_with(host, "pair_finished")
            assert answer.input["ok"] is False and "status" not in answer.input and "token" not in answer.input
            assert isinstance(answer.input["error"], str) and answer.input["error"] != ""
            assert host.app.state()["connection"]["phase"] == "disconnected"
        finally:
            await host.close()
    run(main)


# -- the WebSocket ------------------------------------------------------------------------------


@against_a_gateway()
async def test_pair_connect_subscribe_reaches_the_chat_with_the_history_then_a_reply_streams_in(host: RealHost, gateway: Gateway) -> None:
    state = await pair_and_connect(host, gateway)
    assert state["connection"]["phase"] == "connected"
    assert [(m["role"], m["text"]) for m in state["transcript"]] == [
        ("user", "Why does the build fail?"), ("assistant", "A missing semicolon in main.c.")]
    assert gateway.auth_headers == [f"Bearer {TOKEN}"]
    assert gateway.requests == [
        {"id": 1, "type": "subscribe", "working_dir": WORKING_DIR,
         "client_instance_id": "device-under-test"},
        {"id": 2, "type": "get_history"},
    ]
    # each server event arrived as its own frame: 3 for subscribe, 2 for get_history
    assert host.frames_in == 5 and host.frames_out == 2
    assert [s.input["line"] for s in steps_with(host, "websocket_event")][:3] == [
        '{"type":"ack","id":1}', '{"type":"session","session_id":"s1"}', '{"type":"done","id":1}']

    host.dispatch({"type": "send_message", "text": "Fix it"})
    state = await host.wait_for(lambda s: not s["session"]["is_processing"]
                                and s["transcript"][-1]["text"] == "Fixed it.", timeout=3.0)
    assert [(m["role"], m["text"]) for m in state["transcript"][-2:]] == [
        ("user", "Fix it"), ("assistant", "Fixed it.")]
    assert gateway.requests[-1] == {"id": 3, "type": "message", "content": "Fix it"}
    assert host.errors == []


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
@against_a_gateway(bind="::1")
async def test_an_ipv6_host_is_reached_in_brackets_for_health_pairing_and_the_socket(host: RealHost, gateway: Gateway) -> None:
    fill_pairing_form(host, server="::1", port=str(gateway.port), code=CODE, working_dir=WORKING_DIR)
    host.dispatch({"type": "check_server"})
    host.dispatch({"type": "submit_pairing"})
    await host.wait_for(connected, timeout=5.0)
    (health,) = steps_with(host, "health_finished")
    assert health.input["ok"] is True
    (connect,) = [e for e in host.effects if e["type"] == "websocket_connect"]
    assert connect["url"] == f"ws://[::1]:{gateway.port}/ws"
    assert host.errors == []


@against_a_gateway(frame_events=3)
async def test_one_frame_holding_several_newline_separated_events_is_applied_whole(host: RealHost, gateway: Gateway) -> None:
    state = await pair_and_connect(host, gateway)
    assert host.frames_in == 2  # ack+session+done, then ack+history
    lines = [s.input["line"] for s in steps_with(host, "websocket_event")]
    assert lines[0] == '{"type":"ack","id":1}\n{"type":"session","session_id":"s1"}\n{"type":"done","id":1}'
    assert state["session"]["id"] == "s1"
    assert len(state["transcript"]) == 2


def test_a_frame_past_the_cores_input_limit_reaches_the_core_which_refuses_it_and_the_socket_stays():
    # 17 MiB: past JCODE_MOBILE_MAX_INPUT_BYTES (16 MiB), within the host's 64 MiB message limit
    # (aiohttp's own 4 MiB default would fail the connection instead, on every such frame)
    async def main():
        async with Gateway() as gateway:
            host = new_host(clock=VirtualClock())
            try:
                await pair_and_connect(host, gateway)
                await gateway.push([{"type": "status_detail", "detail": "x" * (17 * 1024 * 1024)},
                                    {"type": "status_detail", "detail": "after the big frame"}])
                await host.wait_for(lambda s: s["session"]["status_detail"] == "after the big frame", timeout=5.0)
                assert host.errors == ["the core refused a websocket_event event (too_large)"]
                assert steps_with(host, "websocket_closed") == []
                assert host.app.state()["connection"]["phase"] == "connected"
            finally:
                await host.close()
    run(main)


@against_a_gateway(issued_token=TOKEN, accepted_token="tok-someone-else", virtual_clock=True)
async def test_a_token_refused_at_the_upgrade_is_websocket_failed_401_and_no_reconnect(host: RealHost, gateway: Gateway) -> None:
    clock = host.clock
    fill_pairing_form(host, server="127.0.0.1", port=str(gateway.port), code=CODE)
    host.dispatch({"type": "submit_pairing"})
    state = await host.wait_for(lambda s: s["connection"]["phase"] == "failed", timeout=5.0)
    (failed,) = steps_with(host, "websocket_failed")
    connect = next(e for e in host.effects if e["type"] == "websocket_connect")
    assert failed.input == {"type": "websocket_failed", "effect_id": connect["effect_id"], "status": 401,
                            "error": "the server refused the WebSocket upgrade with HTTP 401"}
    assert "schedule_timer" not in effect_types(host)  # never connected: no reconnect, no keep-alive
    assert clock.pending() == {}
    assert "error" in host.haptics
    assert gateway.auth_headers == [f"Bearer {TOKEN}"]
    assert state["screen"] == "onboarding"
    assert state["connection"]["reason"] == ("This device is no longer paired with the server. "
                                             "Re-pair to reconnect.")
    assert TOKEN not in json.dumps(host.errors)


@against_a_gateway(virtual_clock=True)
async def test_a_dropped_connection_is_websocket_closed_1006_once_and_the_reconnect_timer_waits_for_advance(host: RealHost, gateway: Gateway) -> None:
    clock = host.clock
    await pair_and_connect(host, gateway)
    first = host.socket_id
    mark = len(host.effects)
    gateway.drop()
    await host.wait_for(lambda s: s["connection"]["phase"] == "reconnecting", timeout=3.0)
    assert await host.settle(timeout=3.0)
    closed = steps_with(host, "websocket_closed")
    assert [s.input for s in closed] == [
        {"type": "websocket_closed", "effect_id": first, "code": 1006, "reason": "connection lost"}]
    (timer,) = [e for e in host.effects[mark:] if e["type"] == "schedule_timer"]
    assert (timer["after_ms"], timer["purpose"]) == (1000, "reconnect")
    assert clock.pending() == {timer["timer_id"]: 1000}

    # real time passes, the virtual clock does not: no reconnect
    await asyncio.sleep(0.2)
    assert "websocket_connect" not in effect_types(host, mark)
    assert host.advance(999) == []
    assert host.advance(1) == [timer["timer_id"]]
    state = await host.wait_for(connected, timeout=3.0)
    assert state["connection"]["attempt"] == 0
    assert host.socket_id != first
    # this server's subscribe brings no history: the ping after it is answered first, get_history follows
    assert [r["type"] for r in gateway.requests[-4:]] == ["subscribe", "ping", "get_history", "ping"]
    assert gateway.requests[-4] == {"id": 1, "type": "subscribe", "working_dir": WORKING_DIR,
                                    "target_session_id": "s1", "client_instance_id": "device-under-test"}
    assert len(steps_with(host, "websocket_closed")) == 1


@against_a_gateway(virtual_clock=True)
async def test_a_close_frame_from_the_server_reports_its_code_and_reason(host: RealHost, gateway: Gateway) -> None:
    await pair_and_connect(host, gateway)
    socket_id = host.socket_id
    await gateway.sockets[-1].close(code=4000, message=b"server going down")
    await host.wait_for(lambda s: s["connection"]["phase"] == "reconnecting", timeout=3.0)
    assert await host.settle(timeout=3.0)
    assert [s.input for s in steps_with(host, "websocket_closed")] == [
        {"type": "websocket_closed", "effect_id": socket_id, "code": 4000,
         "reason": "server going down"}]


@against_a_gateway(virtual_clock=True)
async def test_disconnect_closes_with_1000_and_reports_websocket_closed_once(host: RealHost, gateway: Gateway) -> None:
    await pair_and_connect(host, gateway)
    socket_id = host.socket_id
    host.dispatch({"type": "disconnect"})
    assert await host.settle(timeout=3.0)
    assert [s.input for s in steps_with(host, "websocket_closed")] == [
        {"type": "websocket_closed", "effect_id": socket_id, "code": 1000}]
    assert host.app.state()["connection"]["phase"] == "disconnected"
    assert host.socket_id is None
    for _ in range(50):  # the server sees the close handshake
        if gateway.close_codes:
            break
        await asyncio.sleep(0.02)
    assert gateway.close_codes == [1000]
    # no reconnect is scheduled, and the keep-alive stopped with the socket
    timers = [(e["type"], e["timer_id"]) for e in host.effects if e["type"].endswith("_timer")]
    assert timers == [("schedule_timer", "keepalive.1"), ("cancel_timer", "keepalive.1")]


@against_a_gateway(chatter=True, virtual_clock=True)
async def test_frames_of_a_replaced_socket_are_never_delivered(host: RealHost, gateway: Gateway) -> None:
    await pair_and_connect(host, gateway)  # the first socket now chatters every 2 ms
    old_id = host.socket_id
    await host.wait_for(lambda s: (s["session"]["status_detail"] or "").startswith("ghost"), timeout=3.0)
    # a new working directory makes the core replace the socket
    report = host.dispatch({"type": "set_working_dir", "value": "/srv/other",
                            "server_id": f"127.0.0.1:{gateway.port}"})
    # the old socket closes (its keep-alive stops), a new one opens, the new directory is kept
    assert [e["type"] for e in report["effects"]][-4:] == [
        "websocket_close", "cancel_timer", "websocket_connect", "storage_write"]
    replaced_at = len(host.steps)
    await host.wait_for(connected, timeout=3.0)
    assert await host.settle(timeout=3.0)
    assert host.socket_id != old_id
    late = [s.input for s in host.steps[replaced_at:]
            if s.input.get("type") == "websocket_event" and s.input.get("effect_id") == old_id]
    assert late == []
    assert gateway.chatter_sent > 0


@against_a_gateway(virtual_clock=True)
async def test_frames_after_session_close_requested_are_not_delivered(host: RealHost, gateway: Gateway) -> None:
    await pair_and_connect(host, gateway)
    socket_id = host.socket_id
    await gateway.push([{"type": "session_close_requested", "reason": "Another client took over"},
                        {"type": "status_detail", "detail": "ghost"}])
    await host.wait_for(lambda s: s["connection"]["phase"] == "failed", timeout=3.0)
    assert await host.settle(timeout=3.0)
    assert host.app.state()["session"]["status_detail"] != "ghost"
    assert "ghost" not in json.dumps([s.input for s in host.steps])
    assert [s.input for s in steps_with(host, "websocket_closed")] == [
        {"type": "websocket_closed", "effect_id": socket_id, "code": 1000}]
    for _ in range(50):
        if gateway.close_codes:
            break
        await asyncio.sleep(0.02)
    assert gateway.close_codes == [1000]


@against_a_gateway(server_heartbeat=0.1)
async def test_server_pings_are_answered_so_the_server_keeps_the_connection(host: RealHost, gateway: Gateway) -> None:
    await pair_and_connect(host, gateway)
    await asyncio.sleep(0.6)  # six pings; a missed pong closes the socket after 0.05 s
    assert steps_with(host, "websocket_closed") == []
    assert host.app.state()["connection"]["phase"] == "connected"


def test_close_is_idempotent_and_closes_the_socket():
    async def main():
        async with Gateway() as gateway:
            host = new_host()
            await pair_and_connect(host, gateway)
            await host.close()
            await host.close()
            assert host.closed is True
            for _ in range(50):
                if gateway.close_codes:
                    break
                await asyncio.sleep(0.02)
            assert gateway.close_codes == [1001]
            with pytest.raises(RuntimeError):
                host.dispatch({"type": "retry_connection"})
    run(main)


# -- host robustness ---------------------------------------------------------------------------


class ScriptedApp(App):
    """The real core, except that the action ``{"type": "scripted"}`` returns a
    report with the effects given (to exercise the host with effects the core
    would not ask for)."""

    def __init__(self, effects: List[dict]):
        super().__init__({"device_id": "device-under-test"})
        self.scripted = effects

    def dispatch_raw(self, action):
        if isinstance(action, dict) and action.get("type") == "scripted":
            return {"ok": True, "revision": 0, "effects": self.scripted}
        return super().dispatch_raw(action)


def test_unknown_effect_types_go_to_errors_and_the_host_keeps_running():
    async def main():
        app = ScriptedApp([
            {"effect_id": 900, "type": "teleport", "to": "mars"},
            {"effect_id": 901, "type": "websocket_send", "line": '{"id":1,"type":"ping"}'},
            {"effect_id": 902, "type": "haptic", "style": "light"},
        ])
        host = RealHost(app)
        try:
            host.dispatch({"type": "scripted"})
            assert host.errors == [
                "unknown effect type 'teleport' (effect_id 900); ignored",
                "websocket_send (effect_id 901) with no open socket; line dropped",
            ]
            assert host.haptics == ["light"]
            host.dispatch({"type": "set_host", "value": "devbox.local"})  # still running
            assert host.app.state()["pairing"]["host"] == "devbox.local"
        finally:
            await host.close()
    run(main)


def test_local_notifications_are_shown_one_per_session_the_latest():
    async def main():
        app = ScriptedApp([
            {"effect_id": 910, "type": "show_local_notification", "title": "Fix the flaky test",
             "body": "The agent asks permission to run bash", "session_id": "session-fox"},
            {"effect_id": 911, "type": "show_local_notification", "title": "jcode", "body": "The agent finished"},
            {"effect_id": 912, "type": "show_local_notification", "title": "Fix the flaky test",
             "body": "The agent finished", "session_id": "session-fox"},
        ])
        host = RealHost(app)
        try:
            host.dispatch({"type": "scripted"})
            assert host.errors == []
            assert host.notifications == [
                {"title": "jcode", "body": "The agent finished", "session_id": None},
                {"title": "Fix the flaky test", "body": "The agent finished", "session_id": "session-fox"},
            ]
        finally:
            await host.close()
    run(main)


def test_observer_and_recorder_see_every_call_into_the_core():
    async def main():
        seen: List[tuple] = []

        class Recorder:
            def record(self, kind, input, report):
                seen.append(("recorder", kind, input["type"], report["ok"]))

        def observer(kind, payload):
            seen.append(("observer", kind, payload["input"]["type"], payload["report"]["ok"]))

        host = RealHost(App({"device_id": "device-under-test"}), recorder=Recorder(), observer=observer,
                        device=DeviceScript(qr_payload=None))
        try:
            host.dispatch({"type": "scan_qr"})
            assert seen == [
                ("recorder", "action", "scan_qr", True), ("observer", "action", "scan_qr", True),
                ("recorder", "event", "qr_scan_cancelled", True), ("observer", "event", "qr_scan_cancelled", True),
            ]
            assert [(s.kind, s.input["type"]) for s in host.steps] == [("action", "scan_qr"), ("event", "qr_scan_cancelled")]
        finally:
            await host.close()
    run(main)


# -- the device -----------------------------------------------------------------------------------


def test_scanning_a_pairing_qr_code_pairs_and_connects():
    async def main():
        async with Gateway() as gateway:
            payload = f"jcode://pair?host=127.0.0.1&port={gateway.port}&code={CODE}"
            host = new_host(device=DeviceScript(qr_payload=payload))
            try:
                host.dispatch({"type": "set_device_name", "value": "Test iPhone"})
                host.dispatch({"type": "set_working_dir", "value": WORKING_DIR})
                host.dispatch({"type": "scan_qr"})
                assert [s.input for s in steps_with(host, "qr_payload_scanned")] == [
                    {"type": "qr_payload_scanned", "payload": payload}]
                await host.wait_for(connected, timeout=5.0)
                assert gateway.pair_bodies == [
                    {"code": CODE, "device_id": "device-under-test", "device_name": "Test iPhone"}]
            finally:
                await host.close()
    run(main)


def test_the_scan_node_with_no_qr_code_cancels_the_scan():
    async def main():
        host = new_host(device=DeviceScript(qr_payload=None))
        try:
            tree = host.app.tree()
            assert find_node(tree, "pair.scan_qr")["enabled"] is True
            host.dispatch({"type": "tap_node", "node_id": "pair.scan_qr"})
            assert effect_types(host) == ["request_camera_qr_scan"]
            assert [s.input for s in steps_with(host, "qr_scan_cancelled")] == [{"type": "qr_scan_cancelled"}]
        finally:
            await host.close()
    run(main)


def test_the_image_picker_and_dictation_answer_from_the_script():
    async def main():
        device = DeviceScript(image=("image/png", TINY_PNG), speech_text="Run the tests")
        host = RealHost(App({"scenario": "connected_empty_chat"}), device=device)
        try:
            host.dispatch({"type": "attach_image"})
            assert [s.input for s in steps_with(host, "image_attachment_selected")] == [
                {"type": "image_attachment_selected", "media_type": "image/png", "data_base64": TINY_PNG}]
            assert [(a["id"], a["media_type"]) for a in host.app.state()["attachments"]] == [("a1", "image/png")]
            host.dispatch({"type": "start_voice_input"})
            assert [s.input for s in steps_with(host, "speech_transcript")] == [
                {"type": "speech_transcript", "text": "Run the tests", "is_final": True}]
            assert host.app.state()["draft"] == "Run the tests"
        finally:
            await host.close()
    run(main)


def test_a_device_that_never_answers_leaves_the_core_waiting():
    async def main():
        host = RealHost(App({"scenario": "connected_empty_chat"}), device=DeviceScript())
        try:
            host.dispatch({"type": "attach_image"})
            host.dispatch({"type": "start_voice_input"})
            assert effect_types(host) == ["request_image_picker", "request_speech_transcript"]
            assert [s.kind for s in host.steps] == ["action", "action"]
            assert host.app.state()["voice"]["is_listening"] is True
        finally:
            await host.close()
    run(main)


# -- clocks ------------------------------------------------------------------------------------------


def test_virtual_clock_fires_only_on_advance_in_due_order_and_replaces_pending_ids():
    clock = VirtualClock()
    fired: List[str] = []
    clock.schedule("b", 200, lambda: fired.append("b"))
    clock.schedule("a", 100, lambda: fired.append("a"))
    clock.schedule("c", 50, lambda: fired.append("c-old"))
    clock.schedule("c", 300, lambda: fired.append("c"))  # replaces the pending "c"
    clock.schedule("gone", 10, lambda: fired.append("gone"))
    assert clock.cancel("gone") is True
    assert clock.pending() == {"a": 100, "b": 200, "c": 300}
    assert fired == []
    assert clock.advance(150) == ["a"]
    assert clock.now_ms == 150
    assert clock.advance(1000) == ["b", "c"]
    assert fired == ["a", "b", "c"]
    assert clock.pending() == {}


def test_virtual_clock_fires_a_timer_scheduled_by_a_callback_within_the_same_advance():
    clock = VirtualClock()
    fired: List[str] = []
    clock.schedule("first", 100, lambda: (fired.append("first"), clock.schedule("second", 100, lambda: fired.append("second"))))
    assert clock.advance(250) == ["first", "second"]
    assert fired == ["first", "second"]


def test_real_clock_fires_after_the_delay_and_a_cancelled_timer_never_fires():
    async def main():
        from jcode_mobile.host import RealClock
        clock = RealClock()
        fired: List[str] = []
        clock.schedule("soon", 20, lambda: fired.append("soon"))
        clock.schedule("never", 20, lambda: fired.append("never"))
        clock.cancel("never")
        await asyncio.sleep(0.15)
        assert fired == ["soon"]
        clock.schedule("later", 10_000, lambda: fired.append("later"))
        clock.cancel_all()
        assert clock.pending() == []
    run(main)


# -- stores -------------------------------------------------------------------------------------------


def test_file_secure_store_creates_a_0600_file_and_reads_back(tmp_path):
    path = tmp_path / "keychain.json"
    store = FileSecureStore(path)
    assert store.read("jcode.token.devbox:7643") is None
    store.write("jcode.token.devbox:7643", "secret-1")
    store.write("jcode.token.other:7643", "secret-2")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert FileSecureStore(path).read("jcode.token.devbox:7643") == "secret-1"
    store.delete("jcode.token.devbox:7643")
    assert FileSecureStore(path).read("jcode.token.devbox:7643") is None
    assert FileSecureStore(path).read("jcode.token.other:7643") == "secret-2"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["keychain.json"]  # no temporary file left behind


def test_file_storage_creates_a_0600_file_the_snapshot_being_the_persons_writing(tmp_path):
    path = tmp_path / "storage.json"
    FileStorage(path).write("snapshot", {"composer": {"draft": "a private thought"}})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert FileStorage(path).read("snapshot") == {"composer": {"draft": "a private thought"}}
    assert sorted(os.listdir(tmp_path)) == ["storage.json"]  # no temporary file left behind


@pytest.mark.parametrize("store", [FileStorage, FileSecureStore])
def test_file_stores_never_follow_a_symbolic_link_at_their_path(tmp_path, store):
    victim = tmp_path / "victim.json"
    victim.write_text('{"kept": "as it was"}')
    os.chmod(victim, 0o600)
    path = tmp_path / "state.json"
    path.symlink_to(victim)
    with pytest.raises(StoreError, match="cannot open"):
        store(path).read("kept")
    with pytest.raises(StoreError, match="cannot open"):
        store(path).write("key", "value")
    assert victim.read_text() == '{"kept": "as it was"}'
    assert path.is_symlink()


def test_write_private_replaces_a_symbolic_link_instead_of_writing_through_it(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("kept")
    path = tmp_path / "trace.json"
    path.symlink_to(victim)
    write_private(path, b"new")
    assert victim.read_text() == "kept"
    assert not path.is_symlink() and path.read_bytes() == b"new"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(os.listdir(tmp_path)) == ["trace.json", "victim"]


def test_file_secure_store_refuses_a_file_readable_by_others_and_the_host_answers_ok_false(tmp_path):
    path = tmp_path / "keychain.json"
    path.write_text('{"jcode.token.devbox:7643": "secret-1"}')
    os.chmod(path, 0o644)
    store = FileSecureStore(path)
    with pytest.raises(StoreError, match="wider than 0600"):
        store.read("jcode.token.devbox:7643")
    with pytest.raises(StoreError, match="wider than 0600"):
        store.write("jcode.token.devbox:7643", "secret-2")

    async def main():
        app = ScriptedApp([{"effect_id": 950, "type": "secure_store_read", "key": "jcode.token.devbox:7643"}])
        host = RealHost(app, secure_store=store)
        try:
            host.dispatch({"type": "scripted"})
            (answer,) = steps_with(host, "secure_store_read_finished")
            assert answer.input == {"type": "secure_store_read_finished", "effect_id": 950,
                                    "key": "jcode.token.devbox:7643", "ok": False}
            assert len(host.errors) == 1 and "wider than 0600" in host.errors[0]
            assert "secret-1" not in host.errors[0]
        finally:
            await host.close()
    run(main)


def test_a_secure_store_that_cannot_write_makes_pairing_warn_that_credentials_were_not_saved(tmp_path):
    path = tmp_path / "keychain.json"
    path.write_text("{}")
    os.chmod(path, 0o644)

    async def main():
        async with Gateway() as gateway:
            host = new_host(secure_store=FileSecureStore(path))
            try:
                state = await pair_and_connect(host, gateway)
                (written,) = steps_with(host, "secure_store_write_finished")
                assert written.input["ok"] is False
                assert any(n["kind"] == "warning" and "could not save" in n["text"] for n in state["notices"])
                assert TOKEN not in json.dumps(host.errors)
                assert path.read_text() == "{}"
            finally:
                await host.close()
    run(main)


def test_file_storage_round_trip(tmp_path):
    path = tmp_path / "defaults.json"
    storage = FileStorage(path)
    servers = [{"id": "devbox.local:7643", "name": "devbox", "port": 7643, "use_tls": False}]
    storage.write("servers", servers)
    storage.write("draft", "hello")
    assert FileStorage(path).read("servers") == [{"id": "devbox.local:7643", "name": "devbox", "port": 7643,
                                                  "use_tls": False}]
    storage.delete("draft")
    assert FileStorage(path).read("draft") is None
    assert json.loads(path.read_text()) == {"servers": [{"id": "devbox.local:7643", "name": "devbox", "port": 7643,
                                                         "use_tls": False}]}


# -- BackgroundHost ---------------------------------------------------------------------------------------


class ThreadedGateway:
    """A :class:`Gateway` on its own loop thread (for the synchronous BackgroundHost)."""

    def __enter__(self) -> "ThreadedGateway":
        import threading
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.gateway = Gateway()
        asyncio.run_coroutine_threadsafe(self.gateway.__aenter__(), self.loop).result(5)
        self.port = self.gateway.port
        return self

    def drop(self) -> None:
        """:meth:`Gateway.drop`, on the gateway's loop."""
        self.loop.call_soon_threadsafe(self.gateway.drop)

    def __exit__(self, *exc) -> None:
        asyncio.run_coroutine_threadsafe(self.gateway.__aexit__(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


def test_background_host_pairs_connects_and_reconnects_with_a_synchronous_api():
    with ThreadedGateway() as gateway:
        with BackgroundHost(App({"device_id": "device-under-test"}), clock=VirtualClock(),
                            http_timeout=2.0, connect_timeout=2.0) as host:
            for kind, value in [("set_host", "127.0.0.1"), ("set_port", str(gateway.port)),
                                ("set_pair_code", CODE), ("set_device_name", "Test iPhone"),
                                ("set_working_dir", WORKING_DIR)]:
                host.dispatch({"type": kind, "value": value})
            host.dispatch({"type": "submit_pairing"})
            state = host.wait_for(connected, timeout=5.0)
            assert state["session"]["id"] == "s1"
            assert find_node(host.tree(), "chat.messages") is not None
            assert host.logs(1)["entries"][0]["kind"] == "event"

            gateway.drop()
            host.wait_for(lambda s: s["connection"]["phase"] == "reconnecting", timeout=3.0)
            assert host.settle(timeout=3.0) is True
            assert host.advance(1000) != []
            host.wait_for(connected, timeout=3.0)
            assert [s.input["code"] for s in host.steps if s.input.get("type") == "websocket_closed"] == [1006]
            assert host.errors == []
        with pytest.raises(RuntimeError):
            host.state()


def test_background_host_wait_for_times_out_naming_the_screen_and_the_connection_phase():
    with BackgroundHost(App({"device_id": "device-under-test"})) as host:
        with pytest.raises(HostTimeout) as problem:
            host.wait_for(lambda s: s["screen"] == "chat", timeout=0.2)
        message = str(problem.value)
        assert "screen 'onboarding'" in message
        assert "connection phase 'disconnected'" in message


# -- identity, launch -------------------------------------------------------------------------


def test_the_device_answers_create_device_id_with_a_uuid4_or_what_the_script_says():
    import uuid

    from jcode_mobile.host import DeviceScript

    device = DeviceScript()
    answer = device.answer({"effect_id": 3, "type": "create_device_id"})
    assert answer["type"] == "device_id_created" and answer["effect_id"] == 3
    assert uuid.UUID(answer["device_id"]).version == 4
    assert device.device_ids_created == [answer["device_id"]]
    assert DeviceScript(device_id="ios-6F1C").answer({"effect_id": 4, "type": "create_device_id"})["device_id"] == "ios-6F1C"
    assert DeviceScript(device_id_factory=lambda: "fixed-1").answer(
        {"effect_id": 5, "type": "create_device_id"})["device_id"] == "fixed-1"
    assert DeviceScript(answer_device_id=False).answer({"effect_id": 6, "type": "create_device_id"}) is None


def test_start_reports_app_foreground_once_unless_told_not_to():
    async def main():
        host = RealHost(App())
        try:
            await host.start()
            await host.start()
            assert [s.input for s in host.steps] == [{"type": "app_foreground"}]
        finally:
            await host.close()
        quiet = RealHost(App(), foreground_at_start=False)
        try:
            await quiet.start()
            assert quiet.steps == []
        finally:
            await quiet.close()
    run(main)


def test_restore_needs_no_app_and_starts_fresh_without_a_stored_snapshot():
    with pytest.raises(ValueError, match="do not pass app"):
        RealHost(App(), restore=True)
    fresh = RealHost(restore=True, storage=MemoryStorage())
    assert fresh.restored is False and fresh.app.state()["screen"] == "onboarding"
    with App({"scenario": "connected_chat"}) as app:
        snapshot = app.snapshot()
    restored = RealHost(restore=True, storage=MemoryStorage({"snapshot": snapshot}))
    assert restored.restored is True
    assert restored.app.snapshot() == snapshot
    assert restored.app.state()["connection"]["phase"] == "connecting"
    with pytest.raises(ValueError, match="cannot be combined"):
        RealHost(restore=True, storage=MemoryStorage({"snapshot": snapshot}), options={"scenario": "onboarding"})
