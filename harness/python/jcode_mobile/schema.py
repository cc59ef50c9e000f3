"""The runtime schema the library publishes, put to work.

``jcode_mobile_schema()`` returns a JSON Schema (2020-12) of everything the
library reads and writes, and an ``x-functions`` map from each C function to
the definitions of its input and its answer. This module

- validates answers against it (:class:`OutputCheck`; the test suite checks
  every answer it receives this way, see ``tests/conftest.py``), and
- builds typed helpers for every action and platform event at run time
  (:func:`operations`), so a host discovers what it may send from the loaded
  library and calls it without recompiling or regenerating anything:

      app = App({"scenario": "connected_empty_chat"})
      app.actions.set_draft(value="Run the tests")
      app.actions.send_message()
      help(app.actions.respond_permission)      # fields, types, ranges, docs
      app.platform.websocket_opened(effect_id=3)
"""

from __future__ import annotations

import inspect
import json
import keyword
import multiprocessing
import os
import threading
from collections import Counter
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

import jsonschema
from jsonschema import Draft202012Validator

from .library import load_library, schema_document

if TYPE_CHECKING:
    from .binding import App

__all__ = ["schema", "OutputCheck", "SchemaViolation", "Operations", "operations", "validator"]

_lock = threading.Lock()
_cached: Optional[dict] = None
_validators: Dict[str, Draft202012Validator] = {}


def schema() -> dict:
    """The loaded library's schema (fetched once)."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = schema_document(load_library())
        return _cached


def validator(ref: str, document: Optional[dict] = None) -> Draft202012Validator:
    """A validator for ``ref`` (``"#/$defs/dispatch_answer"``) within the schema."""
    document = document or schema()
    key = f"{id(document)}:{ref}"
    with _lock:
        found = _validators.get(key)
        if found is None:
            root = {"$schema": document.get("$schema"), "$defs": document["$defs"], "$ref": ref}
            if "$id" in document:
                root["$id"] = document["$id"]
            found = Draft202012Validator(root)
            _validators[key] = found
        return found


class SchemaViolation(AssertionError):
    """An answer of the library that its own schema does not allow."""


class OutputCheck:
    """``check(function_name, answer)``: validates an answer against the
    answer definition ``x-functions`` names for that function, and each
    ``websocket_send`` line in it against the gateway requests. Counts what
    it checked (:attr:`checked`), so a suite can show it saw real traffic."""

    def __init__(self, document: Optional[dict] = None):
        self.document = document or schema()
        self.functions: dict = self.document.get("x-functions", {})
        self.checked: Counter = Counter()
        self._count_lock = threading.Lock()

    def answer_ref(self, function: str) -> str:
        entry = self.functions.get(function)
        if not isinstance(entry, dict) or "answer" not in entry:
            raise SchemaViolation(f"the schema's x-functions names no answer for {function}")
        return entry["answer"]

    def __call__(self, function: str, answer: Any) -> None:
        if function == "jcode_mobile_subscribe_callback":
            ref = "#/$defs/stream_event"  # the callback receives the bare event
        else:
            ref = self.answer_ref(function)
        self._validate(ref, answer, function)
        with self._count_lock:
            self.checked[function] += 1
        for line in _sent_lines(answer):
            self._validate("#/$defs/gateway_request", line, f"{function}: websocket_send line")
            with self._count_lock:
                self.checked["gateway_request"] += 1

    def _validate(self, ref: str, value: Any, what: str) -> None:
        errors = sorted(validator(ref, self.document).iter_errors(value), key=lambda e: list(e.absolute_path))
        if errors:
            best = jsonschema.exceptions.best_match(errors)
            path = "/" + "/".join(str(p) for p in best.absolute_path)
            text = json.dumps(value)
            raise SchemaViolation(f"{what}: answer does not match {ref} at {path}: {best.message}\n"
                                  f"  answer: {text[:600]}{'…' if len(text) > 600 else ''}")


def _sent_lines(answer: Any) -> List[Any]:
    """The parsed ``line`` of every ``websocket_send`` effect in a report or an effects event."""
    effects = []
    if isinstance(answer, dict):
        if isinstance(answer.get("effects"), list):
            effects = answer["effects"]
        elif isinstance(answer.get("event"), dict) and isinstance(answer["event"].get("effects"), list):
            effects = answer["event"]["effects"]
    lines = []
    for effect in effects:
        if isinstance(effect, dict) and effect.get("type") == "websocket_send" and isinstance(effect.get("line"), str):
            lines.append(json.loads(effect["line"]))
    return lines


# -- typed helpers, discovered at run time -------------------------------------

_PYTHON_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "object": dict, "array": list, "null": type(None)}


def _annotation(definition: dict, document: dict) -> Any:
    """A Python annotation for a property's schema (best effort, for help())."""
    if "$ref" in definition:
        return dict
    kinds = definition.get("type")
    if isinstance(kinds, str):
        return _PYTHON_TYPES.get(kinds, Any)
    if isinstance(kinds, list):
        types = [_PYTHON_TYPES[k] for k in kinds if k in _PYTHON_TYPES]
        if len(types) == 1:
            return types[0]
        if types:
            return Optional[types[0]] if type(None) in types and len(types) == 2 else Any
    if "enum" in definition or "const" in definition:
        return str
    return Any


