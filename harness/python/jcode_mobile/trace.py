"""Record a session with the core, without its secrets, and replay it.

The core is deterministic: the same inputs from the same start give the same
reports, states, trees and logs. A *trace* keeps every call a host made into
the core (each action and platform event, with the report it got) and what
the app looked like at the end, so the session can be replayed against a
library and compared, call by call. Any host can feed a :class:`Recorder`
(``recorder.record(kind, input, report, app=app)`` after each call); the
in-memory :class:`~jcode_mobile.fake_gateway.Host` does it when given
``recorder=`` (see :func:`record_host`).

    recorder = Recorder({"device_id": "d1"})
    host = Host(App({"device_id": "d1"}), recorder=recorder)   # or record_host(host)
    ...drive the host...
    recorder.finish(host.app)
    recorder.save("session.json")

    result = replay(Trace.load("session.json"))
    print(result)            # "ok: 31 steps replayed …" or the first difference

Trace file format (``format`` "jcode-mobile-trace", ``version`` 1)
-----------------------------------------------------------------------

One JSON object (UTF-8, pretty-printed, keys in a fixed order)::

    {
      "format": "jcode-mobile-trace",
      "version": 1,
      "library": {"version": "0.1.0", "abi_version": 1},   # the library recorded
      "options": {...} | null | "raw JSON text",           # what app_new got (redacted)
      "steps": [
        {"kind": "action" | "event",
         "input": {...},              # as given: an object, or raw JSON text as a string,
                                      #   or null (a NULL pointer);
         # "input_base64": "...",     #   instead of input: bytes that are not UTF-8
         "report": {...},             # what the call returned, ok or not (redacted)
         "state_sha256": "…",         # optional: the state after the call
         "tree_sha256": "…"},         # optional: the semantic tree after the call
        ...
      ],
      "final": {"state": {...}, "tree": {...}, "logs": [...]}  # logs: every kept entry
    }

A digest is the SHA-256 (hex) of the redacted value's canonical JSON: keys
sorted, no whitespace, non-ASCII as UTF-8 (``json.dumps(v, sort_keys=True,
separators=(",", ":"), ensure_ascii=False)``). Every string in ``options``,
``input``, ``report`` and ``final`` is redacted (see below); digests are
taken of redacted values too. A reader refuses another ``format`` and any
``version`` newer than :data:`TRACE_VERSION` (:class:`TraceFormatError`).

Secrets and placeholders
------------------------

A :class:`Redactor` learns secrets from the fields that carry them and then
replaces every occurrence, in every string of what is recorded (and in keys),
by a placeholder chosen on first appearance:

==========================================  ========  =============================
where it learns                             kind      placeholder
==========================================  ========  =============================
``set_pair_code.value`` (string or int),    code      same shape: each digit run
``http_pair.code``, the ``code`` parameters           keeps its length, digits
of ``qr_payload_scanned.payload``,                    become ``0…0N`` (N = 1…9 per
``pairing.pair_code`` of the state                    code), ASCII letters ``x``,
                                                      other characters stay:
                                                      ``"482915"`` → ``"000001"``,
                                                      ``"482 915"`` → ``"000 001"``
``pair_finished.token``,                    token     ``redacted-token-N``
``secure_store_read_finished.value``,
``websocket_connect.auth_token``,
``secure_store_write.value``
``respond_stdin.input``, ``input`` of a     input     ``redacted-input-N``
``stdin_response`` in ``websocket_send.line``
==========================================  ========  =============================

Codes are numbered by their digits, so a code typed ``"482 915"`` and sent as
``"482915"`` get matching placeholders; the core validates a pairing code (6
digits, spaces and dashes allowed), which a placeholder of the same shape
passes or fails exactly as the code did. The core takes tokens and answers
as opaque text, so their placeholders need not keep their shape. An integer
code is recorded as its placeholder string (the core reads both alike).

A value that already is a placeholder (``redacted-token-3``; a code whose
digits are zeros but for a last digit 1…9, or all zeros when shorter than 4
digits) maps to itself: redacting a replay's output, whose secrets are the
trace's placeholders, gives the trace again. The flip side: a real pairing
code such as ``000007`` would be kept (9 of the 10⁶ codes).

Occurrences inside longer strings (a QR payload, a request line, a message)
are replaced too, in their raw and JSON-escaped spellings. A secret of at
least 4 characters is replaced wherever it appears (a digits-only one only
where it is not part of a longer run of digits); a shorter one only where it
is a whole string or a quoted JSON string inside a string (replacing every
``"y"`` in every text would wreck the trace).

Limits of a replay: a secret seen by the core before the recorder learns it
(it first appears outside the fields above) is replaced when the trace is
finished but could not be at the step, so that step then replays differently;
inputs over 4 KiB are logged by their size, which a placeholder of another
length changes.

Every call into the core must reach the recorder, error reports included (a
host that calls ``app.dispatch`` behind its back, or records only what
succeeded, makes a trace whose logs replay differently: the core logs refused
inputs too). The in-memory host raises on an error report before recording it.
"""

