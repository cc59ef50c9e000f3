"""A copy of the semantic tree kept current from the tree's operations.

A host that draws from the tree does not need the whole tree after every
event: ``jcode_mobile_tree_changes`` (and the event stream's ``tree_changed``)
says what changed since a revision, keyed by node id, in bytes proportional
to the change (a streamed delta is one ``append`` to one message).

    from jcode_mobile import App
    from jcode_mobile.tree_mirror import TreeMirror

    app = App({"scenario": "connected_chat"})
    mirror = TreeMirror(app)        # starts from app.tree_raw()
    app.dispatch({"type": "set_draft", "value": "hi"})
    mirror.update()                 # applies the ops; mirror.tree == app.tree()
    mirror.node("chat.draft")["value"]          # "hi": by id, in O(1)

The operations (see ``jcode_mobile_tree_changes`` in include/jcode_mobile.h):

- ``{"op":"splice","parent","index","remove":[ids],"insert":[nodes]}``
- ``{"op":"move","id","parent","index"}``
- ``{"op":"update","id","set":{field: value}}`` (null for ``scroll``, ``window``
  or a field only some roles carry, such as ``spans`` or ``expanded``: gone)
- ``{"op":"append","id","field","text"}`` (a null field counts as ``""``)
- ``{"op":"spans","id","keep","spans"}`` (the first ``keep`` spans stay, ``spans`` follow; the
  value and accessibility value become the spans' texts joined)

An operation that does not fit the copy (an unknown id, a removed id that is
not the child at that place, an index out of range, a field a node does not
have) raises :class:`TreeMismatch` and leaves the copy as it was before that
operation: a host would then resync from ``jcode_mobile_tree``.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional

__all__ = ["TreeMirror", "TreeMismatch", "NODE_FIELDS", "DETAIL_FIELDS", "APPENDABLE_FIELDS"]

#: A node's own fields an ``update`` may set (every member but ``id`` and ``children``).
NODE_FIELDS = frozenset({
    "role", "label", "value", "placeholder", "visible", "enabled", "focused", "accessibility_label",
    "accessibility_value", "supported_actions", "bounds", "scroll", "window",
    "level", "spans", "language", "checked", "variant", "expanded", "counts", "selected", "icon",
})
#: The fields only some roles carry (docs/ABI.md, "The transcript's nodes").
DETAIL_FIELDS = frozenset({"level", "spans", "language", "checked", "variant", "expanded", "counts", "selected", "icon"})
#: The fields a node leaves out when they are absent (an ``update`` sets them to null).
_OMITTED_WHEN_ABSENT = frozenset({"scroll", "window"}) | DETAIL_FIELDS
#: The string fields an ``append`` may grow.
APPENDABLE_FIELDS = frozenset({"label", "value", "accessibility_label", "accessibility_value"})


class TreeMismatch(ValueError):
    """An operation that does not fit the mirrored tree."""

    def __init__(self, message: str, op: Optional[dict] = None):
        self.op = op
        super().__init__(f"{message}: {json.dumps(op)[:300]}" if op is not None else message)


class TreeMirror:
    """The semantic tree of an app, kept current from its tree operations.

    :attr:`tree` is the root node (plain dicts, as ``jcode_mobile_tree``
    writes them), :attr:`revision` the revision it is the tree of. Nodes are
    indexed by id, so each operation costs what it touches, not the size of
    the tree.

    ``app`` (an :class:`~jcode_mobile.binding.App`) is needed only by
    :meth:`update`; a mirror fed from ``tree_changed`` events can start from
    a tree and a revision instead (``TreeMirror(tree=…, revision=…)``).
    """

    def __init__(self, app: Any = None, *, tree: Optional[dict] = None, revision: Optional[int] = None):
        self.app = app
        if tree is None:
            if app is None:
                raise ValueError("TreeMirror needs an app or a tree and its revision")
            answer = app.tree_raw()
            if not answer.get("ok"):
                raise RuntimeError(f"jcode_mobile_tree failed: {answer}")
            tree, revision = answer["tree"], answer["revision"]
        elif revision is None:
            raise ValueError("a tree comes with the revision it is the tree of")
        self.tree: dict = {}
        self.revision: int = revision
        #: How many times the copy was replaced whole (a ``resync``).
        self.resyncs = 0
        #: How many operations were applied.
        self.applied = 0
        #: Bytes of the last ``jcode_mobile_tree_changes`` answer :meth:`update` read.
        self.last_answer_bytes = 0
        #: The operations the last answer or event applied (empty after a resync):
        #: the nodes a host redraws.
        self.last_ops: List[dict] = []
        self._nodes: Dict[str, dict] = {}
        self._parents: Dict[str, Optional[str]] = {}
        self.replace(tree, revision)

    # -- reading ------------------------------------------------------------

    def node(self, node_id: str) -> Optional[dict]:
        """The node with this id (with its children), or None."""
        return self._nodes.get(node_id)

    def parent(self, node_id: str) -> Optional[str]:
        """The id of the node's parent (None for the root or an unknown id)."""
        return self._parents.get(node_id)

    def __contains__(self, node_id: str) -> bool:
        return node_id in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    # -- keeping current ------------------------------------------------------

    def replace(self, tree: dict, revision: int) -> None:
        """Take a whole tree (the first one, or a ``resync``)."""
        nodes: Dict[str, dict] = {}
        parents: Dict[str, Optional[str]] = {}
        self._index(tree, None, nodes, parents)
        self.tree, self.revision, self._nodes, self._parents = tree, revision, nodes, parents

    def update(self) -> dict:
        """Brings the copy to the app's current revision through
        ``jcode_mobile_tree_changes``; returns the tree. Raises
        :class:`TreeMismatch` when an operation does not fit."""
        if self.app is None:
            raise ValueError("this mirror has no app to ask")
        text = self.app.tree_changes_bytes(self.revision)
        self.last_answer_bytes = len(text)
        answer = json.loads(text.decode("utf-8"))
        if not answer.get("ok"):
            raise RuntimeError(f"jcode_mobile_tree_changes failed: {answer}")
        self.apply_answer(answer)
        return self.tree

    def apply_answer(self, answer: dict) -> None:
        """Applies one ``jcode_mobile_tree_changes`` answer (its ops, or its whole tree)."""
        if answer.get("resync"):
            self.resyncs += 1
            self.last_ops = []
            self.replace(answer["tree"], answer["revision"])
            return
        if answer["since"] != self.revision:
            raise TreeMismatch(f"the answer starts from revision {answer['since']}, the copy is of {self.revision}")
        self.last_ops = answer["ops"]
        self.apply(answer["ops"])
        self.revision = answer["revision"]

    def apply_event(self, event: dict) -> bool:
        """Applies a ``tree_changed`` event of the event stream. Returns False
        (and changes nothing) when the event cannot be applied to this copy:
        a ``resync``, or operations from another revision than the copy's;
        the host then calls :meth:`update` (or reads the whole tree)."""
        if event.get("type") != "tree_changed":
            raise ValueError(f"not a tree_changed event: {event.get('type')!r}")
        if event.get("resync") or event.get("since") != self.revision:
            return False
        self.last_ops = event["ops"]
        self.apply(event["ops"])
        self.revision = event["revision"]
        return True

    def apply(self, ops: Iterable[dict]) -> None:
        """Applies operations in order (the revision is the caller's to set)."""
        for op in ops:
            kind = op.get("op")
            handler = _HANDLERS.get(kind)
            if handler is None:
                raise TreeMismatch(f"unknown operation {kind!r}", op)
            handler(self, op)
            self.applied += 1

    # -- the operations -------------------------------------------------------

    def _existing(self, node_id: Any, op: dict) -> dict:
        node = self._nodes.get(node_id) if isinstance(node_id, str) else None
        if node is None:
            raise TreeMismatch(f"no node {node_id!r}", op)
        return node

    def _splice(self, op: dict) -> None:
        parent = self._existing(op["parent"], op)
        children: List[dict] = parent["children"]
        index, removed, inserted = op["index"], op["remove"], op["insert"]
        if not (isinstance(index, int) and 0 <= index and index + len(removed) <= len(children)):
            raise TreeMismatch(f"splice at {index} removing {len(removed)} of {len(children)} children", op)
        for k, node_id in enumerate(removed):
            found = children[index + k]["id"]
            if found != node_id:
                raise TreeMismatch(f"splice removes {node_id!r} where {found!r} is", op)
        # Check the new ids before touching anything: unique among themselves
        # and not already in the tree (unless this splice removes them).
        leaving = set()
        for child in children[index:index + len(removed)]:
            leaving.update(self._subtree_ids(child))
        arriving: List[str] = []
        for node in inserted:
            arriving.extend(self._subtree_ids(node))
        seen = set()
        for node_id in arriving:
            if node_id in seen or (node_id in self._nodes and node_id not in leaving):
                raise TreeMismatch(f"splice inserts {node_id!r}, already in the tree", op)
            seen.add(node_id)
        for child in children[index:index + len(removed)]:
            self._forget(child)
        children[index:index + len(removed)] = inserted
        for node in inserted:
            self._index(node, parent["id"], self._nodes, self._parents)

    def _move(self, op: dict) -> None:
        parent = self._existing(op["parent"], op)
        node_id, index = op["id"], op["index"]
        self._existing(node_id, op)
        if self._parents.get(node_id) != parent["id"]:
            raise TreeMismatch(f"{node_id!r} is not a child of {parent['id']!r}", op)
        children: List[dict] = parent["children"]
        if not (isinstance(index, int) and 0 <= index < len(children)):
            raise TreeMismatch(f"move to {index} among {len(children) - 1} other children", op)
        at = next(k for k, child in enumerate(children) if child["id"] == node_id)
        children.insert(index, children.pop(at))

    def _update(self, op: dict) -> None:
        node = self._existing(op["id"], op)
        fields = op["set"]
        unknown = sorted(set(fields) - NODE_FIELDS)
        if unknown:
            raise TreeMismatch(f"update sets {unknown}, not a node's own fields", op)
        for name, value in fields.items():
            if value is None and name in _OMITTED_WHEN_ABSENT:
                node.pop(name, None)
            else:
                node[name] = value

    def _append(self, op: dict) -> None:
        node = self._existing(op["id"], op)
        field = op["field"]
        if field not in APPENDABLE_FIELDS:
            raise TreeMismatch(f"append to {field!r}, not a string field", op)
        node[field] = (node.get(field) or "") + op["text"]

    def _spans(self, op: dict) -> None:
        node = self._existing(op["id"], op)
        keep, spans = op["keep"], node.get("spans")
        if not (isinstance(spans, list) and isinstance(keep, int) and 0 <= keep <= len(spans)):
            raise TreeMismatch(f"spans keeping {keep!r} of {len(spans) if isinstance(spans, list) else spans!r}", op)
        del spans[keep:]
        spans.extend(op["spans"])
        node["value"] = node["accessibility_value"] = "".join(span["text"] for span in spans)

    # -- the index ----------------------------------------------------------------

    @staticmethod
    def _subtree_ids(node: dict) -> List[str]:
        ids, stack = [], [node]
        while stack:
            n = stack.pop()
            ids.append(n["id"])
            stack.extend(n.get("children") or ())
        return ids

    @staticmethod
    def _index(node: dict, parent: Optional[str], nodes: Dict[str, dict], parents: Dict[str, Optional[str]]) -> None:
        stack = [(node, parent)]
        while stack:
            n, p = stack.pop()
            node_id = n["id"]
            if node_id in nodes:
                raise TreeMismatch(f"the id {node_id!r} is in the tree twice")
            nodes[node_id] = n
            parents[node_id] = p
            stack.extend((child, node_id) for child in n.get("children") or ())

    def _forget(self, node: dict) -> None:
        for node_id in self._subtree_ids(node):
            self._nodes.pop(node_id, None)
            self._parents.pop(node_id, None)


_HANDLERS = {
    "splice": TreeMirror._splice,
    "move": TreeMirror._move,
    "update": TreeMirror._update,
    "append": TreeMirror._append,
    "spans": TreeMirror._spans,
}
