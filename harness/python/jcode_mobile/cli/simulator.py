"""The background simulator: a real host behind a Unix socket.

``jcode-mobile start`` runs ``python -m jcode_mobile.cli.simulator`` as a
detached process. It owns one :class:`~jcode_mobile.App`, executes its
effects over real sockets (:class:`~jcode_mobile.host.RealHost`), records
every call into the core for ``export-replay``, and answers commands on a
Unix socket (mode 0600, in a 0700 directory of this user's: another one is
refused). Every file it writes is 0600 and opened without following a
symbolic link: the log, the saved state, the secure store, an exported trace.

Wire format: the client writes one JSON object and a newline,
``{"command": NAME, "args": {...}}``; the simulator answers one line,
``{"ok": true, "result": …}`` or ``{"ok": false, "error": {"code", "message",
"failure"?}}``. Codes: ``bad_request`` (unknown command, bad arguments),
``refused`` (the core or the node said no), ``assertion_failed`` (with the
check's ``failure``), ``internal``.

Commands that change something (``tap``, ``tap-xy``, ``scroll``,
``set-field``, ``dispatch``, ``event``, ``load-scenario``) wait until the host has settled (no network
operation in flight and nothing new for 100 ms, at most ``settle`` seconds)
before answering, so the next command sees their outcome. Assertions retry
until they hold or ``timeout`` seconds passed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, Optional

from ..binding import App, JcodeMobileError, find_node
from ..host import (SNAPSHOT_KEY, DeviceScript, FileSecureStore, FileStorage, MemorySecureStore, MemoryStorage, RealHost,
                    restore_options)
from ..host.storage import write_private
from ..render import render_screen
from ..trace import Recorder
from . import checks
from .client import UnsafeDirectory, private_dir

#: Longest request line the simulator reads (an event JSON can be large).
MAX_REQUEST = 64 * 1024 * 1024


class CommandError(Exception):
    """A command the simulator refuses; ``code`` is one of the codes above."""

    def __init__(self, code: str, message: str, failure: Optional[dict] = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.failure = failure


def _summary(report: dict) -> dict:
    """A report with the effects reduced to their types (secrets stay out of the CLI's output)."""
    if not report.get("ok"):
        return report
    summary = {"ok": True, "revision": report["revision"], "effects": [e["type"] for e in report.get("effects", [])]}
    if "refused" in report:  # why the action did nothing (an incomplete pairing form)
        summary["refused"] = report["refused"]
    return summary


class Simulator:
    """One app, its host and the command table."""

    def __init__(self, options: dict, socket_path: Path, *, host: RealHost):
        self.options = options
        self.socket_path = socket_path
        self.host = host
        self.app = host.app
        self.started = time.monotonic()
        self.stopped = asyncio.Event()
        self.commands: Dict[str, Callable[[dict], Awaitable[Any]]] = {
            "status": self.status,
            "state": self.state,
            "tree": self.tree,
            "render": self.render,
            "find-node": self.find_node,
            "tap": self.tap,
            "tap-xy": self.tap_xy,
            "hit-test": self.hit_test,
            "scroll": self.scroll,
            "screenshot": self.screenshot,
            "set-field": self.set_field,
            "dispatch": self.dispatch,
            "event": self.event,
            "log": self.log,
            "load-scenario": self.load_scenario,
            "assert-screen": self.assert_screen,
            "assert-text": self.assert_text,
            "assert-node": self.assert_node,
            "assert-no-error": self.assert_no_error,
            "assert-effect": self.assert_effect,
            "export-replay": self.export_replay,
            "shutdown": self.shutdown,
        }

    # -- serving ----------------------------------------------------------------

    async def serve(self) -> None:
        await self.host.start()
        server = await asyncio.start_unix_server(self._client, path=str(self.socket_path), limit=MAX_REQUEST)
        os.chmod(self.socket_path, 0o600)
        try:
            await self.stopped.wait()
        finally:
            server.close()
            await server.wait_closed()
            await self.host.close()
            try:
                self.socket_path.unlink()
            except FileNotFoundError:
                pass

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await reader.readline()
            answer = await self.answer(line)
            writer.write(json.dumps(answer, ensure_ascii=False).encode() + b"\n")
            await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass  # the client went away (or sent more than MAX_REQUEST): nothing to answer
        finally:
            writer.close()

    async def answer(self, line: bytes) -> dict:
        try:
            request = json.loads(line)
            if not isinstance(request, dict) or not isinstance(request.get("command"), str):
                raise CommandError("bad_request", 'a request is {"command": NAME, "args": {...}}')
            handler = self.commands.get(request["command"])
            if handler is None:
                raise CommandError("bad_request", f"unknown command {request['command']!r}")
            args = request.get("args") or {}
            if not isinstance(args, dict):
                raise CommandError("bad_request", "args must be an object")
            return {"ok": True, "result": await handler(args)}
        except json.JSONDecodeError as problem:
            return _error("bad_request", f"the request is not JSON: {problem}")
        except CommandError as problem:
            return _error(problem.code, problem.message, problem.failure)
        except JcodeMobileError as problem:
            return _error("refused", str(problem))
        except Exception as problem:  # the simulator keeps serving whatever a command did
            return _error("internal", f"{type(problem).__name__}: {problem}")

    # -- helpers ------------------------------------------------------------------

    async def _settle(self, args: dict) -> None:
        await self.host.settle(quiet=0.1, timeout=_number(args, "settle", 3.0))

    async def _until(self, args: dict, check: Callable[[], Optional[dict]]) -> dict:
        """Run ``check`` until it returns None or ``timeout`` seconds passed."""
        deadline = time.monotonic() + _number(args, "timeout", 2.0)
        while True:
            failure = check()
            if failure is None:
                return {"passed": True}
            if time.monotonic() >= deadline:
                raise CommandError("assertion_failed", json.dumps(failure, ensure_ascii=False), failure)
            await asyncio.sleep(0.05)

    def _dispatch(self, action: Any) -> dict:
        report = self.host.dispatch(action)
        if not report.get("ok"):
            error = report.get("error") or {}
            raise CommandError("refused", f"{error.get('code')}: {error.get('message')}")
        return report

    # -- commands -------------------------------------------------------------------

    async def status(self, args: dict) -> dict:
        state = self.app.state()
        return {
            "pid": os.getpid(),
            "socket": str(self.socket_path),
            "options": {k: v for k, v in self.options.items() if k != "snapshot"},
            "uptime_secs": round(time.monotonic() - self.started, 3),
            "restored": self.host.restored,
            "revision": state["revision"],
            "screen": state["screen"],
            "connection": state["connection"]["phase"],
            "server": self._server(state),
            "effects_executed": len(self.host.effects),
            "calls": len(self.host.steps),
            "host_errors": list(self.host.errors),
        }

    def _server(self, state: dict) -> str:
        """Whether a real server is behind the connection the app shows: a scenario's
        connection is a fixture (the host opened no socket), so what the app sends goes nowhere."""
        if self.host.socket_id is not None:
            return "real: the host opened a WebSocket to the paired server"
        if state["connection"]["phase"] == "disconnected":
            return "none"
        return "none: the connection is the scenario's fixture; what the app sends goes nowhere"

    async def state(self, args: dict) -> dict:
        return self.app.state()

    async def tree(self, args: dict) -> dict:
        return self.app.tree()

    async def render(self, args: dict) -> str:
        root = args.get("root")
        tree = self.app.tree()
        if root is not None and find_node(tree, root) is None:
            raise CommandError("refused", f"no node {root!r} in the tree")
        return render_screen(tree, root)

    async def find_node(self, args: dict) -> dict:
        node_id = _text(args, "node_id")
        node = find_node(self.app.tree(), node_id)
        if node is None:
            raise CommandError("refused", f"no node {node_id!r} in the tree")
        return checks.node_summary(node)

    async def tap(self, args: dict) -> dict:
        node_id = _text(args, "node_id")
        problem = checks.tap_problem(self.app.tree(), node_id)
        if problem is not None:
            raise CommandError("refused", problem)
        report = self._dispatch({"type": "tap_node", "node_id": node_id})
        await self._settle(args)
        return _summary(report)

    async def tap_xy(self, args: dict) -> dict:
        """Tap the point (x, y), as a finger would: refused (nothing sent)
        when nothing tappable is there, like ``tap`` of a node that cannot be."""
        x, y = _coordinate(args, "x"), _coordinate(args, "y")
        hit = self.app.hit_test(x, y)
        if hit["node"] is None:
            raise CommandError("refused", f"({x:g}, {y:g}) is outside the screen")
        target = hit["tap_target"]
        if target is None:
            raise CommandError("refused", f"nothing tappable at ({x:g}, {y:g}): {hit['node']['id']} "
                                          f"({hit['node']['role']}), in {' > '.join(hit['path'])}")
        problem = checks.tap_problem(self.app.tree(), target)
        if problem is not None:
            raise CommandError("refused", f"at ({x:g}, {y:g}): {problem}")
        report = self._dispatch({"type": "tap_xy", "x": x, "y": y})
        await self._settle(args)
        return {**_summary(report), "node_id": target}

    async def hit_test(self, args: dict) -> dict:
        return self.app.hit_test(_coordinate(args, "x"), _coordinate(args, "y"))

    async def scroll(self, args: dict) -> dict:
        """Scroll the message list to ``offset`` points (``"end"``: follow the newest message)."""
        messages = find_node(self.app.tree(), "chat.messages")
        scroll = (messages or {}).get("scroll")
        if messages is None or not messages.get("visible", True) or not scroll:
            raise CommandError("refused", f"the message list is not on the {self.app.state()['screen']} screen")
        offset = args.get("offset")
        if offset == "end":
            offset = scroll["max_offset"]
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise CommandError("bad_request", 'offset is a number of points from 0, or "end"')
        report = self._dispatch({"type": "scroll_messages", "offset": offset})
        await self._settle(args)
        scroll = find_node(self.app.tree(), "chat.messages")["scroll"]
        return {**_summary(report), "scroll": scroll}

    async def screenshot(self, args: dict) -> dict:
        """The screen's SVG (``jcode_mobile_screenshot_svg``): the client renders a PNG itself."""
        answer = self.app.screenshot()
        return {k: answer[k] for k in ("revision", "format", "width", "height", "svg")}

    async def set_field(self, args: dict) -> dict:
        name, value = _text(args, "name"), _text(args, "value", allow_empty=True)
        if "." in name:  # a text field's node id: the edit action it supports
            node = find_node(self.app.tree(), name)
            if node is None:
                raise CommandError("refused", f"no node {name!r} in the tree")
            edits = [a for a in node.get("supported_actions", []) if a.startswith("set_")]
            if not edits:
                raise CommandError("refused", f"node {name!r} is not a text field")
            action = {"type": edits[0], "value": value}
        else:
            try:
                action = checks.field_action(name, value)
            except ValueError as problem:
                raise CommandError("bad_request", str(problem)) from None
        report = self._dispatch(action)
        await self._settle(args)
        return _summary(report)

    async def dispatch(self, args: dict) -> dict:
        report = self.host.dispatch(_json_arg(args, "json"))
        await self._settle(args)
        return _summary(report)

    async def event(self, args: dict) -> dict:
        report = self.host.platform_event(_json_arg(args, "json"))
        await self._settle(args)
        return _summary(report)

    async def log(self, args: dict) -> dict:
        limit = args.get("limit", 20)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 0 <= limit <= 0xFFFFFFFF:
            raise CommandError("bad_request", "limit is an integer from 0 to 4294967295")
        return self.app.logs(limit)

    async def load_scenario(self, args: dict) -> dict:
        report = self._dispatch({"type": "load_scenario", "scenario": _text(args, "scenario")})
        await self._settle(args)
        return _summary(report)

    async def assert_screen(self, args: dict) -> dict:
        expected = _text(args, "screen")
        return await self._until(args, lambda: checks.check_screen(self.app.state(), expected))

    async def assert_text(self, args: dict) -> dict:
        text = _text(args, "text")
        return await self._until(args, lambda: checks.check_text(self.app.tree(), text))

    async def assert_node(self, args: dict) -> dict:
        node_id = _text(args, "node_id")
        enabled, role, label = args.get("enabled"), args.get("role"), args.get("label")
        return await self._until(
            args, lambda: checks.check_node(self.app.tree(), node_id, enabled=enabled, role=role, label=label))

    async def assert_no_error(self, args: dict) -> dict:
        return await self._until(args, lambda: checks.check_no_error(self.app.state()))

    async def assert_effect(self, args: dict) -> dict:
        effect_type = _text(args, "effect")
        return await self._until(args, lambda: checks.check_effect(self.host.effects, effect_type))

    async def export_replay(self, args: dict) -> dict:
        path = Path(_text(args, "path"))
        recorder = self.host.recorder
        recorder.finish(self.app)
        try:
            write_private(path, recorder.trace.to_json().encode("utf-8"))  # 0600, no symbolic link followed
        except OSError as problem:
            raise CommandError("refused", f"cannot write {path}: {problem.strerror or problem}") from None
        return {"path": str(path), "steps": len(recorder.steps)}

    async def shutdown(self, args: dict) -> dict:
        self.stopped.set()
        return {"stopped": True}


def _error(code: str, message: str, failure: Optional[dict] = None) -> dict:
    error: Dict[str, Any] = {"code": code, "message": message}
    if failure is not None:
        error["failure"] = failure
    return {"ok": False, "error": error}


def _text(args: dict, name: str, *, allow_empty: bool = False) -> str:
    value = args.get(name)
    if not isinstance(value, str) or (not value and not allow_empty):
        raise CommandError("bad_request", f"{name} must be a non-empty string")
    return value


def _coordinate(args: dict, name: str) -> float:
    value = args.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or value in (float("inf"), float("-inf")):
        raise CommandError("bad_request", f"{name} must be a finite number of points")
    return float(value)


def _number(args: dict, name: str, default: float) -> float:
    value = args.get(name, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3600:
        raise CommandError("bad_request", f"{name} is a number of seconds from 0 to 3600")
    return float(value)


def _json_arg(args: dict, name: str) -> Any:
    """An action or event given as JSON text; the core judges its content."""
    text = _text(args, name)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text  # passed on as is: the core answers invalid_json with an offset


def build_host(options: dict, *, secure_store: Optional[str], storage: Optional[str],
               device: DeviceScript, restore: bool = False, fresh: bool = False) -> RealHost:
    """The simulator's host: file-backed stores when paths are given.

    With ``restore`` and no ``scenario`` in ``options``, the app is created
    from the snapshot the storage holds (the last launch's), if any; without
    one it starts at ``onboarding``. ``fresh`` forgets the stored snapshot first."""
    store = FileStorage(Path(storage)) if storage else MemoryStorage()
    if fresh:
        store.delete(SNAPSHOT_KEY)
    restored = False
    if restore and "scenario" not in options:
        merged = restore_options(store, options)
        restored = "snapshot" in merged
        options = merged if restored else {**options, "scenario": "onboarding"}
    app = App(options)
    host = RealHost(
        app,
        secure_store=FileSecureStore(Path(secure_store)) if secure_store else MemorySecureStore(),
        storage=store,
        device=device,
        recorder=Recorder(options, app=app),
    )
    host.restored = restored
    return host


def main(argv: Optional[list] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jcode_mobile.cli.simulator")
    parser.add_argument("--socket", required=True)
    parser.add_argument("--options", default="{}", help="app_new options as JSON")
    parser.add_argument("--secure-store")
    parser.add_argument("--storage")
    parser.add_argument("--qr-payload")
    parser.add_argument("--speech-text")
    parser.add_argument("--push-token")
    parser.add_argument("--restore", action="store_true",
                        help="start from the snapshot in --storage when the options name no scenario")
    parser.add_argument("--fresh", action="store_true", help="forget the snapshot in --storage first")
    args = parser.parse_args(argv)
    options = json.loads(args.options)
    device = DeviceScript(qr_payload=args.qr_payload, speech_text=args.speech_text, push_token=args.push_token)
    socket_path = Path(args.socket)
    try:
        private_dir(socket_path.parent, create=True)  # as `jcode-mobile start` checks it
    except UnsafeDirectory as problem:
        print(f"jcode-mobile simulator: {problem}", file=sys.stderr)
        return 2

    async def run() -> None:
        simulator = Simulator(options, socket_path,
                              host=build_host(options, secure_store=args.secure_store, storage=args.storage,
                                              device=device, restore=args.restore, fresh=args.fresh))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, simulator.stopped.set)
        await simulator.serve()

    asyncio.run(run())
    return 0


if __name__ == "__main__":
    sys.exit(main())
