"""``jcode-mobile``: drive a simulated jcode mobile app from a shell.

Exit status: 0 done; 1 an assertion (or a replay) failed; 2 bad arguments;
3 no simulator answers; 4 the simulator or the core refused the command;
5 ``run`` could not pair; 6 ``run`` could not connect; 7 ``run``'s turn did
not finish; 70 an internal error. Every failure is one line on stderr,
``jcode-mobile: <what went wrong>``; a failed assertion prints its structured
failure as JSON on that line.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, NoReturn, Optional

from . import client

EXIT_ASSERTION = 1
EXIT_USAGE = 2
EXIT_NO_SIMULATOR = 3
EXIT_REFUSED = 4
EXIT_INTERNAL = 70


class CLIError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (exit 2), no usage dump."""

    def error(self, message: str) -> NoReturn:
        raise CLIError(EXIT_USAGE, f"{self.prog}: {message} (see --help)")


def _json_object(text: str) -> Dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as problem:
        raise argparse.ArgumentTypeError(f"not JSON: {problem}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError("must be more than 0 and at most 3600 seconds")
    return value


def _limit(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= value <= 0xFFFFFFFF:
        raise argparse.ArgumentTypeError("must be from 0 to 4294967295")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jcode-mobile", description="Drive a simulated jcode mobile app (docs/SIMULATOR.md).")
    parser.add_argument("--socket", type=Path, default=None,
                        help="the simulator's Unix socket (default: $JCODE_MOBILE_SOCKET or a per-user path)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    start = commands.add_parser("start", help="start a background simulator")
    start.add_argument("--scenario", default=None,
                       help="initial scenario (default: restore the last session's saved data, else onboarding)")
    start.add_argument("--options", type=_json_object, default={}, help="more app_new options, as a JSON object")
    start.add_argument("--secure-store",
                       help="keep secrets in this file (mode 0600; default: <socket>.secure.json beside the socket)")
    start.add_argument("--storage",
                       help="keep the app's saved data in this JSON file (default: <socket>.storage.json beside it)")
    start.add_argument("--fresh", action="store_true",
                       help="ignore the saved data: start at onboarding and forget the saved snapshot")
    start.add_argument("--qr-payload", help="what the camera scans (default: the scan is cancelled)")
    start.add_argument("--speech-text", help="what dictation hears (default: nothing)")
    start.add_argument("--push-token", help="the push token the device receives (default: none)")

    for name, text in [("status", "what the simulator is doing"), ("state", "the app state as JSON"),
                       ("tree", "the semantic tree as JSON"), ("shutdown", "stop the simulator"),
                       ("assert-no-error", "no error banner, no failed connection")]:
        sub = commands.add_parser(name, help=text)
        if name.startswith("assert-"):
            sub.add_argument("--timeout", type=_seconds, default=2.0)

    render = commands.add_parser("render", help="the screen as readable text")
    render.add_argument("--root", help="render only this node's subtree")
    find = commands.add_parser("find-node", help="one node of the tree as JSON")
    find.add_argument("node_id")
    tap = commands.add_parser("tap", help="tap a node, as a person would")
    tap.add_argument("node_id")
    field = commands.add_parser("set-field", help="type into a field: host, port, code, device_name, working_dir, "
                                "draft, or a text field's node id")
    field.add_argument("name")
    field.add_argument("value")
    dispatch = commands.add_parser("dispatch", help="dispatch an action given as JSON")
    dispatch.add_argument("json")
    event = commands.add_parser("event", help="report a platform event given as JSON")
    event.add_argument("json")
    log = commands.add_parser("log", help="the transition log")
    log.add_argument("--limit", type=_limit, default=20)
    scenario = commands.add_parser("load-scenario", help="load a named scenario")
    scenario.add_argument("scenario")

    screen = commands.add_parser("assert-screen", help="the app shows this screen")
    screen.add_argument("screen")
    text = commands.add_parser("assert-text", help="this text is on the screen")
    text.add_argument("text")
    node = commands.add_parser("assert-node", help="this node is visible (with these properties)")
    node.add_argument("node_id")
    enabled = node.add_mutually_exclusive_group()
    enabled.add_argument("--enabled", dest="enabled", action="store_const", const=True)
    enabled.add_argument("--disabled", dest="enabled", action="store_const", const=False)
    node.add_argument("--role")
    node.add_argument("--label")
    effect = commands.add_parser("assert-effect", help="the host executed an effect of this type")
    effect.add_argument("effect")
    for sub in (screen, text, node, effect):
        sub.add_argument("--timeout", type=_seconds, default=2.0, help="keep checking this long (default 2 s)")

    export = commands.add_parser("export-replay", help="save the session as a replayable trace")
    export.add_argument("file", type=Path)
    replay = commands.add_parser("replay", help="replay a trace and compare every output")
    replay.add_argument("file", type=Path)

    run = commands.add_parser("run", help="pair, connect, send one message, print the transcript")
    run.add_argument("--host", required=True)
    run.add_argument("--port", type=int, default=7643)
    run.add_argument("--code", required=True, help="the 6-digit pairing code `jcode pair` shows")
    run.add_argument("--working-dir", required=True, help="the directory the agent works in, on the server")
    run.add_argument("--message", required=True)
    run.add_argument("--tls", action="store_true", help="use https/wss")
    run.add_argument("--device-name", default="jcode-mobile CLI")
    run.add_argument("--device-id", default=None, help="default: jcode-mobile-cli-<hostname>")
    run.add_argument("--json", action="store_true", help="print the final state as JSON")
    run.add_argument("--timeout", type=_seconds, default=120.0, help="for the whole run (default 120 s)")
    return parser


def _call(path: Path, command: str, args: Optional[Dict[str, Any]] = None) -> Any:
    try:
        answer = client.request(path, command, args)
    except client.NoSimulator as problem:
        raise CLIError(EXIT_NO_SIMULATOR, str(problem)) from None
    except ValueError:
        raise CLIError(EXIT_INTERNAL, "the simulator's answer is not JSON") from None
    if answer.get("ok"):
        return answer.get("result")
    error = answer.get("error") or {}
    code = error.get("code")
    if code == "assertion_failed":
        raise CLIError(EXIT_ASSERTION, f"assertion failed: {error.get('message')}")
    status = EXIT_INTERNAL if code == "internal" else EXIT_REFUSED
    raise CLIError(status, str(error.get("message")))


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def _start(path: Path, ns: argparse.Namespace) -> None:
    if client.is_running(path):
        raise CLIError(EXIT_REFUSED, f"a simulator is already running at {path} (`jcode-mobile shutdown` first)")
    options = dict(ns.options)
    if ns.scenario is not None:
        options["scenario"] = ns.scenario
    storage = ns.storage or str(client.state_file(path, "storage"))
    secure_store = ns.secure_store or str(client.state_file(path, "secure"))
    # no scenario: the app restores what the last simulator at this socket saved (a phone relaunched)
    extra: List[str] = ["--restore"] + (["--fresh"] if ns.fresh else [])
    for flag, value in [("--secure-store", secure_store), ("--storage", storage),
                        ("--qr-payload", ns.qr_payload), ("--speech-text", ns.speech_text),
                        ("--push-token", ns.push_token)]:
        if value is not None:
            extra += [flag, value]
    try:
        status = client.spawn(path, options, extra)
    except client.NoSimulator as problem:
        raise CLIError(EXIT_REFUSED, str(problem)) from None
    restored = ", restored from the saved data" if status.get("restored") else ""
    print(f"simulator started: pid {status['pid']}, screen {status['screen']}{restored}, socket {path}")


def _replay(file: Path) -> None:
    from ..trace import Trace, replay  # the replay needs only the library, no simulator

    try:
        trace = Trace.load(file)
    except FileNotFoundError:
        raise CLIError(EXIT_REFUSED, f"no trace at {file}") from None
    except (ValueError, KeyError, TypeError) as problem:
        raise CLIError(EXIT_REFUSED, f"{file} is not a usable trace: {problem}") from None
    result = replay(trace)
    if not result.ok:
        # one line: the first difference, its expected and actual values
        raise CLIError(EXIT_ASSERTION, "replay differs: " + "; ".join(
            line.strip() for line in str(result).splitlines() if line.strip()))
    print(f"replay identical: {result}")


def run_command(ns: argparse.Namespace) -> None:
    path: Path = ns.socket or client.default_socket()
    command = ns.command
    if command == "start":
        _start(path, ns)
    elif command == "replay":
        _replay(ns.file)
    elif command == "run":
        from .oneshot import run_once

        status, text = run_once(ns)
        if status != 0:
            raise CLIError(status, text)
        print(text)
    elif command == "render":
        print(_call(path, "render", {"root": ns.root} if ns.root else {}))
    elif command == "shutdown":
        _call(path, "shutdown")
        deadline = time.monotonic() + 5
        while path.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        print("simulator stopped")
    elif command in ("status", "state", "tree"):
        _print_json(_call(path, command))
    elif command == "find-node":
        _print_json(_call(path, command, {"node_id": ns.node_id}))
    elif command == "tap":
        result = _call(path, command, {"node_id": ns.node_id})
        print(f"tapped {ns.node_id}: revision {result['revision']}, effects {result['effects']}")
    elif command == "set-field":
        result = _call(path, command, {"name": ns.name, "value": ns.value})
        print(f"set {ns.name}: revision {result['revision']}")
    elif command in ("dispatch", "event"):
        result = _call(path, command, {"json": ns.json})
        _print_json(result)
        if not result.get("ok"):
            error = result.get("error") or {}
            raise CLIError(EXIT_REFUSED, f"the core refused it: {error.get('code')}: {error.get('message')}")
    elif command == "log":
        _print_json(_call(path, command, {"limit": ns.limit}))
    elif command == "load-scenario":
        result = _call(path, command, {"scenario": ns.scenario})
        print(f"loaded {ns.scenario}: revision {result['revision']}")
    elif command == "export-replay":
        result = _call(path, command, {"path": str(ns.file.resolve())})
        print(f"exported {result['steps']} steps to {result['path']}")
    elif command.startswith("assert-"):
        args: Dict[str, Any] = {"timeout": ns.timeout}
        if command == "assert-screen":
            args["screen"] = ns.screen
        elif command == "assert-text":
            args["text"] = ns.text
        elif command == "assert-node":
            args.update(node_id=ns.node_id, enabled=ns.enabled, role=ns.role, label=ns.label)
        elif command == "assert-effect":
            args["effect"] = ns.effect
        _call(path, command, args)
        print("ok")
    else:  # pragma: no cover - argparse only yields the commands above
        raise CLIError(EXIT_USAGE, f"unknown command {command}")


def main(argv: Optional[List[str]] = None) -> int:
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `jcode-mobile tree | head` ends quietly
    try:
        ns = build_parser().parse_args(argv)
        run_command(ns)
        return 0
    except CLIError as problem:
        print(f"jcode-mobile: {problem.message}", file=sys.stderr)
        return problem.status
    except KeyboardInterrupt:
        print("jcode-mobile: interrupted", file=sys.stderr)
        return 130
    except Exception as problem:  # never a traceback for a person or an agent
        print(f"jcode-mobile: internal error: {type(problem).__name__}: {problem}", file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
