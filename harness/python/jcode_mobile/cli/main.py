"""``jcode-mobile``: drive a simulated jcode mobile app from a shell.

Exit status: 0 done; 1 an assertion (or a replay) failed; 2 bad arguments;
3 no simulator answers; 4 the simulator or the core refused the command;
5 ``run`` could not pair; 6 ``run`` could not connect; 7 ``run``'s turn did
not finish; 8 the core library is missing or cannot be loaded; 70 an
internal error. Every failure is one line on stderr,
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

from ..arguments import port_type
from . import client

EXIT_ASSERTION = 1
EXIT_USAGE = 2
EXIT_NO_SIMULATOR = 3
EXIT_REFUSED = 4
EXIT_NO_LIBRARY = 8
EXIT_INTERNAL = 70

PROG = "jcode-mobile"


class CLIError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad argument in one line (exit 2), no usage dump."""

    def error(self, message: str) -> NoReturn:
        # main() adds the one "jcode-mobile: " prefix; a subcommand names itself ("start: …")
        command = self.prog[len(PROG):].strip()
        raise CLIError(EXIT_USAGE, f"{command + ': ' if command else ''}{message} (see --help)")


def _library_error(problem: OSError) -> CLIError:
    """The core library is not there (``pip install`` before ``make lib``) or does not load."""
    return CLIError(EXIT_NO_LIBRARY, f"the jcode mobile core library is missing: {problem}; an installed package "
                                     "bundles it when `pip install ./harness/python` runs after `make lib`")


def scenario_names() -> List[str]:
    """The scenarios the loaded library knows, from its runtime schema (``app_new``'s ``scenario`` option)."""
    from ..binding import schema_document

    return list(schema_document()["$defs"]["app_options"]["properties"]["scenario"]["enum"])


def _scenarios_help() -> str:
    try:
        return "one of: " + ", ".join(scenario_names())
    except Exception:  # no library, or one too old to list them
        return "the names come from the core library, which is not built: run `make lib`"


def _known_scenarios() -> str:
    """``"; the scenarios are: …"`` to end an unknown-scenario error ("" when the library is not there)."""
    try:
        return f"; the scenarios are: {', '.join(scenario_names())}"
    except Exception:  # no library, or one too old to list them
        return ""


def _package_version() -> str:
    """This package's version: the source tree's pyproject.toml when it runs from a checkout
    (``python -m jcode_mobile`` in harness/python), else the installed distribution's."""
    import re
    from importlib import metadata

    try:
        pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    except OSError:
        pyproject = ""
    found = re.search(r'^version = "([^"]+)"', pyproject, re.M)
    if found:
        return f"{found.group(1)} (source tree)"
    try:
        return metadata.version("jcode-mobile")
    except metadata.PackageNotFoundError:
        return "(version unknown)"


def _version_text() -> str:
    from ..binding import library_path, library_versions, load_library

    try:
        lib = load_library()
    except OSError as problem:
        raise _library_error(problem) from None
    versions = library_versions(lib)
    return (f"jcode-mobile {_package_version()}; library {versions['version']} (ABI {versions['abi_version']}) "
            f"at {library_path()}")


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


