"""Faults the fake gateway can inject into its traffic, and the raw frames they need.

:class:`Faults` is a plain dataclass; a :class:`~jcode_mobile.gateway.server.GatewayServer`
reads it before every frame it writes, so changing it at run time
(``GatewayServer.set_faults``) takes effect on the next frame. Unless said
otherwise a fault applies to server→client traffic, per connection.

==============  ===============================================================
field           effect
==============  ===============================================================
drop_after      After N events written on a connection (counted from its
                upgrade; duplicates and garbage do not count) the connection is
                ended without a close frame: the client sees 1006. A
                coalesced frame never reaches past the N-th event. Each
                connection is dropped at most once (it is gone); a
                reconnection counts again from 0.
drop_on_request When a client frame holds a request of this type (``"message"``),
                the server reads the frame and does what it says (a message is
                stored, its turn runs) but the connection drops before any of
                its answers is written (no ack): the client sees 1006 and
                cannot know whether the request arrived. Takes ``drop_times``
                like ``drop_after``.
drop_times      How many more connections ``drop_after`` / ``drop_on_request``
                may drop (each drop takes one; None: no limit).
                ``drop_after=3, drop_times=1`` drops the first connection that
                reaches 3 events, and no other.
garble_next     The next N frames (server-wide) are each preceded by a broken
                JSON line (the frame's own text cut in half, in a frame of its
                own). The real frame follows it: nothing is lost, a robust
                client logs the garbage and goes on.
garble_every    Every N-th frame of a connection is preceded by garbage, as above.
delay_ms        Every server frame waits that long before it is written (order
                is kept: frames of a connection are written one after the other).
duplicate       Every event frame is written twice.
split           Every frame is written as a fragmented message: a text frame
                with FIN=0 holding the first half of the payload bytes, then a
                continuation frame with the rest; and the bytes of each of these
                frames reach TCP in two writes ``split_pause_ms`` apart.
split_pause_ms  The pause inside a split frame (default 20 ms).
coalesce        Up to N consecutive events waiting to be written share one text
                frame, newline-separated (0 or 1: one event per frame, as the
                real gateway does). Events are "waiting" together when the
                server produced them at once (the answers to one frame) or the
                writer was held up (delay, stall).
stall           The server reads nothing and writes nothing: received frames are
                held unanswered and events wait. WebSocket pings continue (the
                gateway is alive, the jcode server behind it is stuck). Lifting
                the stall answers the held frames, in order. A connection the
                server ends meanwhile (reload, revoke) writes what waited, then
                drops.
http_stall      ``GET /health`` and ``POST /pair`` never answer (until lifted).
http_status     ``GET /health`` and ``POST /pair`` answer this status with
                ``{"error": <reason phrase>}`` without reaching the server (the
                pairing code is not used).
==============  ===============================================================

The counters ``garble_next`` and ``drop_times`` count down in place, in the
Faults object the server holds.

Actions that are not flags live on the server: ``reload()``,
``revoke_token(token)``, ``revoke_all_tokens()``, ``request_session_close(reason)``.
"""

from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional

__all__ = ["Faults", "ws_frame", "garbage", "OPCODE_TEXT", "OPCODE_CONTINUATION"]

OPCODE_CONTINUATION = 0x0
OPCODE_TEXT = 0x1


@dataclass
class Faults:
    """What the fake gateway does wrong on purpose (all off by default). See the module docstring."""

    drop_after: Optional[int] = None
    drop_on_request: Optional[str] = None
    drop_times: Optional[int] = None
    garble_next: int = 0
    garble_every: Optional[int] = None
    delay_ms: int = 0
    duplicate: bool = False
    split: bool = False
    split_pause_ms: int = 20
    coalesce: int = 0
    stall: bool = False
    http_stall: bool = False
    http_status: Optional[int] = None

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ValueError when a field has the wrong type or a negative value."""
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            optional = f.default is None
            if value is None and optional:
                continue
            if f.name == "drop_on_request":
                if not isinstance(value, str) or not value:
                    raise ValueError(f"fault drop_on_request must be a request type or null, not {value!r}")
                continue
            if f.type in ("bool",):
                if not isinstance(value, bool):
                    raise ValueError(f"fault {f.name} must be true or false, not {value!r}")
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise ValueError(f"fault {f.name} must be an integer{' or null' if optional else ''}, not {value!r}")
            if value < 0:
                raise ValueError(f"fault {f.name} must not be negative: {value}")
        if self.http_status is not None and not 100 <= self.http_status <= 599:
            raise ValueError(f"fault http_status must be an HTTP status (100-599): {self.http_status}")
        if self.garble_every == 0:
            raise ValueError("fault garble_every must be at least 1 (or null)")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "Faults":
        """Faults from a JSON object; unknown names are an error."""
        return cls().replace(**dict(values))

    def replace(self, **changes: Any) -> "Faults":
        """A copy with ``changes`` applied (validated; unknown names are an error)."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(changes) - known)
        if unknown:
            raise ValueError(f"unknown fault {', '.join(unknown)} (known: {', '.join(sorted(known))})")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> Dict[str, Any]:
        return dataclasses.asdict(self)


def ws_frame(payload: bytes, *, opcode: int, fin: bool) -> bytes:
    """One unmasked WebSocket frame as a server writes it (RFC 6455 §5.2):
    byte 0 is FIN | opcode, then the payload length (7 bits, or 126 + 16 bits,
    or 127 + 64 bits), then the payload."""
    head = bytes([(0x80 if fin else 0x00) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload


def garbage(text: str) -> str:
    """A broken JSON line made from a frame's text: its first half (at least
    one character), so it never parses."""
    cut = text[: max(1, len(text) // 2)]
    return cut if cut != text else text + "{"
