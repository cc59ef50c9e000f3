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
sheet. A message written in markdown shows as its blocks under the speaker
(docs/ABI.md, "The transcript's nodes"), as the Swift ``ScreenText`` does:
paragraphs as they read, ``#`` per level of a heading, ``• text`` /
``1. text`` / ``[x] text`` list items, ``>`` a quote (its blocks under it),
````` ```lang ````` then the code for a code block (no closing fence while it
is open), ``| a | b |`` a table row, ``---`` a divider; a diff
``diff path +n −m`` with ``+ ``, ``- `` and ``  `` lines; reasoning
``(thought) title`` (and its text when open).
"""

from __future__ import annotations

from typing import List, Optional

from .binding import find_node

__all__ = ["render_screen", "render_node"]

INDENT = "  "

#: The roles of a message's markdown blocks.
BLOCK_ROLES = frozenset({"paragraph", "heading", "list", "quote", "code_block", "table", "divider"})


def _join(label: str, value: Optional[str], sep: str = ": ") -> str:
    """``label: value``; the value is left out when the label already ends with it."""
    if not value or label.endswith(value):
        return label
    if not label:
        return value
    if sep == ": " and label.endswith(":"):
        sep = " "
    return f"{label}{sep}{value}"


#: A message's ``variant`` as the text render says it (the pictures draw it).
MESSAGE_STATES = {
    "typing": "typing", "queued": "queued", "waiting": "waiting to send",
    "sending": "sent, not confirmed yet", "failed": "not delivered",
}


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
        level = node.get("level")
        if level is None:
            return f"## {label}"
        return "#" * max(1, min(int(level), 6)) + " " + (value or "")
    if role == "paragraph":
        return value or ""
    if role == "list_item":
        checked = node.get("checked")
        mark = label if checked is None else ("[x]" if checked else "[ ]")
        return f"{mark} {value}" if value else mark
    if role == "quote":
        return ">"
    if role == "code_block":
        fence = "```" + (node.get("language") or "")
        code = value or ""
        return f"{fence}\n{code}" if node.get("variant") == "open" else f"{fence}\n{code}\n```"
    if role in ("table", "table_cell"):
        return None
    if role == "table_row":
        return "| " + " | ".join(c.get("value") or "" for c in node.get("children") or []) + " |"
    if role == "divider":
        return "---"
    if role == "diff":
        counts = node.get("counts")
        return f"diff {label}" + (f" +{counts['added']} −{counts['removed']}" if counts else "")
    if role == "diff_hunk":
        return label or None
    if role == "diff_line":
        sign = {"added": "+ ", "removed": "- "}.get(node.get("variant") or "", "  ")
        return sign + (value or "")
    if role == "reasoning":
        return "(thought) " + _join(label, value if node.get("expanded") else None)
    if role == "header":
        return _join(label, value, " — ")
    if role == "button":
        text = f"[{label}]"
        if node.get("selected"):
            text += " ✓"
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
        # What the picture draws (a typing indicator, a waiting message's look) said in words.
        state = MESSAGE_STATES.get(node.get("variant") or "")
        if state:
            label = f"{label} ({state})"
        # A message written in markdown shows it as its blocks (its children).
        if not value or any(c.get("role") in BLOCK_ROLES for c in node.get("children") or []):
            return label
        return f"{label}: {value}"
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