def _message(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _point(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of points") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number of points")
    return value


def _offset(text: str) -> Any:
    if text == "end":
        return text
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of points (or \"end\")") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more points (or \"end\")")
    return value


def _viewport(text: str) -> Dict[str, int]:
    width, _, height = text.lower().partition("x")
    try:
        size = {"width": int(width), "height": int(height)}
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not WIDTHxHEIGHT in points, such as 390x844") from None
    if not all(1 <= v <= 100000 for v in size.values()):
        raise argparse.ArgumentTypeError("width and height are from 1 to 100000 points")
    return size


def _scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 16:
        raise argparse.ArgumentTypeError("must be more than 0 and at most 16 pixels per point")
    return value


def build_parser(*, list_scenarios: bool = False) -> argparse.ArgumentParser:
    """The argument parser; ``list_scenarios`` (for --help) asks the library for the scenario names."""
    scenarios = f" ({_scenarios_help()})" if list_scenarios else ""
    parser = _Parser(prog=PROG, description="Drive a simulated jcode mobile app (docs/SIMULATOR.md).")
    parser.add_argument("--version", action="store_true",
                        help="print the package's and the core library's versions")
    parser.add_argument("--socket", type=Path, default=None,
                        help="the simulator's Unix socket (default: $JCODE_MOBILE_SOCKET or a per-user path)")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = False  # --version alone; main() asks for a command otherwise

    start = commands.add_parser("start", help="start a background simulator")
    start.add_argument("--scenario", default=None,
                       help="initial scenario (default: restore the last session's saved data, else onboarding)"
                       + scenarios)
    start.add_argument("--options", type=_json_object, default={}, help="more app_new options, as a JSON object")
    start.add_argument("--viewport", type=_viewport, help="the screen size in points, WIDTHxHEIGHT (default 390x844)")
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
    tap = commands.add_parser("tap", help="tap a node, or the point X Y of the screen, as a person would")
    tap.add_argument("target", nargs="+", metavar="NODE_ID | X Y",
                     help="a node id (pair.submit), or two numbers: a point in points from the top-left corner")
    hit = commands.add_parser("hit-test", help="what is at the point X Y of the screen, as JSON")
    hit.add_argument("x", type=_point)
    hit.add_argument("y", type=_point)
    scroll = commands.add_parser("scroll", help="scroll the chat's message list to OFFSET points (0: the first "
                                 "message; end: the newest, following new ones)")
    scroll.add_argument("offset", type=_offset)
    shot = commands.add_parser("screenshot", help="save a picture of the screen (FILE.svg or FILE.png)")
    shot.add_argument("file", type=Path)
    shot.add_argument("--scenario", help="draw this scenario in a fresh app instead of the running simulator's screen"
                      + scenarios)
    shot.add_argument("--viewport", type=_viewport, help="with --scenario: the screen size in points, WIDTHxHEIGHT "
                      "(default 390x844)")
    shot.add_argument("--scale", type=_scale, default=1.0, help="PNG pixels per point (default 1)")
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
    scenario.add_argument("scenario", help="the scenario's name" + scenarios)

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
    run.add_argument("--port", type=port_type(), default=7643, help="the gateway's TCP port, 1 to 65535 (default 7643)")
    run.add_argument("--code", required=True, help="the 6-digit pairing code `jcode pair` shows")
    run.add_argument("--working-dir", required=True, help="the directory the agent works in, on the server")
    run.add_argument("--message", type=_message, required=True, help="the message to send (not empty)")
    run.add_argument("--tls", action="store_true", help="use https/wss")
    run.add_argument("--device-name", default="jcode-mobile CLI")
    run.add_argument("--device-id", default=None, help="default: jcode-mobile-cli-<hostname>")
    run.add_argument("--json", action="store_true", help="print the final state as JSON")
    run.add_argument("--timeout", type=_seconds, default=120.0, help="for the whole run (default 120 s)")
    return parser


def _call(path: Path, command: str, args: Optional[Dict[str, Any]] = None) -> Any:
    try:
        answer = client.request(path, command, args)
    except client.UnsafeDirectory as problem:
        raise CLIError(EXIT_REFUSED, str(problem)) from None
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
    if ns.scenario is not None:
        _check_scenario(ns.scenario)
    options = dict(ns.options)
    if ns.viewport is not None:
        options["viewport"] = ns.viewport
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
    simulated = ""
    if status.get("server", "").startswith("none:"):
        simulated = f", connection {status['connection']} but simulated (no real server behind it: sends go nowhere)"
    print(f"simulator started: pid {status['pid']}, screen {status['screen']}{restored}{simulated}, socket {path}")


def _check_scenario(name: str) -> None:
    """An unknown scenario is refused here, in one line that lists the scenarios the library knows."""
    from ..binding import App, JcodeMobileError

    try:
        App({"scenario": name}).close()
    except JcodeMobileError as problem:
        if problem.code == "invalid_scenario":
            raise CLIError(EXIT_REFUSED, f"{problem}{_known_scenarios()}") from None
        raise


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


def _tap_args(target: List[str]) -> Dict[str, Any]:
    if len(target) == 1:
        return {"node_id": target[0]}
    if len(target) == 2:
        try:
            return {"x": _point(target[0]), "y": _point(target[1])}
        except argparse.ArgumentTypeError as problem:
            raise CLIError(EXIT_USAGE, f"tap: {problem} (see --help)") from None
    raise CLIError(EXIT_USAGE, "tap: give a node id, or the two coordinates X Y (see --help)")


def _screenshot(path: Path, ns: argparse.Namespace) -> None:
    """``screenshot FILE``: the SVG of a scenario drawn in a fresh app, or of
    the running simulator's screen; a .png is rendered here (cairosvg)."""
    suffix = ns.file.suffix.lower()
    if suffix not in (".svg", ".png"):
        raise CLIError(EXIT_USAGE, f"screenshot: {ns.file} must end in .svg or .png")
    if ns.viewport is not None and ns.scenario is None:
        raise CLIError(EXIT_USAGE, "screenshot: --viewport needs --scenario (a running simulator keeps "
                                   "the viewport it started with: `jcode-mobile start --viewport WxH`)")
    if ns.scenario is not None:
        from ..binding import App, JcodeMobileError

        options: Dict[str, Any] = {"scenario": ns.scenario}
        if ns.viewport is not None:
            options["viewport"] = ns.viewport
        try:
            with App(options) as app:
                shot = app.screenshot()
        except JcodeMobileError as problem:
            known = _known_scenarios() if problem.code == "invalid_scenario" else ""
            raise CLIError(EXIT_REFUSED, f"the core refused the options: {problem}{known}") from None
        source = f"scenario {ns.scenario}"
    else:
        shot = _call(path, "screenshot")
        source = "the simulator's screen"
    size = f"{shot['width']}×{shot['height']} points"
    if suffix == ".svg":
        _write(ns.file, shot["svg"].encode("utf-8"))
        print(f"wrote {ns.file}: SVG of {source}, {size}, revision {shot['revision']}")
        return
    from .. import picture

    pixels = (round(shot["width"] * ns.scale), round(shot["height"] * ns.scale))
    if max(pixels) > picture.MAX_PIXELS_PER_SIDE:
        raise CLIError(EXIT_USAGE, f"screenshot: {pixels[0]}×{pixels[1]} pixels is more than the "
                                   f"{picture.MAX_PIXELS_PER_SIDE} a side the renderer draws: use a smaller --scale")
    try:
        png = picture.svg_to_png(shot["svg"], scale=ns.scale)
    except ImportError as problem:
        raise CLIError(EXIT_INTERNAL, str(problem)) from None
    _write(ns.file, png)
    width, height = picture.png_size(png)
    print(f"wrote {ns.file}: PNG of {source}, {width}×{height} px ({size} at scale {ns.scale:g}), "
          f"revision {shot['revision']}")
    font = picture.font_problem()
    if font is not None:
        print(f"jcode-mobile: warning: {font}", file=sys.stderr)


def _write(file: Path, data: bytes) -> None:
    try:
        file.write_bytes(data)
    except OSError as problem:
        raise CLIError(EXIT_REFUSED, f"cannot write {file}: {problem.strerror or problem}") from None


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
        args = _tap_args(ns.target)
        if "node_id" in args:
            result = _call(path, command, args)
            print(f"tapped {args['node_id']}: revision {result['revision']}, effects {result['effects']}")
        else:
            result = _call(path, "tap-xy", args)
            print(f"tapped {result['node_id']} at ({args['x']:g}, {args['y']:g}): revision {result['revision']}, "
                  f"effects {result['effects']}")
    elif command == "hit-test":
        _print_json(_call(path, command, {"x": ns.x, "y": ns.y}))
    elif command == "scroll":
        result = _call(path, command, {"offset": ns.offset})
        scroll = result["scroll"]
        print(f"scrolled the messages to {scroll['offset']} of {scroll['max_offset']} points: "
              f"revision {result['revision']}")
    elif command == "screenshot":
        _screenshot(path, ns)
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
        try:
            result = _call(path, command, {"scenario": ns.scenario})
        except CLIError as problem:
            if problem.status == EXIT_REFUSED and problem.message.startswith("invalid_scenario"):
                problem.message += _known_scenarios()
            raise
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
    arguments = sys.argv[1:] if argv is None else list(argv)
    try:
        ns = build_parser(list_scenarios="-h" in arguments or "--help" in arguments).parse_args(arguments)
        if ns.version:
            print(_version_text())
            return 0
        if ns.command is None:
            raise CLIError(EXIT_USAGE, "the following arguments are required: COMMAND (see --help)")
        if ns.command in ("start", "replay", "run") or (ns.command == "screenshot" and ns.scenario is not None):
            from ..binding import load_library

            try:
                load_library()  # these run the core in this process: say so plainly when it is not built
            except OSError as problem:
                raise _library_error(problem) from None
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