from __future__ import annotations

import argparse
import base64
import ctypes
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, Union
from urllib.parse import unquote

from .binding import App, JSONInput, library_versions, load_library

__all__ = [
    "TRACE_FORMAT",
    "TRACE_VERSION",
    "TraceFormatError",
    "Redactor",
    "TraceStep",
    "Trace",
    "Recorder",
    "Mismatch",
    "ReplayResult",
    "replay",
    "record_host",
    "digest",
    "canonical_json",
    "first_difference",
    "pretty_json",
]

#: The ``format`` member of every trace file.
TRACE_FORMAT = "jcode-mobile-trace"
#: The newest trace ``version`` this module reads and the one it writes.
TRACE_VERSION = 1

_KINDS = ("action", "event")


class TraceFormatError(ValueError):
    """A file or object that is not a trace this module can read."""


# -- canonical JSON, digests, pretty printing -----------------------------------


def canonical_json(value: Any) -> str:
    """Keys sorted, no whitespace, non-ASCII kept: the text digests are taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: Any) -> str:
    """SHA-256 (hex) of :func:`canonical_json` of ``value`` (UTF-8)."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def pretty_json(value: Any, width: int = 100) -> str:
    """Indented JSON (2 spaces) in which every object or array that fits in
    ``width`` columns stays on one line; keys keep their order. Ends with a
    newline. Deterministic, so a file written twice is byte-identical."""
    lines: List[str] = []

    def emit(item: Any, indent: int, prefix: str, suffix: str) -> None:
        flat = json.dumps(item, ensure_ascii=False)
        pad = " " * indent
        if not isinstance(item, (dict, list)) or not item or indent + len(prefix) + len(flat) + len(suffix) <= width:
            lines.append(pad + prefix + flat + suffix)
            return
        if isinstance(item, dict):
            lines.append(pad + prefix + "{")
            keys = list(item)
            for i, key in enumerate(keys):
                emit(item[key], indent + 2, json.dumps(key, ensure_ascii=False) + ": ", "," if i < len(keys) - 1 else "")
            lines.append(pad + "}" + suffix)
        else:
            lines.append(pad + prefix + "[")
            for i, element in enumerate(item):
                emit(element, indent + 2, "", "," if i < len(item) - 1 else "")
            lines.append(pad + "]" + suffix)

    emit(value, 0, "", "")
    return "\n".join(lines) + "\n"


# -- redaction --------------------------------------------------------------------

#: Secret fields of inputs, by input ``type``: field → kind of secret.
INPUT_SECRET_FIELDS: Dict[str, Dict[str, str]] = {
    "set_pair_code": {"value": "code"},
    "respond_stdin": {"input": "input"},
    "pair_finished": {"token": "token"},
    "secure_store_read_finished": {"value": "token"},
}
#: Secret fields of effects, by effect ``type``.
EFFECT_SECRET_FIELDS: Dict[str, Dict[str, str]] = {
    "http_pair": {"code": "code"},
    "websocket_connect": {"auth_token": "token"},
    "secure_store_write": {"value": "token"},
}
#: Secret fields of gateway request lines (``websocket_send.line``), by request ``type``.
REQUEST_SECRET_FIELDS: Dict[str, Dict[str, str]] = {
    "stdin_response": {"input": "input"},
}

#: Secret members of the state: path → kind (a code typed, or prefilled by a scenario).
STATE_SECRET_FIELDS: Dict[Tuple[str, ...], str] = {
    ("pairing", "pair_code"): "code",
}

#: Secrets this short are replaced only as whole strings or quoted JSON strings.
MIN_SUBSTRING_LENGTH = 4

_DIGITS = "0123456789"
_TAGGED = {"token": "redacted-token-", "input": "redacted-input-", "secret": "redacted-secret-"}
_TAGGED_RE = {kind: re.compile(re.escape(prefix) + r"[1-9][0-9]*") for kind, prefix in _TAGGED.items()}


def _code_digits(text: str) -> str:
    return "".join(c for c in text if c in _DIGITS)