def _describe(name: str, definition: dict) -> str:
    parts = []
    kinds = definition.get("type")
    if kinds:
        parts.append(kinds if isinstance(kinds, str) else " or ".join(kinds))
    if "enum" in definition:
        parts.append("one of " + ", ".join(repr(v) for v in definition["enum"]))
    if "minimum" in definition or "maximum" in definition:
        parts.append(f"from {definition.get('minimum', '…')} to {definition.get('maximum', '…')}")
    if definition.get("description"):
        parts.append(definition["description"])
    return f"    {name}: " + "; ".join(str(p) for p in parts)


class Operations:
    """Every member of a ``type``-tagged union (actions, platform events) as a
    method with keyword arguments, built from the schema at run time.

    ``names`` lists them; each method's signature, annotations and docstring
    come from the member's definition; a call checks the arguments against
    that definition (``TypeError`` naming the problem) and sends the object."""

    def __init__(self, prefix: str, send: Callable[[dict], Any], document: Optional[dict] = None):
        document = document or schema()
        self._send = send
        self.names: List[str] = []
        for name, definition in document["$defs"].items():
            if not name.startswith(prefix + "."):
                continue
            wire_type = name[len(prefix) + 1:]
            helper = self._helper(wire_type, f"#/$defs/{name}", definition, document)
            setattr(self, helper.__name__, helper)
            self.names.append(helper.__name__)

    def _helper(self, wire_type: str, ref: str, definition: dict, document: dict) -> Callable[..., Any]:
        properties: dict = definition.get("properties", {})
        required = set(definition.get("required", [])) - {"type"}
        parameters = []
        renamed: Dict[str, str] = {}  # Python parameter -> wire field
        for field, sub in properties.items():
            if field == "type":
                continue
            parameter = field + "_" if keyword.iskeyword(field) else field
            renamed[parameter] = field
            default = inspect.Parameter.empty if field in required else None
            parameters.append(inspect.Parameter(parameter, inspect.Parameter.KEYWORD_ONLY, default=default,
                                                annotation=_annotation(sub, document)))
        # Required ones first, as Python wants (keyword-only: order is for help() only).
        parameters.sort(key=lambda p: p.default is not inspect.Parameter.empty)
        signature = inspect.Signature(parameters, return_annotation=dict)
        check = validator(ref, document)
        send = self._send

        def helper(*args: Any, **kwargs: Any) -> Any:
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as problem:
                raise TypeError(f"{wire_type}: {problem}") from None
            message: dict = {"type": wire_type}
            for parameter, value in bound.arguments.items():
                if value is not None:
                    message[renamed[parameter]] = value
            problems = list(check.iter_errors(message))
            if problems:
                best = jsonschema.exceptions.best_match(problems)
                where = ".".join(str(p) for p in best.absolute_path) or wire_type
                raise TypeError(f"{wire_type}: {where}: {best.message}")
            return send(message)

        helper.__name__ = wire_type if wire_type.isidentifier() and not keyword.iskeyword(wire_type) else wire_type + "_"
        helper.__qualname__ = helper.__name__
        helper.__signature__ = signature  # type: ignore[attr-defined]
        doc = [definition.get("description", wire_type), ""]
        doc += [_describe(p.name, properties[renamed[p.name]]) + ("" if p.default is inspect.Parameter.empty else " (optional)")
                for p in parameters]
        examples = definition.get("examples")
        if examples:
            doc += ["", "Example: " + json.dumps(examples[0])]
        helper.__doc__ = "\n".join(doc)
        return helper

    def __dir__(self) -> List[str]:
        return sorted(set(self.names) | set(super().__dir__()))


