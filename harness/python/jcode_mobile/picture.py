"""Pictures of the screen: the core's SVG as a PNG, and two pictures compared.

``jcode_mobile_screenshot_svg`` draws the laid-out semantic tree as an SVG
document in which every visible node is a ``<g data-id="…" data-role="…">``,
nested like the tree. This module

- turns that SVG into a PNG (:func:`svg_to_png`, with cairosvg; the text is
  set in DejaVu Sans Mono, see :func:`font_problem`),
- compares two SVGs node by node (:func:`structural_diff`): nodes added,
  removed, moved or resized, reparented, restyled, and text changed, as a
  report a person reads,
- compares two PNGs pixel by pixel (:func:`pixel_diff`): how many pixels
  differ, their bounding box, the nodes that hold them, and a diff image
  (changed pixels in red over a faded copy, :meth:`PixelDiff.save_image`).

    from jcode_mobile import App
    from jcode_mobile.picture import svg_to_png, structural_diff, pixel_diff

    with App({"scenario": "connected_chat"}) as app:
        before = app.screenshot_svg()
        app.actions.set_draft(value="hi")
        after = app.screenshot_svg()
    print(structural_diff(before, after))       # ~ chat.draft: text …
    diff = pixel_diff(svg_to_png(before), svg_to_png(after), svg=[before, after])
    print(diff)                                 # 312 pixels differ in (22,760)-(39,776): chat.draft
    diff.save_image("draft.diff.png")

``python -m jcode_mobile.picture OLD NEW`` prints both reports for two files
(``.svg`` or ``.png``; an SVG is rendered for the pixel comparison).
"""

from __future__ import annotations

import difflib
import io
import os
import shutil
import subprocess
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

__all__ = [
    "FONT_FAMILY",
    "FONT_PACKAGE",
    "MAX_PIXELS_PER_SIDE",
    "font_problem",
    "svg_to_png",
    "png_size",
    "SvgNode",
    "svg_nodes",
    "StructuralDiff",
    "structural_diff",
    "PixelDiff",
    "pixel_diff",
    "renderer_versions",
    "font_file",
]

#: The font the core's text grid assumes (8 points per character at 13 points).
FONT_FAMILY = "DejaVu Sans Mono"
#: The face prose and controls are drawn in (code, diffs, commands and paths in FONT_FAMILY).
PROSE_FONT_FAMILY = "DejaVu Sans"
#: The Debian/Ubuntu package that installs it.
FONT_PACKAGE = "fonts-dejavu-core"
#: The largest side of a PNG cairo draws (its image surfaces stop at 32767 pixels).
MAX_PIXELS_PER_SIDE = 32767

# The core's drawing constants (Sources/JcodeMobileCore/Picture/Screenshot.swift,
# Semantic/Layout.swift): used only to estimate where a text line lies.
_CHAR_WIDTH = 8
_LINE_HEIGHT = 20
_BASELINE = 15

_SVG_NS = "{http://www.w3.org/2000/svg}"

Box = Tuple[int, int, int, int]  # x, y, width, height (SVG points)
Picture = Union[bytes, bytearray, str, Path]


# -- rendering ------------------------------------------------------------------------


def font_problem() -> Optional[str]:
    """None when DejaVu Sans Mono and DejaVu Sans (prose and controls, since
    0.7.0; the same package) are installed, else a sentence saying what to
    install. Without them the renderer silently substitutes another font, so
    PNGs differ from the goldens (the SVG does not depend on fonts)."""
    fc_list = shutil.which("fc-list")
    if fc_list is not None:
        for family in (FONT_FAMILY, PROSE_FONT_FAMILY):
            try:
                out = subprocess.run([fc_list, f":family={family}", "family"], capture_output=True, text=True,
                                     timeout=30).stdout
            except (OSError, subprocess.SubprocessError):
                out = None
            if out is None:
                break
            if not any(family.lower() in line.lower() for line in out.splitlines()):
                return _missing_font()
        else:
            return None
    # No fontconfig tools: look where fonts live.
    roots = [Path("/usr/share/fonts"), Path("/usr/local/share/fonts"), Path.home() / ".fonts",
             Path.home() / ".local/share/fonts"]
    for root in roots:
        if root.is_dir() and any(root.rglob("DejaVuSansMono.ttf")) and any(root.rglob("DejaVuSans.ttf")):
            return None
    return _missing_font()