def _is_code_placeholder(text: str) -> bool:
    if any(c.isalpha() and c not in "xX" for c in text):
        return False
    digits = _code_digits(text)
    if not digits:
        return any(c in "xX" for c in text)
    if len(digits) < MIN_SUBSTRING_LENGTH:
        return set(digits) == {"0"}
    return set(digits[:-1]) <= {"0"} and digits[-1] != "0"


def _json_inner(text: str, ascii_only: bool) -> str:
    """How ``text`` is spelled inside a JSON string (without the quotes)."""
    return json.dumps(text, ensure_ascii=ascii_only)[1:-1]


class Redactor:
    """Replaces secrets by consistent, format-preserving placeholders.

    Learn secrets with :meth:`learn_step` (the known secret fields of an
    input and of its report's effects) or :meth:`learn`; :meth:`redact`
    returns a copy of any JSON value with every known secret replaced in
    every string. See the module docstring for the placeholder scheme.
    """

    def __init__(self) -> None:
        #: secret → placeholder (a placeholder maps to itself).
        self._placeholders: Dict[str, str] = {}
        #: digits of a code → the digits of its placeholder.
        self._code_digits: Dict[str, str] = {}
        #: placeholders handed out or met, so a new secret never gets one of them.
        self._taken: Set[str] = set()
        self._taken_code_digits: Set[str] = set()
        self._counters: Dict[str, int] = {}
        self._pattern: Optional["re.Pattern[str]"] = None
        self._replacements: Dict[str, str] = {}

    # -- learning -----------------------------------------------------------

    @staticmethod
    def is_placeholder(text: str, kind: Optional[str] = None) -> bool:
        """Whether ``text`` has the form of a placeholder (of ``kind``, or any kind)."""
        kinds = [kind] if kind is not None else ["code", *_TAGGED]
        for k in kinds:
            if k == "code" and _is_code_placeholder(text):
                return True
            if k in _TAGGED_RE and _TAGGED_RE[k].fullmatch(text):
                return True
        return False

    def placeholder(self, secret: str) -> Optional[str]:
        """The placeholder of a learned secret, or None."""
        return self._placeholders.get(secret)

    @property
    def secret_count(self) -> int:
        """How many distinct secrets (placeholders excluded) have been learned."""
        return sum(1 for s, p in self._placeholders.items() if s != p)

    def learn(self, secret: Any, kind: str = "secret") -> Any:
        """Learn one secret of ``kind`` ("code", "token", "input" or "secret")
        and return its placeholder. An integer is read as its decimal text;
        empty strings and other values are not secrets (returned as is)."""
        if isinstance(secret, int) and not isinstance(secret, bool):
            secret = str(secret)
        if not isinstance(secret, str) or secret == "":
            return secret
        known = self._placeholders.get(secret)
        if known is not None:
            return known
        if kind not in ("code", *_TAGGED):
            raise ValueError(f"unknown kind of secret {kind!r}")
        if self.is_placeholder(secret, kind):
            placeholder = secret
            if kind == "code":
                digits = _code_digits(secret)
                self._code_digits.setdefault(digits, digits)
                self._taken_code_digits.add(digits)
        elif kind == "code":
            placeholder = self._code_placeholder(secret)
        else:
            placeholder = self._tagged_placeholder(kind)
        self._placeholders[secret] = placeholder
        self._taken.add(placeholder)
        self._pattern = None
        return placeholder

    def _tagged_placeholder(self, kind: str) -> str:
        while True:
            self._counters[kind] = self._counters.get(kind, 0) + 1
            candidate = f"{_TAGGED[kind]}{self._counters[kind]}"
            if candidate not in self._taken:
                return candidate

    def _code_placeholder(self, secret: str) -> str:
        digits = _code_digits(secret)
        if digits and digits not in self._code_digits:
            if len(digits) < MIN_SUBSTRING_LENGTH:
                chosen = "0" * len(digits)
            else:
                key = f"code{len(digits)}"
                chosen = ""
                for _ in range(9):  # the next serial not met yet; after 9 they repeat
                    self._counters[key] = self._counters.get(key, 0) % 9 + 1
                    chosen = "0" * (len(digits) - 1) + str(self._counters[key])
                    if chosen not in self._taken_code_digits:
                        break
            self._code_digits[digits] = chosen
            self._taken_code_digits.add(chosen)
        replacement = iter(self._code_digits.get(digits, ""))
        out = []
        for c in secret:
            if c in _DIGITS:
                out.append(next(replacement))
            elif c.isalpha():
                out.append("X" if c.isupper() else "x")
            else:
                out.append(c)
        return "".join(out)

    def learn_input(self, value: Any) -> None:
        """Learn the secrets of one action or platform event (a dict, or raw JSON text)."""
        if isinstance(value, (bytes, bytearray)):
            value = bytes(value).decode("utf-8", "replace")
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                return
        if not isinstance(value, dict):
            return
        kind = value.get("type")
        for name, secret_kind in INPUT_SECRET_FIELDS.get(kind, {}).items() if isinstance(kind, str) else ():
            if name in value:
                self.learn(value[name], secret_kind)
        if kind == "qr_payload_scanned" and isinstance(value.get("payload"), str):
            for code in self.qr_codes(value["payload"]):
                self.learn(code, "code")

    def learn_report(self, report: Any) -> None:
        """Learn the secrets in a report's effects."""
        effects = report.get("effects") if isinstance(report, dict) else None
        for effect in effects if isinstance(effects, list) else []:
            if not isinstance(effect, dict) or not isinstance(effect.get("type"), str):
                continue
            for name, secret_kind in EFFECT_SECRET_FIELDS.get(effect["type"], {}).items():
                if name in effect:
                    self.learn(effect[name], secret_kind)
            if effect["type"] == "websocket_send" and isinstance(effect.get("line"), str):
                self.learn_request_line(effect["line"])

    def learn_request_line(self, line: str) -> None:
        """Learn the secrets of gateway request lines (``websocket_send.line``)."""
        for text in line.split("\n"):
            try:
                request = json.loads(text)
            except ValueError:
                continue
            if isinstance(request, dict) and isinstance(request.get("type"), str):
                for name, secret_kind in REQUEST_SECRET_FIELDS.get(request["type"], {}).items():
                    if name in request:
                        self.learn(request[name], secret_kind)

    def learn_state(self, state: Any) -> None:
        """Learn the secrets the state holds (the pairing code being typed)."""
        for path, secret_kind in STATE_SECRET_FIELDS.items():
            value = state
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            if value is not None:
                self.learn(value, secret_kind)

    def learn_step(self, input: Any, report: Any) -> None:
        """Learn what one call into the core reveals: its input, then its report."""
        self.learn_input(input)
        self.learn_report(report)

    @staticmethod
    def _qr_parameters(payload: str) -> Tuple[str, List[Tuple[str, str, str]]]:
        """``(text before "?", [(raw key, "=" or "", raw value)])`` of a link."""
        head, mark, query = payload.partition("?")
        if not mark:
            return payload, []
        return head + mark, [pair.partition("=") for pair in query.split("&")]

    @staticmethod
    def _is_code_key(raw_key: str) -> bool:
        return unquote(raw_key).strip().lower() == "code"

    @classmethod
    def qr_codes(cls, payload: str) -> List[str]:
        """Every ``code`` parameter of a pairing link, percent-decoded, as the
        core reads ``jcode://pair?host=H&port=P&code=C`` (split at ``&`` and
        the first ``=``)."""
        _, parameters = cls._qr_parameters(payload)
        return [unquote(value) for key, _, value in parameters if cls._is_code_key(key) and value]

    def _redact_qr_payload(self, payload: str) -> str:
        """Each code parameter becomes its placeholder, written so that the
        core decodes it to that placeholder (``%``, ``&``, ``=`` escaped)."""
        head, parameters = self._qr_parameters(payload)
        if not parameters:
            return payload
        out = []
        for key, eq, value in parameters:
            placeholder = self._placeholders.get(unquote(value)) if self._is_code_key(key) and value else None
            if placeholder is not None:
                value = placeholder.replace("%", "%25").replace("&", "%26").replace("=", "%3D")
            out.append(key + eq + value)
        return head + "&".join(out)

    # -- replacing ------------------------------------------------------------

    def _compile(self) -> None:
        alternatives: List[Tuple[str, str]] = []  # (regex, literal matched text)
        replacements: Dict[str, str] = {}
        for secret, placeholder in self._placeholders.items():
            if secret == placeholder:
                continue
            forms = {secret: placeholder}
            for ascii_only in (False, True):
                forms.setdefault(_json_inner(secret, ascii_only), _json_inner(placeholder, ascii_only))
            for form, replacement in forms.items():
                if len(secret) < MIN_SUBSTRING_LENGTH:
                    form, replacement = f'"{form}"', f'"{replacement}"'
                    regex = re.escape(form)
                elif set(secret) <= set(_DIGITS):
                    regex = r"(?<![0-9])" + re.escape(form) + r"(?![0-9])"
                else:
                    regex = re.escape(form)
                if form not in replacements:
                    replacements[form] = replacement
                    alternatives.append((regex, form))
        alternatives.sort(key=lambda item: -len(item[1]))  # the longest spelling wins at a position
        self._replacements = replacements
        self._pattern = re.compile("|".join(regex for regex, _ in alternatives)) if alternatives else None

    def redact_text(self, text: str) -> str:
        """``text`` with every known secret replaced."""
        whole = self._placeholders.get(text)
        if whole is not None:
            return whole
        if self._pattern is None:
            if not any(s != p for s, p in self._placeholders.items()):
                return text
            self._compile()
        assert self._pattern is not None
        return self._pattern.sub(lambda m: self._replacements[m.group(0)], text)

    def redact(self, value: Any) -> Any:
        """A copy of the JSON value with every known secret replaced, in
        strings and in object keys."""
        if isinstance(value, str):
            return self.redact_text(value)
        if isinstance(value, dict):
            return {self.redact_text(k) if isinstance(k, str) else k: self.redact(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.redact(v) for v in value]
        return value

    def redact_input(self, value: Any) -> Any:
        """Like :meth:`redact`; also a secret field holding an integer (a
        pairing code given as a number) becomes its placeholder string, and
        the codes of a QR payload their placeholders, percent-encoded as
        needed (``482%20915`` → ``000 001``)."""
        if isinstance(value, dict) and value.get("type") == "qr_payload_scanned" and isinstance(value.get("payload"), str):
            value = {**value, "payload": self._redact_qr_payload(value["payload"])}
        redacted = self.redact(value)
        if isinstance(redacted, dict) and isinstance(redacted.get("type"), str):
            for name in INPUT_SECRET_FIELDS.get(redacted["type"], {}):
                secret = redacted.get(name)
                if isinstance(secret, int) and not isinstance(secret, bool):
                    redacted[name] = self._placeholders.get(str(secret), str(secret))
        return redacted


# -- the trace --------------------------------------------------------------------


@dataclass
class TraceStep:
    """One call into the core, redacted.

    ``input`` is what the call was given: a JSON object, raw JSON text (a
    string), or None (a NULL pointer); ``input_base64`` replaces it for bytes
    that are not UTF-8.
    """

    kind: str
    input: Any
    report: Any
    state_sha256: Optional[str] = None
    tree_sha256: Optional[str] = None
    input_base64: Optional[str] = None

    def input_bytes(self) -> JSONInput:
        """What to hand to the library again."""
        if self.input_base64 is not None:
            return base64.b64decode(self.input_base64)
        return self.input

    @property
    def label(self) -> str:
        """``action submit_pairing``, ``event websocket_event``…"""
        value = self.input
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError:
                pass
        kind = value.get("type") if isinstance(value, dict) else None
        return f"{self.kind} {kind}" if isinstance(kind, str) else f"{self.kind} (raw input)"

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {"kind": self.kind}
        if self.input_base64 is not None:
            out["input_base64"] = self.input_base64
        else:
            out["input"] = self.input
        out["report"] = self.report
        if self.state_sha256 is not None:
            out["state_sha256"] = self.state_sha256
        if self.tree_sha256 is not None:
            out["tree_sha256"] = self.tree_sha256
        return out

    @classmethod
    def from_dict(cls, data: Any, index: int = 0) -> "TraceStep":
        if not isinstance(data, dict) or data.get("kind") not in _KINDS or "report" not in data:
            raise TraceFormatError(f"step {index} is not {{kind: action|event, input, report}}: {str(data)[:120]}")
        if ("input" in data) == ("input_base64" in data):
            raise TraceFormatError(f"step {index} needs exactly one of input and input_base64")
        return cls(data["kind"], data.get("input"), data["report"], data.get("state_sha256"),
                   data.get("tree_sha256"), data.get("input_base64"))


@dataclass
class Trace:
    """A recorded session: see the module docstring for the file format."""

    options: Any
    steps: List[TraceStep]
    final: Dict[str, Any]
    library: Dict[str, Any] = field(default_factory=dict)
    version: int = TRACE_VERSION

    def to_dict(self) -> Dict[str, Any]:
        return {
            "format": TRACE_FORMAT,
            "version": self.version,
            "library": self.library,
            "options": self.options,
            "steps": [step.to_dict() for step in self.steps],
            "final": self.final,
        }

    def to_json(self) -> str:
        """The file's text (see :func:`pretty_json`)."""
        return pretty_json(self.to_dict())

    def save(self, path: Union[str, Path]) -> Path:
        target = Path(path)
        target.write_text(self.to_json(), encoding="utf-8")
        return target

    @classmethod
    def from_dict(cls, data: Any) -> "Trace":
        """Check and read a parsed trace; raises :class:`TraceFormatError`."""
        if not isinstance(data, dict) or data.get("format") != TRACE_FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise TraceFormatError(f"not a jcode mobile trace (format {found!r}, expected {TRACE_FORMAT!r})")
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise TraceFormatError(f"trace version {version!r} is not a version this harness knows")
        if version > TRACE_VERSION:
            raise TraceFormatError(
                f"trace format version {version} is newer than this harness reads (version {TRACE_VERSION}); "
                "update jcode_mobile, or record the trace again with this one")
        steps = data.get("steps")
        if not isinstance(steps, list):
            raise TraceFormatError("trace has no steps list")
        final = data.get("final")
        if not isinstance(final, dict) or not {"state", "tree", "logs"} <= set(final):
            raise TraceFormatError("trace has no final {state, tree, logs}")
        library = data.get("library") if isinstance(data.get("library"), dict) else {}
        return cls(data.get("options"), [TraceStep.from_dict(s, i) for i, s in enumerate(steps)], final, library,
                   version)

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> "Trace":
        try:
            data = json.loads(text)
        except ValueError as problem:
            raise TraceFormatError(f"a trace is JSON: {problem}") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: Union[str, Path]) -> "Trace":
        """Read a trace file; raises :class:`TraceFormatError` (naming the file)."""
        try:
            return cls.from_json(Path(path).read_bytes())
        except TraceFormatError as problem:
            raise TraceFormatError(f"{path}: {problem}") from None


