"""The CLI's assertions, as pure functions.

Each check looks at what the simulator shows (state, semantic tree, executed
effects) and returns ``None`` when it holds, else a *failure*: a dict with
``assert`` (which check), ``expected``, ``actual`` and any detail. The
simulator retries a failing check until its timeout, so a test agent can
write ``assert-screen chat`` right after a tap that starts network work.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..binding import find_node, iter_nodes
from ..render import render_screen

Failure = Dict[str, Any]

#: ``set-field NAME VALUE`` → the action it dispatches.
FIELD_ACTIONS: Dict[str, str] = {
    "host": "set_host",
    "port": "set_port",
    "code": "set_pair_code",
    "pair_code": "set_pair_code",
    "device_name": "set_device_name",
    "working_dir": "set_working_dir",
    "draft": "set_draft",
}


def field_action(name: str, value: str) -> Dict[str, Any]:
    """The action for ``set-field NAME VALUE``; ValueError for an unknown field."""
    key = name.replace("-", "_")
    if key not in FIELD_ACTIONS:
        known = ", ".join(sorted(FIELD_ACTIONS))
        raise ValueError(f"unknown field {name!r} (known: {known})")
    return {"type": FIELD_ACTIONS[key], "value": value}


def node_summary(node: dict) -> dict:
    """A node without its children (what ``find-node`` prints)."""
    summary = {k: v for k, v in node.items() if k != "children"}
    summary["child_ids"] = [child["id"] for child in node.get("children", [])]
    return summary


def visible_node(tree: dict, node_id: str) -> Optional[dict]:
    """The node ``node_id`` when it and all its ancestors are visible."""
    for node in iter_nodes(tree, visible_only=True):
        if node["id"] == node_id:
            return node
    return None


def tap_problem(tree: dict, node_id: str) -> Optional[str]:
    """Why a person could not tap ``node_id`` now (None: they can)."""
    node = find_node(tree, node_id)
    if node is None:
        return f"no node {node_id!r} in the tree"
    if visible_node(tree, node_id) is None:
        return f"node {node_id!r} is not visible on the {tree_screen(tree)} screen"
    if not node.get("enabled", True):
        return f"node {node_id!r} is disabled"
    if "tap" not in node.get("supported_actions", []):
        return f"node {node_id!r} ({node.get('role')}) cannot be tapped"
    return None


def tree_screen(tree: dict) -> str:
    """The screen the tree shows (its root node's value)."""
    root = tree["tree"] if "id" not in tree and isinstance(tree.get("tree"), dict) else tree
    return str(root.get("value") or root.get("id"))


def check_screen(state: dict, expected: str) -> Optional[Failure]:
    if state.get("screen") == expected:
        return None
    return {"assert": "screen", "expected": expected, "actual": state.get("screen")}


def check_text(tree: dict, text: str) -> Optional[Failure]:
    """``text`` appears on the visible screen (as ``render`` shows it)."""
    screen = render_screen(tree)
    if text in screen:
        return None
    return {"assert": "text", "expected": text, "actual": None, "screen": tree_screen(tree)}


def check_node(tree: dict, node_id: str, *, enabled: Optional[bool] = None, role: Optional[str] = None,
               label: Optional[str] = None) -> Optional[Failure]:
    """The node is on the visible screen, with the given properties."""
    node = visible_node(tree, node_id)
    if node is None:
        present = find_node(tree, node_id) is not None
        return {"assert": "node", "node_id": node_id, "expected": "visible",
                "actual": "hidden" if present else "absent"}
    wrong: Dict[str, Any] = {}
    expected: Dict[str, Any] = {}
    if enabled is not None and bool(node.get("enabled")) != enabled:
        expected["enabled"], wrong["enabled"] = enabled, node.get("enabled")
    if role is not None and node.get("role") != role:
        expected["role"], wrong["role"] = role, node.get("role")
    if label is not None and node.get("label") != label:
        expected["label"], wrong["label"] = label, node.get("label")
    if not wrong:
        return None
    return {"assert": "node", "node_id": node_id, "expected": expected, "actual": wrong}


def check_no_error(state: dict) -> Optional[Failure]:
    """No error banner and the connection has not failed."""
    banner = (state.get("banners") or {}).get("error")
    if banner:
        return {"assert": "no_error", "expected": None, "actual": banner.get("text") or banner.get("message")}
    connection = state.get("connection") or {}
    if connection.get("phase") == "failed":
        return {"assert": "no_error", "expected": None, "actual": f"connection failed: {connection.get('reason')}"}
    return None


def check_effect(effects: List[dict], effect_type: str, since: int = 0) -> Optional[Failure]:
    """The host executed an effect of ``effect_type`` (at or after index ``since``)."""
    if any(e.get("type") == effect_type for e in effects[since:]):
        return None
    seen = sorted({str(e.get("type")) for e in effects[since:]})
    return {"assert": "effect", "expected": effect_type, "actual": seen}