def font_file() -> Optional[str]:
    """The file fontconfig picks for DejaVu Sans Mono (None without fc-match)."""
    fc_match = shutil.which("fc-match")
    if fc_match is None:
        return None
    try:
        out = subprocess.run([fc_match, "-f", "%{file}", FONT_FAMILY], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _missing_font() -> str:
    return (f"the font {FONT_FAMILY!r} is not installed, so PNGs of the screen would be drawn with another font "
            f"and differ from the goldens: install it (Debian/Ubuntu: `apt-get install {FONT_PACKAGE}`; "
            f"check with `fc-list | grep -i \"{FONT_FAMILY.lower()}\"`)")


def svg_to_png(svg: Union[str, bytes], *, scale: float = 1.0, path: Union[str, Path, None] = None) -> bytes:
    """The PNG of an SVG document, ``scale`` pixels per point (the core's
    390 × 844 point screen at scale 2 is 780 × 1688 pixels). Writes it to
    ``path`` too when given. Needs cairosvg (and libcairo); for pictures
    that match the goldens, the DejaVu Sans Mono font (:func:`font_problem`)."""
    if not scale > 0:
        raise ValueError(f"scale must be more than 0, not {scale!r}")
    try:
        import cairosvg
    except ImportError as problem:  # pragma: no cover - a declared dependency
        raise ImportError(f"PNG screenshots need cairosvg (`pip install cairosvg`; it needs libcairo2): {problem}") from None
    data = svg.encode("utf-8") if isinstance(svg, str) else bytes(svg)
    root = ET.fromstring(data)
    width, height = _int(root.get("width")) * scale, _int(root.get("height")) * scale
    if max(width, height) > MAX_PIXELS_PER_SIDE:
        raise ValueError(f"a {width:g}×{height:g} pixel PNG is larger than the {MAX_PIXELS_PER_SIDE} pixels a side "
                         f"cairo draws: use a smaller scale")
    png = cairosvg.svg2png(bytestring=data, scale=scale)
    if path is not None:
        Path(path).write_bytes(png)
    return png


def _image(picture: Picture):
    from PIL import Image

    if isinstance(picture, (bytes, bytearray)):
        image = Image.open(io.BytesIO(bytes(picture)))
    else:
        image = Image.open(picture)
    image.load()
    return image


def png_size(picture: Picture) -> Tuple[int, int]:
    """``(width, height)`` in pixels of a PNG (bytes or a path)."""
    return _image(picture).size


def renderer_versions() -> Dict[str, str]:
    """What draws the PNGs here: the cairosvg and cairo versions and the
    font file's SHA-256 (another cairo, or another build of the font, may
    place or antialias glyphs differently)."""
    versions: Dict[str, str] = {}
    try:
        import cairosvg
        versions["cairosvg"] = cairosvg.__version__
        import cairocffi
        versions["cairo"] = cairocffi.cairo_version_string()
    except ImportError:
        pass
    font = font_file()
    if font is not None and os.path.isfile(font):
        import hashlib
        versions["font"] = os.path.basename(font)
        versions["font_sha256"] = hashlib.sha256(Path(font).read_bytes()).hexdigest()
    return versions


# -- the SVG's nodes ------------------------------------------------------------------


@dataclass
class SvgText:
    """One ``<text>`` line of a node: its anchor point, as drawn."""
    x: int
    y: int
    text: str
    anchor: str = "start"
    fill: Optional[str] = None
    bold: bool = False

    def box(self) -> Box:
        """Where the line's glyphs lie, estimated from the core's text grid."""
        width = _CHAR_WIDTH * len(self.text)
        left = self.x - width // 2 if self.anchor == "middle" else (self.x - width if self.anchor == "end" else self.x)
        return (left, self.y - _BASELINE, width, _LINE_HEIGHT)


@dataclass
class SvgNode:
    """One ``data-id`` element of a screenshot.

    ``rect`` is the bounds of its first own ``<rect>`` (its box, when it
    draws one), ``texts`` its own text lines (not its children's), ``parent``
    the id of the enclosing node, ``depth`` how deep it is."""
    id: str
    role: str
    parent: Optional[str]
    depth: int
    rect: Optional[Box] = None
    rect_style: Dict[str, str] = field(default_factory=dict)
    texts: List[SvgText] = field(default_factory=list)
    children: List[str] = field(default_factory=list)
    scroll_offset: Optional[str] = None

    @property
    def position(self) -> Optional[Box]:
        """The node's box: its rect, else its first text line's anchor (a 0×0 box), else None."""
        if self.rect is not None:
            return self.rect
        if self.texts:
            return (self.texts[0].x, self.texts[0].y, 0, 0)
        return None

    def area(self) -> Optional[Box]:
        """What the node covers on the picture: its rect, else its text lines' boxes together."""
        if self.rect is not None:
            return self.rect
        if not self.texts:
            return None
        boxes = [t.box() for t in self.texts]
        left, top = min(b[0] for b in boxes), min(b[1] for b in boxes)
        right, bottom = max(b[0] + b[2] for b in boxes), max(b[1] + b[3] for b in boxes)
        return (left, top, right - left, bottom - top)

    @property
    def text(self) -> List[str]:
        return [t.text for t in self.texts]

    def style(self) -> Dict[str, str]:
        """Colours and weights, for reporting a restyle (an enabled button turning grey)."""
        style = {f"rect {k}": v for k, v in self.rect_style.items()}
        for i, line in enumerate(self.texts):
            if line.fill is not None:
                style[f"text {i + 1} fill"] = line.fill
            if line.bold:
                style[f"text {i + 1} weight"] = "bold"
        return style


@dataclass
class SvgPicture:
    width: Optional[str]
    height: Optional[str]
    nodes: Dict[str, SvgNode]


def _int(value: Optional[str]) -> int:
    try:
        return int(round(float(value or 0)))
    except ValueError:
        return 0


def _tag(element: ET.Element) -> str:
    tag = element.tag
    return tag[len(_SVG_NS):] if isinstance(tag, str) and tag.startswith(_SVG_NS) else str(tag)


def _read_svg(svg: Picture) -> ET.Element:
    if isinstance(svg, Path) or (isinstance(svg, str) and not svg.lstrip().startswith("<")):
        return ET.parse(str(svg)).getroot()
    return ET.fromstring(svg if isinstance(svg, (bytes, bytearray)) else svg.encode("utf-8"))


def svg_picture(svg: Picture) -> SvgPicture:
    """The SVG's size and its ``data-id`` nodes, parents before children.
    ``svg`` is the document (str or bytes) or a path to it."""
    root = _read_svg(svg)
    nodes: Dict[str, SvgNode] = {}

    def visit(element: ET.Element, owner: Optional[SvgNode], dy: int = 0) -> None:
        """``dy``: how far down the screen the coordinates inside lie (the
        message list draws its rows in its content coordinates, in a group
        moved by ``transform="translate(0 dy)"``): positions are read as on
        the screen."""
        for child in element:
            tag = _tag(child)
            node_id = child.get("data-id")
            if node_id is not None:
                node = SvgNode(id=node_id, role=child.get("data-role", tag), parent=owner.id if owner else None,
                               depth=owner.depth + 1 if owner else 0)
                if node_id in nodes:  # ids are unique in the tree; keep the first, note the clash
                    node_id = f"{node_id}#{sum(1 for k in nodes if k.split('#')[0] == node.id) + 1}"
                    node.id = node_id
                nodes[node_id] = node
                if owner is not None:
                    owner.children.append(node_id)
                if tag == "rect":
                    _take_rect(node, child, dy)
                visit(child, node, dy)
            elif tag == "clipPath":
                continue  # the list's clip rectangle is not a shape of its own
            elif tag == "rect":
                if owner is not None and owner.rect is None:
                    _take_rect(owner, child, dy)
            elif tag == "text":
                if owner is not None:
                    owner.texts.append(SvgText(
                        x=_int(child.get("x")), y=_int(child.get("y")) + dy, text="".join(child.itertext()),
                        anchor=child.get("text-anchor", "start"), fill=child.get("fill"),
                        bold=child.get("font-weight") == "bold"))
            else:  # a wrapper such as the list's clipped group: its content belongs to the owner
                if owner is not None and child.get("data-scroll-offset") is not None:
                    owner.scroll_offset = child.get("data-scroll-offset")
                visit(child, owner, dy + _translate_y(child.get("transform")))

    visit(root, None)
    return SvgPicture(width=root.get("width"), height=root.get("height"), nodes=nodes)


def _translate_y(transform: Optional[str]) -> int:
    """The y of ``translate(0 dy)`` (the only transform the core writes), else 0."""
    match = re.fullmatch(r"translate\(\s*-?\d+[ ,]+(-?\d+)\s*\)", transform or "")
    return int(match.group(1)) if match else 0


def _take_rect(node: SvgNode, element: ET.Element, dy: int = 0) -> None:
    node.rect = (_int(element.get("x")), _int(element.get("y")) + dy, _int(element.get("width")), _int(element.get("height")))
    node.rect_style = {k: element.get(k) for k in ("fill", "stroke", "stroke-width", "rx") if element.get(k) is not None}


def svg_nodes(svg: Picture) -> Dict[str, SvgNode]:
    """The ``data-id`` nodes of a screenshot by id, parents before children."""
    return svg_picture(svg).nodes


# -- comparing two SVGs ---------------------------------------------------------------


def _fmt_box(box: Optional[Box]) -> str:
    if box is None:
        return "nowhere"
    x, y, w, h = box
    return f"({x},{y})" if w == 0 and h == 0 else f"({x},{y} {w}×{h})"


@dataclass
class StructuralDiff:
    """What differs between two screenshots, node by node. Empty (falsy)
    when the pictures show the same nodes in the same places with the same
    text and style. ``str()`` is the report, one line per difference."""
    size: Optional[Tuple[str, str]] = None
    added: List[SvgNode] = field(default_factory=list)
    removed: List[SvgNode] = field(default_factory=list)
    #: (id, before, after, nodes inside that moved along with it by the same offset)
    moved: List[Tuple[str, Optional[Box], Optional[Box], int]] = field(default_factory=list)
    reparented: List[Tuple[str, Optional[str], Optional[str]]] = field(default_factory=list)
    reordered: List[Tuple[str, List[str], List[str]]] = field(default_factory=list)
    role_changed: List[Tuple[str, str, str]] = field(default_factory=list)
    text_changed: List[Tuple[str, List[str], List[str]]] = field(default_factory=list)
    style_changed: List[Tuple[str, Dict[str, Tuple[Optional[str], Optional[str]]]]] = field(default_factory=list)
    scroll_changed: List[Tuple[str, Optional[str], Optional[str]]] = field(default_factory=list)
    labels: Tuple[str, str] = ("before", "after")
    #: id -> the id of its parent, today (for grouping the report's lines)
    parents: Dict[str, Optional[str]] = field(default_factory=dict, repr=False)

    @property
    def empty(self) -> bool:
        return not (self.size or self.added or self.removed or self.moved or self.reparented or self.reordered
                    or self.role_changed or self.text_changed or self.style_changed or self.scroll_changed)

    def __bool__(self) -> bool:
        return not self.empty

    def count(self) -> int:
        return (bool(self.size) + len(self.added) + len(self.removed) + len(self.moved) + len(self.reparented)
                + len(self.reordered) + len(self.role_changed) + len(self.text_changed) + len(self.style_changed)
                + len(self.scroll_changed))

    def lines(self) -> List[str]:
        if self.empty:
            return ["the two pictures show the same nodes, in the same places, with the same text"]
        before, after = self.labels
        out: List[str] = []
        if self.size:
            out.append(f"~ picture size: {self.size[0]} → {self.size[1]}")
        out += _subtree_lines("-", self.removed)
        out += _subtree_lines("+", self.added)
        out += self._moved_lines()
        for node_id, old, new in self.reparented:
            out.append(f"~ {node_id} now in {new} (was in {old})")
        for node_id, old, new in self.reordered:
            out.append(f"~ children of {node_id} reordered: {', '.join(old)} → {', '.join(new)}")
        for node_id, old, new in self.role_changed:
            out.append(f"~ {node_id} role: {old} → {new}")
        for node_id, old, new in self.text_changed:
            out.append(f"~ {node_id} text:")
            for line in difflib.ndiff(old, new):
                if line[:1] in "-+":
                    out.append(f"    {line[:1]} {line[2:]!r}")
        for node_id, changes in self.style_changed:
            parts = [f"{k} {a or 'none'} → {b or 'none'}" for k, (a, b) in changes.items()]
            out.append(f"~ {node_id} style: " + "; ".join(parts))
        for node_id, old, new in self.scroll_changed:
            out.append(f"~ {node_id} scroll offset: {old} → {new}")
        told = sum(1 for line in out if not line.startswith(" "))
        return [f"{told} difference(s) between {before} and {after} (- only in {before}, + only in {after}, "
                f"~ changed):"] + out

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _moved_lines(self) -> List[str]:
        """One line per moved node; siblings next to each other that moved by
        the same offset (messages pushed down by a banner) share one."""
        out: List[str] = []
        i = 0
        while i < len(self.moved):
            node_id, old, new, inside = self.moved[i]
            offset = _offset(old, new)
            run = [self.moved[i]]
            while offset is not None and i + len(run) < len(self.moved):
                candidate = self.moved[i + len(run)]
                if _offset(candidate[1], candidate[2]) != offset or \
                        self.parents.get(candidate[0]) != self.parents.get(node_id):
                    break
                run.append(candidate)
            if len(run) > 1:
                total = sum(entry[3] for entry in run)
                along = f" (and {total} node(s) inside them, by the same offset)" if total else ""
                out.append(f"~ {', '.join(entry[0] for entry in run)} moved by {_fmt_offset(offset)}{along}")
            else:
                verb = f"moved by {_fmt_offset(offset)}" if offset is not None else "moved/resized"
                along = f" (and {inside} node(s) inside it, by the same offset)" if inside else ""
                out.append(f"~ {node_id} {verb}: {_fmt_box(old)} → {_fmt_box(new)}{along}")
            i += len(run)
        return out


def _subtree_lines(sign: str, nodes: List[SvgNode]) -> List[str]:
    """One line per added (or removed) node whose parent was not added (or
    removed) too; the nodes inside it are counted on its line."""
    ids = {node.id for node in nodes}
    inside: Dict[str, int] = {}
    top_of: Dict[str, str] = {}
    for node in nodes:  # parents come first
        if node.parent in ids:
            top = top_of.get(node.parent, node.parent)
            top_of[node.id] = top
            inside[top] = inside.get(top, 0) + 1
    out = []
    for node in nodes:
        if node.id in top_of:
            continue
        at = f" at {_fmt_box(node.position)}" if node.position is not None else ""
        text = f": {_quote_lines(node.text)}" if node.texts else ""
        count = inside.get(node.id, 0)
        within = f" (with {count} node(s) inside)" if count else ""
        out.append(f"{sign} {node.id} ({node.role}){at} in {node.parent}{text}{within}")
    return out


def _offset(old: Optional[Box], new: Optional[Box]) -> Optional[Tuple[int, int]]:
    """How far a box moved, when it kept its size (else None)."""
    if old is None or new is None or (old[2], old[3]) != (new[2], new[3]):
        return None
    return (new[0] - old[0], new[1] - old[1])


def _fmt_offset(offset: Tuple[int, int]) -> str:
    return f"({offset[0]:+d},{offset[1]:+d})".replace("+0,", "0,").replace(",+0)", ",0)")


def _quote_lines(lines: Sequence[str], limit: int = 60) -> str:
    text = " / ".join(lines)
    return repr(text if len(text) <= limit else text[:limit - 1] + "…")


def structural_diff(before: Picture, after: Picture, *, labels: Tuple[str, str] = ("before", "after")) -> StructuralDiff:
    """Compare two screenshots (SVG text, bytes or paths) node by node.

    A node is its ``data-id`` group: it is added or removed; it moved (its
    rect's bounds, or for a node without one its first text line's anchor;
    nodes that moved by the same offset as their parent are counted under it,
    not listed); it changed parent, role, text lines, style (fill, stroke,
    weight) or scroll offset; the children of a node were reordered."""
    old_picture, new_picture = svg_picture(before), svg_picture(after)
    old, new = old_picture.nodes, new_picture.nodes
    diff = StructuralDiff(labels=labels, parents={node_id: node.parent for node_id, node in new.items()})
    if (old_picture.width, old_picture.height) != (new_picture.width, new_picture.height):
        diff.size = (f"{old_picture.width}×{old_picture.height}", f"{new_picture.width}×{new_picture.height}")
    diff.removed = [node for node_id, node in old.items() if node_id not in new]
    diff.added = [node for node_id, node in new.items() if node_id not in old]

    # Moved nodes, parents first; one that moved exactly as its nearest
    # placed ancestor did is told with the outermost node listed for it.
    offsets: Dict[str, Optional[Tuple[int, int]]] = {}
    credit: Dict[str, str] = {}
    inside: Dict[str, int] = {}
    listed: List[str] = []
    for node_id, node in new.items():
        if node_id not in old or old[node_id].position == node.position:
            continue
        offset = _offset(old[node_id].position, node.position)
        offsets[node_id] = offset
        anchor = node.parent
        while anchor is not None and anchor in new and anchor in old and anchor not in offsets \
                and (new[anchor].position is None or old[anchor].position is None):
            anchor = new[anchor].parent
        if offset is not None and anchor in offsets and offsets[anchor] == offset:
            top = credit.get(anchor, anchor)
            credit[node_id] = top
            inside[top] = inside.get(top, 0) + 1
        else:
            listed.append(node_id)
    diff.moved = [(node_id, old[node_id].position, new[node_id].position, inside.get(node_id, 0)) for node_id in listed]

    for node_id, node in new.items():
        if node_id not in old:
            continue
        was = old[node_id]
        if was.parent != node.parent:
            diff.reparented.append((node_id, was.parent, node.parent))
        if was.role != node.role:
            diff.role_changed.append((node_id, was.role, node.role))
        if was.text != node.text:
            diff.text_changed.append((node_id, was.text, node.text))
        old_style, new_style = was.style(), node.style()
        if was.text != node.text:  # lines came or went: their colours are told by the text change
            old_style = {k: v for k, v in old_style.items() if k.startswith("rect ")}
            new_style = {k: v for k, v in new_style.items() if k.startswith("rect ")}
        if old_style != new_style:
            keys = sorted(set(old_style) | set(new_style))
            diff.style_changed.append((node_id, {k: (old_style.get(k), new_style.get(k)) for k in keys
                                                 if old_style.get(k) != new_style.get(k)}))
        if was.scroll_offset != node.scroll_offset:
            diff.scroll_changed.append((node_id, was.scroll_offset, node.scroll_offset))
        kept_old = [c for c in was.children if c in new and new[c].parent == node_id]
        kept_new = [c for c in node.children if c in old and old[c].parent == node_id]
        if kept_old != kept_new:
            diff.reordered.append((node_id, kept_old, kept_new))
    return diff


# -- comparing two PNGs ---------------------------------------------------------------


@dataclass
class PixelDiff:
    """The pixels that differ between two PNGs of the same size.

    ``count`` differing pixels (a pixel differs when a channel differs by
    more than ``threshold``), ``box`` their bounding box in pixels
    ``(left, top, right, bottom)`` (right and bottom exclusive; None when
    none differ), ``nodes`` the ids of the screenshot's nodes that hold
    changed pixels (deepest first), ``size_mismatch`` the two sizes when they
    differ (then nothing else is compared)."""
    size: Tuple[int, int]
    count: int = 0
    box: Optional[Tuple[int, int, int, int]] = None
    nodes: List[str] = field(default_factory=list)
    size_mismatch: Optional[Tuple[Tuple[int, int], Tuple[int, int]]] = None
    threshold: int = 0
    scale: float = 1.0
    labels: Tuple[str, str] = ("before", "after")
    _before: object = field(default=None, repr=False)
    _after: object = field(default=None, repr=False)
    _mask: object = field(default=None, repr=False)

    @property
    def identical(self) -> bool:
        return self.size_mismatch is None and self.count == 0

    def __bool__(self) -> bool:
        return not self.identical

    def __str__(self) -> str:
        before, after = self.labels
        if self.size_mismatch is not None:
            (w1, h1), (w2, h2) = self.size_mismatch
            return f"the PNGs differ in size: {before} {w1}×{h1} px, {after} {w2}×{h2} px"
        if self.count == 0:
            return f"the PNGs are identical ({self.size[0]}×{self.size[1]} px)"
        total = self.size[0] * self.size[1]
        left, top, right, bottom = self.box or (0, 0, 0, 0)
        text = (f"{self.count} of {total} pixels differ ({100.0 * self.count / total:.3g}%), "
                f"in the box ({left},{top})-({right},{bottom}) px")
        if self.scale != 1:
            s = self.scale
            text += f" = ({left / s:g},{top / s:g})-({right / s:g},{bottom / s:g}) points"
        if self.nodes:
            shown = self.nodes[:12]
            more = f" and {len(self.nodes) - len(shown)} more" if len(self.nodes) > len(shown) else ""
            text += "; nodes holding them (deepest first): " + ", ".join(shown) + more
        return text

    def save_image(self, path: Union[str, Path]) -> Path:
        """Write the diff image: ``after`` faded to 25%, the changed pixels in
        red, their bounding box outlined in blue. For two sizes, the pictures
        side by side."""
        from PIL import Image, ImageDraw

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        before, after = self._before, self._after
        if self.size_mismatch is not None:
            width = before.size[0] + after.size[0] + 8
            height = max(before.size[1], after.size[1])
            canvas = Image.new("RGB", (width, height), (255, 0, 255))
            canvas.paste(before.convert("RGB"), (0, 0))
            canvas.paste(after.convert("RGB"), (before.size[0] + 8, 0))
            canvas.save(path)
            return path
        faded = Image.blend(Image.new("RGB", after.size, (255, 255, 255)), after.convert("RGB"), 0.25)
        if self._mask is not None and self.count:
            faded.paste(Image.new("RGB", after.size, (255, 0, 0)), (0, 0), self._mask)
        if self.box is not None:
            left, top, right, bottom = self.box
            ImageDraw.Draw(faded).rectangle((max(0, left - 2), max(0, top - 2), right + 1, bottom + 1),
                                            outline=(37, 99, 235))
        faded.save(path)
        return path


def pixel_diff(before: Picture, after: Picture, *, svg: Union[Picture, Sequence[Picture], None] = None,
               scale: Optional[float] = None, threshold: int = 0,
               labels: Tuple[str, str] = ("before", "after")) -> PixelDiff:
    """Compare two PNGs (bytes or paths) pixel by pixel.

    ``svg``: the screenshot(s) the PNGs were drawn from (one, or both), to
    name the nodes whose area holds changed pixels. ``scale``: pixels per
    point (default: the PNG's width over the SVG's). ``threshold``: a channel
    difference at or below it does not count (0: every difference counts)."""
    from PIL import Image, ImageChops

    one, two = _image(before), _image(after)
    result = PixelDiff(size=two.size, threshold=threshold, labels=labels, _before=one, _after=two)
    if one.size != two.size:
        result.size_mismatch = (one.size, two.size)
        return result
    difference = ImageChops.difference(one.convert("RGBA"), two.convert("RGBA"))
    # The largest channel difference of each pixel.
    channels = difference.split()
    largest = channels[0]
    for channel in channels[1:]:
        largest = ImageChops.lighter(largest, channel)
    mask = largest.point(lambda v: 255 if v > threshold else 0, mode="L")
    histogram = mask.histogram()
    result.count = histogram[255]
    result.box = mask.getbbox()
    result._mask = mask
    sources: List[Picture] = []
    if svg is not None:
        sources = list(svg) if isinstance(svg, (list, tuple)) else [svg]
    if sources:
        pictures = [svg_picture(s) for s in sources]
        if scale is None:
            width = _int(pictures[-1].width) or two.size[0]
            scale = two.size[0] / width
        result.scale = scale
        if result.count:
            result.nodes = _nodes_holding(mask, pictures, scale)
    elif scale is not None:
        result.scale = scale
    return result


def _nodes_holding(mask, pictures: Iterable[SvgPicture], scale: float) -> List[str]:
    """The ids of nodes whose area holds a changed pixel, deepest first (each once)."""
    found: Dict[str, int] = {}
    width, height = mask.size
    for picture in pictures:
        for node in picture.nodes.values():
            if node.parent is None or node.id in found:
                continue  # the background and the root hold everything
            area = node.area()
            if area is None:
                continue
            x, y, w, h = area
            left, top = max(0, int(x * scale)), max(0, int(y * scale))
            right, bottom = min(width, int((x + w) * scale + 0.999)), min(height, int((y + h) * scale + 0.999))
            if right <= left or bottom <= top:
                continue
            if mask.crop((left, top, right, bottom)).getbbox() is not None:
                found[node.id] = node.depth
    return sorted(found, key=lambda node_id: -found[node_id])


# -- the command line -----------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> int:
    """``python -m jcode_mobile.picture OLD NEW [--diff-image FILE] [--scale S]``:
    prints the structural and the pixel report; exit 1 when they differ."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m jcode_mobile.picture",
                                     description="Compare two screenshots (.svg or .png).")
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--scale", type=float, default=1.0, help="pixels per point when rendering an SVG (default 1)")
    parser.add_argument("--diff-image", type=Path, help="write the pixel diff image here")
    args = parser.parse_args(argv)
    differ = False
    svgs = [p for p in (args.old, args.new) if p.suffix.lower() == ".svg"]
    if len(svgs) == 2:
        report = structural_diff(args.old, args.new, labels=(str(args.old), str(args.new)))
        print(report)
        differ = differ or bool(report)

    def png_of(path: Path) -> bytes:
        if path.suffix.lower() == ".svg":
            return svg_to_png(path.read_bytes(), scale=args.scale)
        return path.read_bytes()

    pixels = pixel_diff(png_of(args.old), png_of(args.new), svg=[p.read_bytes() for p in svgs] or None,
                        labels=(str(args.old), str(args.new)))
    print(pixels)
    if pixels and args.diff_image is not None:
        print(f"diff image: {pixels.save_image(args.diff_image)}")
    return 1 if differ or pixels else 0


if __name__ == "__main__":
    raise SystemExit(main())