def operations(app: App, document: Optional[dict] = None) -> "tuple[Operations, Operations]":
    """``(actions, platform_events)`` of ``app``: typed helpers that dispatch to it."""
    return Operations("action", app.dispatch, document), Operations("platform_event", app.platform_event, document)


# -- answers recorded by another program -----------------------------------------


def check_recorded_answers(paths: List[str], document: Optional[dict] = None) -> "tuple[int, List[str]]":
    """Validates answers written one per line (the C harness with
    ``JCODE_MOBILE_ANSWERS=FILE``). A recorded line does not say which
    function returned it, so each must match one of the answers
    ``x-functions`` names (or be a bare stream event, as a callback gets it).
    Returns how many were checked and the problems found."""
    document = document or schema()
    refs = sorted({entry["answer"] for entry in document.get("x-functions", {}).values() if "answer" in entry})
    union = {"anyOf": [{"$ref": ref} for ref in refs] + [{"$ref": "#/$defs/stream_event"}]}
    root = {"$schema": document.get("$schema"), "$defs": document["$defs"], **union}
    anything = Draft202012Validator(root)
    # The member an answer's shape names is tried first (an answer with
    # "effects" is a report …); the whole union only when that fails.
    by_member = [("effects", "dispatch_answer"), ("state", "state_answer"), ("tree", "tree_answer"),
                 ("entries", "logs_answer"), ("since", "changes_answer"), ("snapshot", "snapshot_answer"),
                 ("event", "next_event_answer"), ("schema", "schema_answer"), ("tap_target", "hit_test_answer"),
                 ("svg", "screenshot_answer"), ("error", "error_answer")]

    class _Check:
        @staticmethod
        def is_valid(value: Any) -> bool:
            if isinstance(value, dict):
                for member, name in by_member:
                    if member in value and f"#/$defs/{name}" in refs:
                        if validator(f"#/$defs/{name}", document).is_valid(value):
                            return True
                        break
            return anything.is_valid(value)

        iter_errors = anything.iter_errors

    recorded = []  # (path, line number, line)
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            recorded += [(path, number, line.rstrip("\n")) for number, line in enumerate(lines, 1) if line.strip()]
    # A harness repeats many answers: each distinct line is judged once, the
    # distinct lines spread over one process per core.
    distinct = list(dict.fromkeys(line for _, _, line in recorded))
    global _recorded_check
    _recorded_check = _Check()
    workers = min(os.cpu_count() or 1, max(1, len(distinct) // 1000))
    if workers > 1 and "fork" in multiprocessing.get_all_start_methods():
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            found = pool.map(_recorded_verdict, distinct, chunksize=64)
    else:
        found = [_recorded_verdict(line) for line in distinct]
    verdicts = dict(zip(distinct, found))
    problems = [f"{path}:{number}: {verdicts[line]}" for path, number, line in recorded if verdicts[line] is not None]
    checked = len(recorded)
    return checked, problems


_recorded_check: Any = None  # check_recorded_answers's check, where its worker processes find it


def _recorded_verdict(line: str) -> Optional[str]:
    """None when the recorded line is an answer the schema allows, else what is wrong with it."""
    check = _recorded_check
    try:
        value = json.loads(line)
    except ValueError as problem:
        return f"not JSON ({problem}): {line[:200]}"
    if check.is_valid(value):
        return None
    # Name the closest definition: the one whose errors go deepest.
    best = jsonschema.exceptions.best_match(check.iter_errors(value))
    return f"matches no answer of the schema ({best.message[:300]}): {line[:300]}"


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m jcode_mobile.schema FILE…``: validate recorded answers; exit 1 on any problem."""
    import sys

    paths = list(sys.argv[1:] if argv is None else argv)
    if not paths:
        print("usage: python -m jcode_mobile.schema ANSWERS.jsonl…", file=sys.stderr)
        return 2
    checked, problems = check_recorded_answers(paths)
    for problem in problems[:20]:
        print(problem, file=sys.stderr)
    print(f"{checked} recorded answers checked against the library's schema, {len(problems)} do not match")
    return 1 if problems or checked == 0 else 0


if __name__ == "__main__":
    raise SystemExit(main())
