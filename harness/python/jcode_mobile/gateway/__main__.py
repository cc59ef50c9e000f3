"""``python -m jcode_mobile.gateway``: the fake jcode gateway in the foreground.

::

    python -m jcode_mobile.gateway --port 7643 --code 123456 [--host 127.0.0.1]
        [--script session.json] [--delay-ms 40] [--drop-after 20 [--drop-times 1]]
        [--garble-next N] [--garble-every N] [--duplicate] [--split] [--coalesce N]
        [--stall] [--http-stall] [--http-status 500] [--ping-interval 20]
        [--one-time-code] [--allow-remote] [--no-control] [--quiet]

Prints ``jcode fake gateway listening on http://127.0.0.1:PORT (pairing code
C)`` once it listens (``--port 0`` picks a free port), then one line per HTTP
request and WebSocket connection (tokens are never printed). Ctrl-C or
SIGTERM stop it (exit status 0). It listens on loopback addresses only unless
``--allow-remote`` is given (exit status 2 otherwise); a port outside 0 to
65535 is refused too (exit status 2).

The pairing code (``--code``, which wins over the script's) stays valid for
any number of pairings, so a walkthrough can pair ``jcode-mobile run`` and
then the simulator with the same code; ``--one-time-code`` makes it work once,
as jcode's codes do (jcode: crates/jcode-base/src/gateway/registry.rs,
validate_code removes a code when it is used). A refused pairing is logged
with its reason (``HTTP POST /pair -> 401 (device 'x'): refused, the code was
already used …``; never the code).
Other processes drive it through ``POST /_fake/control`` — a fake-only
extension, absent from real jcode::

    curl -s localhost:7643/_fake/control -d '{"command":"add_pair_code","code":"654321"}'
    curl -s localhost:7643/_fake/control -d '{"command":"push","events":[{"type":"reloading"}]}'
    curl -s localhost:7643/_fake/control -d '{"command":"set_faults","faults":{"delay_ms":100}}'
    curl -s localhost:7643/_fake/control -d '{"command":"state"}'

Commands: push {events}, finish_turn, reload, revoke_all_tokens {drop?},
request_session_close {reason}, set_faults {faults}, add_pair_code {code}, state,
foreign_turn {reply?, content?, request_id?, session_id?}, finish_foreign_turn
{session_id?}, set_rules {rules: {reload_starting}}, compact_session
{session_id?, keep_last?} (GatewayServer.control says what each does).
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import signal
import sys
from typing import Any, Dict, List, Optional

from ..arguments import port_type
from ..fake_gateway import DEFAULT_PORT, FakeJcodeServer
from .faults import Faults
from .script import Script, load_script
from .server import GatewayServer, is_loopback


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m jcode_mobile.gateway",
                                     description="A fake jcode gateway (today's server rules) on a real port.")
    parser.add_argument("--port", type=port_type(free_allowed=True), default=DEFAULT_PORT,
                        help=f"TCP port, 1 to 65535 (0: a free one, printed once it listens; default {DEFAULT_PORT})")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback unless --allow-remote)")
    parser.add_argument("--code", help="the pairing code (default: the script's, else 123456)")
    parser.add_argument("--one-time-code", action="store_true",
                        help="the pairing code works once, as jcode's do (default: reusable, a fake-only convenience)")
    parser.add_argument("--script", help="a JSON script: history, replies, faults (see jcode_mobile.gateway.script)")
    parser.add_argument("--allow-remote", action="store_true", help="allow a non-loopback --host")
    parser.add_argument("--no-control", action="store_true", help="do not serve POST /_fake/control")
    parser.add_argument("--ping-interval", type=float, default=20.0, help="seconds between WebSocket pings (0: none)")
    parser.add_argument("--quiet", action="store_true", help="print only the listening line")
    faults = parser.add_argument_group("faults (see jcode_mobile.gateway.faults)")
    faults.add_argument("--delay-ms", type=int)
    faults.add_argument("--drop-after", type=int)
    faults.add_argument("--drop-on-request", metavar="TYPE", help="drop a connection when a request of TYPE arrives, "
                        "after the server read it and before any answer is written")
    faults.add_argument("--drop-times", type=int)
    faults.add_argument("--garble-next", type=int)
    faults.add_argument("--garble-every", type=int)
    faults.add_argument("--duplicate", action="store_true", default=None)
    faults.add_argument("--split", action="store_true", default=None)
    faults.add_argument("--split-pause-ms", type=int)
    faults.add_argument("--coalesce", type=int)
    faults.add_argument("--stall", action="store_true", default=None)
    faults.add_argument("--http-stall", action="store_true", default=None)
    faults.add_argument("--http-status", type=int)
    return parser


_FAULT_OPTIONS = ("delay_ms", "drop_after", "drop_on_request", "drop_times", "garble_next", "garble_every", "duplicate", "split",
                  "split_pause_ms", "coalesce", "stall", "http_stall", "http_status")


def _say(line: str) -> None:
    print(line, flush=True)


async def _serve(server: GatewayServer, code: str) -> int:
    await server.start()
    _say(f"jcode fake gateway listening on {server.url} (pairing code {code})")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    try:
        await stop.wait()
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(signum)
        await server.stop()
    if server.log is not None:
        _say("jcode fake gateway stopped")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if not args.allow_remote and not is_loopback(args.host):
        print(f"refusing to listen on {args.host}: not a loopback address (use --allow-remote to force)",
              file=sys.stderr)
        return 2
    try:
        script = load_script(args.script) if args.script else Script({}, [], Faults())
        changes: Dict[str, Any] = {name: getattr(args, name) for name in _FAULT_OPTIONS
                                   if getattr(args, name) is not None}
        faults = script.faults.replace(**changes)
    except (OSError, ValueError) as problem:
        print(f"bad script or fault: {problem}", file=sys.stderr)
        return 2
    kwargs = dict(script.server_kwargs)
    if args.code is not None:
        kwargs["pair_code"] = args.code
    kwargs["reusable_pair_code"] = not args.one_time_code
    kwargs.setdefault("token", secrets.token_hex(32))  # real tokens are 64 hex digits
    fake = FakeJcodeServer(replies=list(script.replies), **kwargs)
    server = GatewayServer(fake, host=args.host, port=args.port, faults=faults, ping_interval=args.ping_interval,
                           control=not args.no_control, allow_remote=args.allow_remote,
                           log=None if args.quiet else _say)
    try:
        return asyncio.run(_serve(server, fake.pair_code))
    except OSError as problem:
        print(f"cannot listen on {args.host}:{args.port}: {problem}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
