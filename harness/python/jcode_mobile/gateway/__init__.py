"""The fake jcode gateway on real sockets (HTTP + WebSocket on one loopback port).

- :class:`GatewayServer` (asyncio): ``await start()``, ``await stop()``,
  ``port``, ``url``, ``set_faults``, ``reload``, ``revoke_token``,
  ``revoke_all_tokens``, ``request_session_close``, ``push``, ``finish_turn``,
  ``connections``, ``control``
- :class:`RunningGateway`: the same on a loop in a daemon thread, for
  synchronous code (a context manager; ``call(fn)`` runs ``fn(fake)`` there)
- :class:`Faults`: what the gateway does wrong on purpose
- :func:`load_script` / :class:`Script` / :class:`RawReply`: JSON scripts of a
  session, its turns and its faults
- ``python -m jcode_mobile.gateway --port 7643 --code 123456``: run it in the
  foreground (see :mod:`jcode_mobile.gateway.__main__`)

The rules are :class:`~jcode_mobile.fake_gateway.FakeJcodeServer`'s (today's
jcode server); this package only puts them on the wire.
"""

from .faults import Faults
from .script import RawReply, Script, load_script, reply_from_dict
from .server import CONTROL_PATH, GatewayServer, RunningGateway, is_loopback

__all__ = [
    "CONTROL_PATH",
    "Faults",
    "GatewayServer",
    "RawReply",
    "RunningGateway",
    "Script",
    "is_loopback",
    "load_script",
    "reply_from_dict",
]
