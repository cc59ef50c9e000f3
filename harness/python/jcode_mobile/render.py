"""The semantic UI tree as readable plain text.

Every word on screen comes from the tree (labels, values, placeholders):
the core decides formatting, this module only lays nodes out, one per line,
indented by depth. Hidden nodes and their subtrees are left out.

    Connect to jcode
      [Scan QR code]
      Host: devbox.local
      Port: (7643)
      [Pair]

Conventions: ``[Label]`` a button (``(disabled)`` when it cannot be
tapped), ``Label: value`` a text field (the placeholder in parentheses when
empty, ``*`` marks the focused field), ``Speaker: text`` a message,
``! text`` an error banner or error text, ``~ text`` a status line,
``* text`` a notice, ``Tool name [status]`` a tool card, ``>> title`` a
sheet.
"""

from __future__ import annotations

from typing import List, Optional

from .binding import find_node

__all__ = ["render_screen", "render_node"]

INDENT = "  "


def _join(label: str, value: Optional[str], sep: str = ": ") -> str:
    """``label: value``; the value is left out when the label already ends with it."""
    if not value or label.endswith(value):
        return label
    if not label:
        return value
    if sep == ": " and label.endswith(":"):
        sep = " "
    return f"{label}{sep}{value}"


def _line(node: dict) -> Optional[str]:
    """The node's own line (None: the node only groups its children)."""
    role = node.get("role")
    label = node.get("label") or ""
    value = node.get("value")
    enabled = node.get("enabled", True)
    if role == "screen":
        return f"# {label}" if label else None
    if role in ("group", "list"):
        return label or None
    if role == "heading":
        return f"## {label}"
    if role == "header":
        return _join(label, value, " — ")
    if role == "button":
        text = f"[{label}]"
        if value:
            text += f" {value}"
        if not enabled:
            text += " (disabled)"
        return text
    if role in ("text_field", "secure_field"):
        shown = value if value else f"({node.get('placeholder') or ''})"
        mark = " *" if node.get("focused") else ""
        sep = " " if label.endswith(":") else ": "
        return (f"{label}{sep}{shown}" if label else shown) + mark
    if role == "message":
        return f"{label}: {value}" if value else label
    if role == "tool_call":
        return f"Tool {label} [{value}]" if value else f"Tool {label}"
    if role in ("banner", "error_text"):
        return "! " + _join(label, value)
    if role == "status":
        return "~ " + _join(label, value, " · ")
    if role == "notice":
        return "* " + label
    if role == "sheet":
        return ">> " + label
    if role == "image":
        return "[image] " + _join(label, value)
    return _join(label, value)


def render_node(node: dict, depth: int = 0, out: Optional[List[str]] = None) -> List[str]:
    """Append the lines of ``node`` and its visible descendants to ``out``."""
    if out is None:
        out = []
    if not node.get("visible", True):
        return out
    line = _line(node)
    child_depth = depth
    if line is not None:
        pad = INDENT * depth
        first, *rest = line.split("\n")
        out.append((pad + first).rstrip())
        out.extend((pad + INDENT + more).rstrip() for more in rest)
        child_depth = depth + 1
    for child in node.get("children") or []:
        render_node(child, child_depth, out)
    return out


def render_screen(tree: dict, root_id: Optional[str] = None) -> str:
    """Render a tree (a root node or a whole ``jcode_mobile_tree`` answer).

    ``root_id`` renders only that subtree (e.g. ``"chat.messages"``).
    """
    root = tree["tree"] if "id" not in tree and isinstance(tree.get("tree"), dict) else tree
    if root_id is not None:
        found = find_node(root, root_id)
        if found is None:
            return ""
        root = found
    return "\n".join(render_node(root))