# -- recording ----------------------------------------------------------------------


def _final_of(app: App, redactor: Redactor) -> Dict[str, Any]:
    state = app.state()
    redactor.learn_state(state)
    return {
        "state": redactor.redact(state),
        "tree": redactor.redact(app.tree()),
        "logs": redactor.redact(app.logs(0)["entries"]),
    }


def _digests(app: App, redactor: Redactor) -> Tuple[str, str]:
    state = app.state()
    redactor.learn_state(state)
    return digest(redactor.redact(state)), digest(redactor.redact(app.tree()))


def _stored_input(value: JSONInput, redactor: Redactor) -> Tuple[Any, Optional[str]]:
    """(input, input_base64) as a trace stores them, redacted."""
    if isinstance(value, (bytes, bytearray)):
        try:
            return redactor.redact_text(bytes(value).decode("utf-8")), None
        except UnicodeDecodeError:
            text = bytes(value).decode("utf-8", "surrogateescape")
            redacted = redactor.redact_text(text).encode("utf-8", "surrogateescape")
            return None, base64.b64encode(redacted).decode("ascii")
    if isinstance(value, str) and _has_number_secret(value):
        # a number cannot become a placeholder inside the text: write the object again
        return json.dumps(redactor.redact_input(json.loads(value)), ensure_ascii=False, separators=(",", ":")), None
    return redactor.redact_input(value), None


def _has_number_secret(text: str) -> bool:
    """Whether raw JSON text is an input whose secret field holds a number."""
    try:
        value = json.loads(text)
    except ValueError:
        return False
    fields = INPUT_SECRET_FIELDS.get(value.get("type"), {}) if isinstance(value, dict) else {}
    return any(isinstance(value.get(name), int) and not isinstance(value.get(name), bool) for name in fields)


class Recorder:
    """Collects a trace from any host: call :meth:`record` after every call
    into the core, :meth:`finish` at the end, then :meth:`save`.

    ``options`` are the app's creation options (what :class:`App` got).
    With ``app`` (here or in each :meth:`record`) every step also keeps the
    digests of the state and tree after it (``digests=False``: never).
    Only redacted copies are kept; the :class:`Redactor` (``redactor``)
    holds what it learned.
    """

    def __init__(self, options: JSONInput = None, *, app: Optional[App] = None, digests: bool = True,
                 redactor: Optional[Redactor] = None, library: Optional[ctypes.CDLL] = None):
        self.redactor = redactor or Redactor()
        self.app = app
        self.digests = digests
        self._library = library if library is not None else (app.library if app is not None else None)
        self._options, self._options_base64 = _stored_input(options, self.redactor)
        if self._options_base64 is not None:
            raise ValueError("app options must be JSON (a dict, None or UTF-8 text)")
        self.steps: List[TraceStep] = []
        self._final: Optional[Dict[str, Any]] = None

    def record(self, kind: str, input: JSONInput, report: Any, *, app: Optional[App] = None) -> TraceStep:
        """Record one call: ``kind`` "action" (dispatch) or "event"
        (platform_event), the input as given (dict or raw JSON text) and the
        parsed report, ok or not. Returns the redacted step."""
        return self._add(kind, input, report, app if app is not None else self.app)

    def _add(self, kind: str, input: JSONInput, report: Any, app: Optional[App]) -> TraceStep:
        if kind not in _KINDS:
            raise ValueError(f"kind is 'action' or 'event', not {kind!r}")
        if self._final is not None:
            raise RuntimeError("this recorder is finished")
        self.redactor.learn_step(input, report)
        stored, stored_base64 = _stored_input(input, self.redactor)
        step = TraceStep(kind, stored, self.redactor.redact(report), input_base64=stored_base64)
        if app is not None and self.digests:
            step.state_sha256, step.tree_sha256 = _digests(app, self.redactor)
        self.steps.append(step)
        return step

    def finish(self, app: Optional[App] = None) -> Trace:
        """Keep the final state, tree and every log entry of ``app`` (default:
        the recorder's app) and return the trace. Everything recorded is
        redacted once more with all the secrets learned by then."""
        target = app if app is not None else self.app
        if target is None:
            raise ValueError("finish needs the app (Recorder(app=…) or finish(app))")
        if self._library is None:
            self._library = target.library
        self._final = _final_of(target, self.redactor)
        for step in self.steps:
            if step.input_base64 is None:
                step.input = self.redactor.redact_input(step.input)
            step.report = self.redactor.redact(step.report)
        self._options = self.redactor.redact(self._options)
        return self.trace

    @property
    def finished(self) -> bool:
        return self._final is not None

    @property
    def trace(self) -> Trace:
        """The trace (after :meth:`finish`)."""
        if self._final is None:
            raise RuntimeError("call finish(app) first: a trace ends with the final state, tree and logs")
        return Trace(self._options, list(self.steps), self._final, library_versions(self._library))

    def to_json(self) -> str:
        return self.trace.to_json()

    def save(self, path: Union[str, Path]) -> Path:
        return self.trace.save(path)


def record_host(host: Any, options: JSONInput = None, *, digests: bool = True) -> Recorder:
    """Attach a new :class:`Recorder` to a host that has ``app``, ``steps``
    and a ``recorder`` attribute (the in-memory
    :class:`~jcode_mobile.fake_gateway.Host`) and return it.

    ``options`` default to ``host.app.options``. Steps the host already made
    are recorded first (without digests: the states they left are gone).
    """
    recorder = Recorder(options if options is not None else getattr(host.app, "options", None),
                        app=host.app, digests=digests)
    for step in getattr(host, "steps", []):
        recorder._add(step.kind, step.input, step.report, None)
    host.recorder = recorder
    return recorder


# -- replaying ----------------------------------------------------------------------

#: Shown for a member or element that one side does not have.
ABSENT = "(absent)"


def _pointer_token(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def first_difference(expected: Any, got: Any, pointer: str = "") -> Optional[Tuple[str, Any, Any]]:
    """The first place two JSON values differ: ``(json_pointer, expected,
    got)``, or None when they are equal. Object members are visited in
    ``expected``'s order (then the extra ones of ``got``); a missing member
    or element reads :data:`ABSENT`. ``true`` differs from ``1``."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in list(expected) + [k for k in got if k not in expected]:
            here = f"{pointer}/{_pointer_token(key)}"
            if key not in got:
                return here, expected[key], ABSENT
            if key not in expected:
                return here, ABSENT, got[key]
            found = first_difference(expected[key], got[key], here)
            if found is not None:
                return found
        return None
    if isinstance(expected, list) and isinstance(got, list):
        for i, (a, b) in enumerate(zip(expected, got)):
            found = first_difference(a, b, f"{pointer}/{i}")
            if found is not None:
                return found
        if len(expected) != len(got):
            i = min(len(expected), len(got))
            return (f"{pointer}/{i}", expected[i] if i < len(expected) else ABSENT,
                    got[i] if i < len(got) else ABSENT)
        return None
    if type(expected) is not type(got) or expected != got:
        return pointer, expected, got
    return None


def _short(value: Any, limit: int = 160) -> str:
    text = value if value is ABSENT else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Mismatch:
    """The first difference between a trace and its replay.

    ``step`` is the index in ``trace.steps`` (None: the final state, tree or
    logs); ``what`` is "report", "state", "tree" or "logs"; ``pointer`` is
    the JSON pointer of the first differing value inside it ("" for the
    whole value, e.g. a digest), with ``expected`` (the trace) and ``got``
    (the replay).
    """

    step: Optional[int]
    what: str
    pointer: str
    expected: Any
    got: Any
    label: str = ""

    def __str__(self) -> str:
        where = f"step {self.step} ({self.label})" if self.step is not None else "the end"
        inside = f" at {self.pointer}" if self.pointer else ""
        return (f"{self.what} differs after {where}{inside}\n"
                f"  expected: {_short(self.expected)}\n"
                f"  got:      {_short(self.got)}")


@dataclass
class ReplayResult:
    """What :func:`replay` found. ``steps`` counts the steps replayed (up to
    and including the one that differed); ``mismatch`` is the first
    difference, None when everything matched."""

    steps: int
    total_steps: int
    mismatch: Optional[Mismatch]
    recorded_library: Dict[str, Any]
    replayed_library: Dict[str, Any]
    digests_checked: int = 0

    @property
    def ok(self) -> bool:
        return self.mismatch is None

    def __str__(self) -> str:
        def name(info: Dict[str, Any]) -> str:
            return f"library {info.get('version', '?')} (ABI {info.get('abi_version', '?')})"

        library = name(self.replayed_library)
        if self.recorded_library and self.recorded_library != self.replayed_library:
            library += f", recorded with {name(self.recorded_library)}"
        if self.mismatch is None:
            return (f"ok: {self.steps} steps replayed, every report, {self.digests_checked} state and tree digests, "
                    f"the final state, tree and logs identical ({library})")
        return f"MISMATCH: {self.mismatch}\n  ({self.steps} of {self.total_steps} steps replayed; {library})"


def replay(trace: Union[Trace, str, Path], *, library: Union[None, ctypes.CDLL, str, Path] = None) -> ReplayResult:
    """Replay a trace (or a trace file) on a fresh ``App(trace.options)``.

    Every step's input is fed in order with the raw calls (so error reports
    are compared too); what comes back is redacted by a fresh
    :class:`Redactor` fed the same way, then compared with the trace: the
    report, the digests when the step has them, and at the end the state,
    tree and logs. Stops at the first difference. ``library``: a loaded
    ``ctypes.CDLL`` or a path (default: the loaded library).

    Raises :class:`TraceFormatError` for a file that is not a readable trace
    and :class:`~jcode_mobile.JcodeMobileError` when the library refuses the
    trace's options.
    """
    if not isinstance(trace, Trace):
        trace = Trace.load(trace)
    lib = load_library(library) if isinstance(library, (str, Path)) else (library or load_library())
    replayed_library = library_versions(lib)
    redactor = Redactor()
    options = trace.options
    redactor.learn_input(options)

    def result(steps: int, mismatch: Optional[Mismatch], digests: int) -> ReplayResult:
        return ReplayResult(steps, len(trace.steps), mismatch, dict(trace.library), replayed_library, digests)

    digests_checked = 0
    with App(options, library=lib) as app:
        for index, step in enumerate(trace.steps):
            fed = step.input_bytes()
            report = app.dispatch_raw(fed) if step.kind == "action" else app.platform_event_raw(fed)
            redactor.learn_step(fed, report)
            found = first_difference(step.report, redactor.redact(report))
            if found is not None:
                return result(index + 1, Mismatch(index, "report", *found, label=step.label), digests_checked)
            if step.state_sha256 is not None or step.tree_sha256 is not None:
                state_sha, tree_sha = _digests(app, redactor)
                for what, expected, got in (("state", step.state_sha256, state_sha), ("tree", step.tree_sha256, tree_sha)):
                    if expected is None:
                        continue
                    if expected != got:
                        mismatch = Mismatch(index, what, "", f"sha256 {expected}", f"sha256 {got}", label=step.label)
                        return result(index + 1, mismatch, digests_checked)
                    digests_checked += 1
        final = _final_of(app, redactor)
        for what in ("state", "tree", "logs"):
            found = first_difference(trace.final.get(what), final[what])
            if found is not None:
                return result(len(trace.steps), Mismatch(None, what, *found), digests_checked)
    return result(len(trace.steps), None, digests_checked)


# -- command line -------------------------------------------------------------------


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m jcode_mobile.trace replay FILE…``: replay trace files;
    exit 0 when all reproduce, 1 otherwise (2: a file is not a trace)."""
    parser = argparse.ArgumentParser(prog="python -m jcode_mobile.trace", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    replaying = sub.add_parser("replay", help="replay trace files and compare")
    replaying.add_argument("files", nargs="+", type=Path)
    replaying.add_argument("--library", type=Path, default=None, help="the library to replay on")
    args = parser.parse_args(argv)
    status = 0
    for path in args.files:
        try:
            outcome = replay(Trace.load(path), library=args.library)
        except TraceFormatError as problem:
            print(problem, file=sys.stderr)
            return 2
        print(f"{path}: {outcome}")
        if not outcome.ok:
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
