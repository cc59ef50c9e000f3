"""Pictures of the screen and what is at a point of it (library 0.4.0):
``jcode_mobile_screenshot_svg``, ``jcode_mobile_hit_test``, the ``tap_xy``
and ``scroll_messages`` actions, through the binding.

The golden screens in tests/golden/screens/ are the SVG the core draws for a
few scenarios and the PNG cairosvg makes of it (scale 1, DejaVu Sans Mono).
Each screen drawn today must show the same nodes in the same places with the
same text (the structural diff is empty), the same SVG bytes, and the same
pixels. When the layout or the drawing changes on purpose, rewrite them with

    JCODE_UPDATE_GOLDENS=1 python3 -m pytest tests/test_screenshots.py

and look at the new PNGs before committing them. A failing comparison
writes the picture drawn today and a diff image (changed pixels in red over
a faded copy) to tests/output/screens/ (or $JCODE_SCREENSHOT_OUTPUT) and
names them in its message.
"""

import json
import math
import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typing import Optional

from jcode_mobile import App, JcodeMobileError, find_node, iter_nodes
from jcode_mobile.fake_gateway import Host, Reply
from jcode_mobile.picture import (font_problem, pixel_diff, png_size, renderer_versions, structural_diff, svg_nodes,
                                  svg_to_png)

from helpers import fill_pairing_form

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden" / "screens"
RENDERER = GOLDEN / "RENDERER.json"
OUTPUT = Path(os.environ.get("JCODE_SCREENSHOT_OUTPUT") or HERE / "output" / "screens")
UPDATE_GOLDENS = os.environ.get("JCODE_UPDATE_GOLDENS") == "1"
UPDATE_HINT = "JCODE_UPDATE_GOLDENS=1 python3 -m pytest tests/test_screenshots.py"

#: The golden screens: onboarding, a reply streaming in, a tool approval,
#: a stdin request, two errors (a chat banner, a refused pairing), a reply
#: in markdown, and a turn's tool cards (the edit's opened, the others
#: closed; then every card closed); a server that cannot read an approval
#: (the banner in plain words, then its details opened).
SCREENS = [
    "onboarding",
    "chat_streaming",
    "tool_approval_required",
    "stdin_request_pending",
    "model_switch_failed",
    "pairing_invalid_code",
    "markdown_reply",
    "code_edit_review",
    "tool_cards_collapsed",
    "approval_unsupported",
    "approval_unsupported_details",
    "sessions",
    "model_picker",
    "settings",
]
#: Screens that are a scenario after some taps: name → (scenario, what to do to the app).
DERIVED_SCREENS = {
    "tool_cards_collapsed": ("code_edit_review", lambda app: close_every_tool_card(app)),
    "approval_unsupported_details": ("approval_unsupported", lambda app: app.dispatch({"type": "tap_node", "node_id": "banner.error.more"})),
    "sessions": ("connected_chat", lambda app: app.dispatch({"type": "navigate", "screen": "sessions"})),
    "model_picker": ("connected_chat", lambda app: app.dispatch({"type": "navigate", "screen": "model_picker"})),
    "settings": ("connected_chat", lambda app: app.dispatch({"type": "navigate", "screen": "settings"})),
}
#: The screen sizes every screen is drawn at (points): a small phone, the
#: default (its goldens keep their plain names), a large one, and the
#: default on its side.
SIZES = [(320, 568), (390, 844), (430, 932), (844, 390)]
DEFAULT_SIZE = (390, 844)
#: Every golden picture: a screen at a size, named `screen` at the default
#: size and `screen@WIDTHxHEIGHT` at the others; and each screen at the
#: default size in the dark appearance, `screen@dark`.
SHOTS = [name if size == DEFAULT_SIZE else f"{name}@{size[0]}x{size[1]}" for name in SCREENS for size in SIZES] + [
    f"{name}@dark" for name in SCREENS]  # the default size in the dark appearance


def shot_size(shot: str):
    """The viewport of a golden picture, from its name."""
    if "@" not in shot or shot.endswith("@dark"):
        return DEFAULT_SIZE
    width, height = shot.split("@")[1].split("x")
    return int(width), int(height)
#: Pixels per point of the golden PNGs.
SCALE = 1


def close_every_tool_card(app):
    for node in iter_nodes(app.tree()):
        if node["role"] == "tool_call" and node.get("expanded"):
            app.actions.set_expanded(node_id=node["id"], expanded=False)


def screenshot(name: str, **options) -> str:
    """The SVG of a screen, or of a golden picture (`screen@WIDTHxHEIGHT`)."""
    svg, _ = drawn(name, **options)
    return svg


def drawn(shot: str, **options):
    """The SVG and the tree of a golden picture."""
    name = shot.split("@")[0]
    dark = shot.endswith("@dark")
    if "@" in shot and not dark:
        width, height = shot_size(shot)
        options = {"viewport": {"width": width, "height": height}, **options}
    scenario, prepare = DERIVED_SCREENS.get(name, (name, None))
    with App({"scenario": scenario, **options}) as app:
        if prepare is not None:
            prepare(app)
        if dark:
            app.platform_event({"type": "appearance", "mode": "dark"})
        return app.screenshot_svg(), app.tree()


def center(node: dict, tree: Optional[dict] = None):
    """The node's centre on the screen: a node in the message list is in the
    list's content coordinates (on the screen at the list's y minus its
    scroll offset, plus its own)."""
    b = node["bounds"]
    y = b["y"] + b["height"] / 2
    if tree is not None and node["id"].startswith(("message.", "tool.")):
        messages = find_node(tree, "chat.messages")
        y += messages["bounds"]["y"] - messages["scroll"]["offset"]
    return b["x"] + b["width"] / 2, y


@pytest.fixture(scope="module")
def font():
    """The PNG comparisons need the font the goldens were drawn with."""
    problem = font_problem()
    if problem is not None:
        pytest.fail(problem)


def write_output(name: str, svg: str, png: bytes = None):
    OUTPUT.mkdir(parents=True, exist_ok=True)
    (OUTPUT / f"{name}.actual.svg").write_text(svg, encoding="utf-8")
    if png is not None:
        (OUTPUT / f"{name}.actual.png").write_bytes(png)
    return OUTPUT


# -- the golden screens ------------------------------------------------------------------


@pytest.mark.parametrize("name", SHOTS)
def test_the_screen_drawn_today_is_its_golden_svg(name):
    svg = screenshot(name)
    path = GOLDEN / f"{name}.svg"
    if UPDATE_GOLDENS:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg, encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing; record it with: {UPDATE_HINT}"
    golden = path.read_text(encoding="utf-8")
    report = structural_diff(golden, svg, labels=(f"golden {path.name}", "today"))
    if report:
        out = write_output(name, svg)
        pytest.fail(f"{name}: the screen differs from its golden SVG.\n{report}\n"
                    f"today's picture: {out / (name + '.actual.svg')}\n"
                    f"If the change is intended, rewrite the goldens: {UPDATE_HINT}", pytrace=False)
    if svg != golden:  # same nodes, places and text: something the structural diff does not look at
        line = next(i for i, (a, b) in enumerate(zip(golden.splitlines() + [""], svg.splitlines() + [""]), 1) if a != b)
        pytest.fail(f"{name}: same nodes as the golden SVG, different bytes from line {line}:\n"
                    f"  golden: {golden.splitlines()[line - 1:line]}\n  today:  {svg.splitlines()[line - 1:line]}\n"
                    f"If the change is intended, rewrite the goldens: {UPDATE_HINT}", pytrace=False)


@pytest.mark.parametrize("name", SHOTS)
def test_the_screen_drawn_today_has_the_pixels_of_its_golden_png(name, font):
    svg = screenshot(name)
    png = svg_to_png(svg, scale=SCALE)
    path = GOLDEN / f"{name}.png"
    if UPDATE_GOLDENS:
        path.write_bytes(png)
        RENDERER.write_text(json.dumps({"scale": SCALE, **renderer_versions()}, indent=2) + "\n", encoding="utf-8")
        return
    assert path.exists(), f"{path} is missing; record it with: {UPDATE_HINT}"
    golden_svg = GOLDEN / f"{name}.svg"
    diff = pixel_diff(path.read_bytes(), png, svg=[golden_svg.read_bytes(), svg] if golden_svg.exists() else svg,
                      labels=(f"golden {path.name}", "today"))
    if diff:
        out = write_output(name, svg, png)
        image = diff.save_image(out / f"{name}.diff.png")
        hint = ""
        recorded = json.loads(RENDERER.read_text()) if RENDERER.exists() else {}
        here = {"scale": SCALE, **renderer_versions()}
        if recorded and recorded != here:
            changed = ", ".join(f"{k} {recorded.get(k)} → {here.get(k)}" for k in sorted(set(recorded) | set(here))
                                if recorded.get(k) != here.get(k))
            hint = (f"\nThe goldens were drawn with another renderer or font ({changed}): glyphs may be placed or "
                    f"antialiased differently. If the structural test of this screen passes, the layout is unchanged.")
        pytest.fail(f"{name}: {diff}\ndiff image: {image}\ntoday's picture: {out / (name + '.actual.png')}{hint}\n"
                    f"If the change is intended, rewrite the goldens: {UPDATE_HINT}", pytrace=False)


def test_every_screen_has_golden_pictures_and_every_golden_picture_a_screen():
    if UPDATE_GOLDENS:  # the tests above wrote the current ones: forget screens no longer listed
        for path in list(GOLDEN.glob("*.svg")) + list(GOLDEN.glob("*.png")):
            if path.stem not in SHOTS:
                path.unlink()
    for suffix in ("svg", "png"):
        assert sorted(p.stem for p in GOLDEN.glob(f"*.{suffix}")) == sorted(SHOTS), \
            f"golden .{suffix} files differ from the screens; record them with: {UPDATE_HINT}"
    assert RENDERER.exists(), f"{RENDERER} is missing; record it with: {UPDATE_HINT}"


def test_the_golden_pngs_are_the_size_of_the_screen():
    for name in SHOTS:
        width, height = shot_size(name)
        assert png_size(GOLDEN / f"{name}.png") == (width * SCALE, height * SCALE), name


def test_drawing_a_screen_twice_gives_the_same_bytes_and_pixels(font):
    first, second = screenshot("tool_approval_required"), screenshot("tool_approval_required")
    assert first == second
    assert not pixel_diff(svg_to_png(first, scale=2), svg_to_png(second, scale=2))


def test_a_changed_screen_gets_a_report_naming_its_nodes_and_a_diff_image(tmp_path, font):
    with App({"scenario": "connected_chat"}) as app:
        before = app.screenshot_svg()
        app.actions.set_draft(value="Run the tests")
        after = app.screenshot_svg()
    report = structural_diff(before, after)
    assert [n for n, _, _ in report.text_changed] == ["chat.draft"]
    assert [n for n, _ in report.style_changed] == ["chat.send"]  # the Send button turns blue
    assert not (report.added or report.removed or report.moved)
    text = str(report)
    assert "~ chat.draft text:" in text and "+ 'Run the tests'" in text
    assert "~ chat.send style: rect fill #f3f4f6 → #2563eb" in text
    diff = pixel_diff(svg_to_png(before), svg_to_png(after), svg=[before, after])
    assert diff.count > 0
    assert diff.nodes == ["chat.draft", "chat.send"]
    image = diff.save_image(tmp_path / "draft.diff.png")
    assert png_size(image) == (390, 844)
    assert f"{diff.count} of {390 * 844} pixels differ" in str(diff)


def test_the_structural_diff_reports_added_removed_and_moved_nodes():
    with App({"scenario": "connected_chat"}) as app:
        before = app.screenshot_svg()
        app.actions.load_scenario(scenario="chat_streaming")
        after = app.screenshot_svg()
    report = structural_diff(before, after)
    added = {n.id for n in report.added}
    assert {"chat.activity", "chat.interrupt"} <= added
    assert any(node_id == "chat.send" for node_id, _, _, _ in report.moved)  # the composer's row makes room for Stop
    assert "+ chat.activity (status) at (" in str(report)
    back = structural_diff(after, before)
    assert {n.id for n in back.removed} == added


def test_nodes_pushed_down_together_are_told_in_one_line():
    with App({"scenario": "connected_chat"}) as app:
        before = app.screenshot_svg()
        app.actions.load_scenario(scenario="model_switch_failed")  # the same chat under an error banner
        after = app.screenshot_svg()
    lines = str(structural_diff(before, after)).splitlines()
    assert lines[0].startswith("3 difference(s) between before and after")
    assert re.fullmatch(r"\+ banner\.error \(banner\) at \(.*\) in root: \"Couldn't switch model: unknown model\" "
                        r"\(with 2 node\(s\) inside\)", lines[1]), lines[1]  # its row of buttons and its Dismiss button
    assert re.fullmatch(r"~ chat\.header moved by \(0,\+\d+\): .* \(and 3 node\(s\) inside it, by the same offset\)",
                        lines[2]), lines[2]
    assert re.fullmatch(r"~ message\.m1, message\.m2, message\.m3 moved by \(0,\+\d+\) "
                        r"\(and 4 node\(s\) inside them, by the same offset\)", lines[3]), lines[3]
    assert len(lines) == 4


def test_the_picture_module_compares_two_files_from_the_command_line(tmp_path, capsys, font):
    from jcode_mobile.picture import main

    same = main([str(GOLDEN / "onboarding.svg"), str(GOLDEN / "onboarding.png")])
    assert (same, capsys.readouterr().out) == (0, "the PNGs are identical (390×844 px)\n")
    image = tmp_path / "diff.png"
    status = main([str(GOLDEN / "onboarding.svg"), str(GOLDEN / "pairing_invalid_code.svg"), "--diff-image", str(image)])
    out = capsys.readouterr().out
    assert status == 1
    assert "+ banner.error (banner) at (" in out
    assert f"diff image: {image}" in out
    assert png_size(image) == (390, 844)


def test_a_missing_font_is_named_with_the_package_that_provides_it(monkeypatch):
    from jcode_mobile import picture

    class NoFont:
        stdout = ""

    monkeypatch.setattr(picture.shutil, "which", lambda name: "/usr/bin/" + name)
    monkeypatch.setattr(picture.subprocess, "run", lambda *args, **kwargs: NoFont())
    problem = picture.font_problem()
    assert "'DejaVu Sans Mono' is not installed" in problem
    assert "apt-get install fonts-dejavu-core" in problem


# -- screenshots ---------------------------------------------------------------------------


def test_the_screenshot_answer_is_the_viewport_and_an_svg_with_a_group_per_visible_node():
    with App({"scenario": "connected_chat"}) as app:
        shot = app.screenshot()
        tree = app.tree()
        assert shot["revision"] == app.revision
    assert (shot["ok"], shot["format"], shot["width"], shot["height"]) == (True, "svg", 390, 844)
    root = ET.fromstring(shot["svg"])
    assert (root.get("width"), root.get("height")) == ("390", "844")
    drawn = svg_nodes(shot["svg"])
    # The background, the phone's status bar (a clock and a battery in the top safe area), the tree,
    # then the home indicator over the bottom safe area.
    assert list(drawn)[:3] == ["background", "status_bar", "root"]
    assert list(drawn)[-1] == "home_indicator"
    visible = [n["id"] for n in iter_nodes(tree, visible_only=True)
               if n["bounds"]["width"] > 0 and n["bounds"]["height"] > 0]
    assert [node_id for node_id in drawn if node_id not in ("background", "status_bar", "home_indicator")] == visible
    assert drawn["chat.send"].parent == "chat.composer"
    assert drawn["chat.send"].role == "button"
    b = find_node(tree, "chat.send")["bounds"]
    assert drawn["chat.send"].rect == (b["x"], b["y"], b["width"], b["height"])


def test_a_viewport_set_at_app_new_is_the_size_of_the_picture(font):
    svg = screenshot("onboarding", viewport={"width": 320, "height": 568})
    root = ET.fromstring(svg)
    assert (root.get("width"), root.get("height")) == ("320", "568")
    assert png_size(svg_to_png(svg, scale=2)) == (640, 1136)


def test_hit_test_and_screenshot_answers_are_checked_against_the_schema(answers_match_the_schema):
    with App({"scenario": "connected_chat"}) as app:
        app.hit_test(10, 10)
        app.screenshot()
    assert answers_match_the_schema.checked["jcode_mobile_hit_test"] >= 1
    assert answers_match_the_schema.checked["jcode_mobile_screenshot_svg"] >= 1


def test_an_older_library_without_the_functions_gets_a_clear_attribute_error():
    class Older:
        """The loaded library as 0.3.0 was: no hit_test, no screenshot_svg."""

        def __init__(self, lib):
            self._lib = lib

        def __getattr__(self, name):
            if name in ("jcode_mobile_hit_test", "jcode_mobile_screenshot_svg"):
                raise AttributeError(name)
            return getattr(self._lib, name)

    with App({"scenario": "connected_chat"}) as app:
        real = app._lib
        app._lib = Older(real)
        try:
            with pytest.raises(AttributeError, match=r"no jcode_mobile_hit_test \(it is older than 0\.4\.0\)"):
                app.hit_test(1, 1)
            with pytest.raises(AttributeError, match=r"no jcode_mobile_screenshot_svg \(it is older than 0\.4\.0\)"):
                app.screenshot_svg()
        finally:
            app._lib = real


# -- hit-testing ---------------------------------------------------------------------------


def test_hit_test_inside_the_send_button_finds_it_its_path_and_tap_target():
    with App({"scenario": "connected_chat"}) as app:
        send = find_node(app.tree(), "chat.send")
        hit = app.hit_test(*center(send))
    assert hit["node"]["id"] == "chat.send"
    assert hit["node"]["role"] == "button"
    assert hit["node"]["label"] == "Send"
    assert hit["node"]["bounds"] == send["bounds"]
    assert "children" not in hit["node"]
    assert hit["path"] == ["root", "chat.composer", "chat.send"]
    assert hit["tap_target"] == "chat.send"


def test_hit_test_in_a_message_finds_the_message_and_nothing_to_tap():
    with App({"scenario": "connected_chat"}) as app:
        tree = app.tree()
        hit = app.hit_test(*center(find_node(tree, "message.m1"), tree))
    assert hit["node"]["id"] == "message.m1"
    assert hit["path"] == ["root", "chat.messages", "message.m1"]
    assert hit["tap_target"] is None


def test_hit_test_finds_the_deepest_node_a_tool_card_holds():
    with App({"scenario": "connected_chat"}) as app:
        app.actions.set_expanded(node_id="tool.m2.call_grep", expanded=True)  # closed until opened
        tree = app.tree()
        hit = app.hit_test(*center(find_node(tree, "tool.m2.call_grep.output"), tree))
    assert hit["path"] == ["root", "chat.messages", "message.m2", "tool.m2.call_grep", "tool.m2.call_grep.output"]


@pytest.mark.parametrize("x, y", [(-1, 10), (10, -0.5), (390, 10), (10, 844), (1e9, 1e9)])
def test_hit_test_outside_the_viewport_finds_no_node(x, y):
    with App({"scenario": "connected_chat"}) as app:
        hit = app.hit_test(x, y)
    assert hit == {"ok": True, "revision": 0, "node": None, "path": [], "tap_target": None}


def test_hit_test_at_the_corners_inside_the_viewport_finds_the_root():
    with App({"scenario": "connected_chat"}) as app:
        for x, y in [(0, 0), (389.9, 843.9)]:
            hit = app.hit_test(x, y)
            assert (hit["node"]["id"], hit["path"], hit["tap_target"]) == ("root", ["root"], None)


@pytest.mark.parametrize("x, y, field", [(math.nan, 1, "x"), (1, math.nan, "y"), (math.inf, 1, "x"),
                                         (1, -math.inf, "y")])
def test_hit_test_of_a_point_that_is_not_a_finite_number_is_invalid_field(x, y, field):
    with App({"scenario": "connected_chat"}) as app:
        with pytest.raises(JcodeMobileError) as caught:
            app.hit_test(x, y)
        assert caught.value.code == "invalid_field"
        assert caught.value.field == field
        assert app.hit_test_raw(x, y)["ok"] is False


def test_hit_test_after_close_is_invalid_handle():
    app = App({"scenario": "connected_chat"})
    app.close()
    with pytest.raises(JcodeMobileError) as caught:
        app.hit_test(1, 1)
    assert caught.value.code == "invalid_handle"
    with pytest.raises(JcodeMobileError) as caught:
        app.screenshot_svg()
    assert caught.value.code == "invalid_handle"


# -- tap_xy ----------------------------------------------------------------------------------


def test_tap_xy_on_the_settings_button_opens_settings():
    with App({"scenario": "connected_chat"}) as app:
        x, y = center(find_node(app.tree(), "nav.settings"))
        app.actions.tap_xy(x=x, y=y)
        assert app.state()["screen"] == "settings"


def test_tap_xy_where_nothing_is_tappable_changes_nothing_and_says_why():
    with App({"scenario": "connected_chat"}) as app:
        before = app.state()
        x, y = center(find_node(app.tree(), "message.m1"))
        report = app.actions.tap_xy(x=x, y=y)
        assert report["effects"] == []
        assert app.state() == before
        notes = app.logs(1)["entries"][0]["notes"]
        assert any(note.startswith("tap_xy: nothing tappable at (") for note in notes), notes


def test_tap_xy_on_a_field_focuses_it():
    with App({"scenario": "onboarding"}) as app:
        field = next(n for n in iter_nodes(app.tree(), visible_only=True) if n["role"] == "text_field")
        app.actions.tap_xy(x=center(field)[0], y=center(field)[1])
        assert find_node(app.tree(), field["id"])["focused"] is True


# -- a long conversation, scrolled -----------------------------------------------------------

EXCHANGES = 12


@pytest.fixture(scope="module")
def long_chat():
    """A chat of 12 messages and 12 replies through the in-memory fake server."""
    host = Host()
    fill_pairing_form(host)
    host.dispatch({"type": "submit_pairing"})
    for i in range(1, EXCHANGES + 1):
        host.server.replies.append(Reply(text=f"Reply {i}"))
        host.dispatch({"type": "send_message", "text": f"Message {i}"})
    app = host.app
    assert app.state()["screen"] == "chat"
    assert len(app.state()["transcript"]) == 2 * EXCHANGES
    yield app
    app.close()


def message_ids(svg: str):
    """The message rows drawn (not the blocks of their markdown, ``message.m3.md.0``)."""
    return [node_id for node_id in svg_nodes(svg) if re.fullmatch(r"message\.m\d+", node_id)]


def list_frame(app):
    messages = find_node(app.tree(), "chat.messages")
    return messages["bounds"], messages["scroll"]


def test_a_long_conversation_follows_its_end_where_hit_test_finds_the_last_message(long_chat):
    long_chat.actions.scroll_messages(offset=10**9)  # past the end: follow the newest
    frame, scroll = list_frame(long_chat)
    assert scroll["offset"] == scroll["max_offset"] > 0
    # the lowest message on screen: the first one up from the list's bottom edge
    bottom = frame["y"] + frame["height"]
    hit = next(h for h in (long_chat.hit_test(frame["x"] + frame["width"] / 2, bottom - d) for d in range(1, 40))
               if h["node"]["id"] != "chat.messages")
    assert hit["node"]["id"] == "message.m24"
    assert hit["node"]["value"] == f"Reply {EXCHANGES}"
    assert hit["path"] == ["root", "chat.messages", "message.m24"]


def test_scrolled_to_the_top_hit_test_finds_the_first_message(long_chat):
    long_chat.actions.scroll_messages(offset=0)
    frame, scroll = list_frame(long_chat)
    assert scroll["offset"] == 0
    hit = long_chat.hit_test(frame["x"] + frame["width"] / 2, frame["y"])
    assert hit["node"]["id"] == "message.m1"
    assert hit["node"]["value"] == "Message 1"
    assert hit["path"] == ["root", "chat.messages", "message.m1"]
    long_chat.actions.scroll_messages(offset=10**9)


def test_a_message_scrolled_out_of_the_list_is_never_hit(long_chat):
    long_chat.actions.scroll_messages(offset=10**9)
    frame, _ = list_frame(long_chat)
    tree = long_chat.tree()
    # A message that lies partly above the list's top, under the header.
    above = [m for m in find_node(tree, "chat.messages")["children"]
             if m["bounds"]["y"] < frame["y"] < m["bounds"]["y"] + m["bounds"]["height"]]
    assert above, "no message straddles the list's top edge"
    x, y = frame["x"] + frame["width"] / 2, frame["y"] - 1
    assert above[0]["bounds"]["y"] <= y  # the message's bounds hold the point …
    hit = long_chat.hit_test(x, y)
    assert not hit["node"]["id"].startswith("message.")  # … but it is outside the list's frame
    assert "chat.messages" not in hit["path"]


def test_a_screenshot_of_a_long_conversation_draws_only_the_visible_messages(long_chat):
    long_chat.actions.scroll_messages(offset=0)
    top = long_chat.screenshot_svg()
    long_chat.actions.scroll_messages(offset=10**9)
    end = long_chat.screenshot_svg()
    frame, scroll = list_frame(long_chat)
    # The rows are in the list's content coordinates: the viewport shows offset … offset + height.
    shown_from, shown_to = scroll["offset"], scroll["offset"] + frame["height"]
    on_screen = [m["id"] for m in find_node(long_chat.tree(), "chat.messages")["children"]
                 if m["bounds"]["y"] < shown_to and m["bounds"]["y"] + m["bounds"]["height"] > shown_from]
    assert message_ids(end) == on_screen
    assert "message.m1" in message_ids(top) and "message.m24" not in message_ids(top)
    assert "message.m24" in message_ids(end) and "message.m1" not in message_ids(end)
    assert len(message_ids(end)) < 2 * EXCHANGES
    assert "Message 1<" not in end and "Reply 12<" in end
    assert re.search(r'data-scroll-offset="0"', top)
    # the picture's size follows the screen, not the conversation's length
    assert abs(len(top) - len(end)) < len(top) // 4


def test_scroll_messages_off_the_chat_screen_changes_nothing():
    with App({"scenario": "onboarding"}) as app:
        before = app.state()
        app.actions.scroll_messages(offset=0)
        assert app.state() == before


# -- every golden at every size: on the screen, reachable, readable ----------------------------------


def _wcag_luminance(color: str) -> float:
    red, green, blue = (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in (red, green, blue)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two #rrggbb colours (1 to 21)."""
    light, dark = sorted((_wcag_luminance(a), _wcag_luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_the_contrast_ratio_is_wcags():
    assert round(contrast_ratio("#000000", "#ffffff"), 2) == 21.0
    assert round(contrast_ratio("#6b7280", "#ffffff"), 2) == 4.83
    assert round(contrast_ratio("#9ca3af", "#ffffff"), 2) == 2.54


def nodes_with_frames(tree: dict, width: int, height: int):
    """Every visible node that takes room, with the frame it must lie in: the
    viewport, or inside a scrolling node (the message list, a screen taller
    than the viewport) that node's content, from 0 to its content height."""
    def walk(node, frame):
        b = node["bounds"]
        if node["visible"] and (b["width"] > 0 or b["height"] > 0):
            yield node, frame
        scroll = node.get("scroll")
        inner = (b["x"], 0, b["x"] + b["width"], scroll["content_height"]) if scroll else frame
        for child in node["children"]:
            yield from walk(child, inner)
    yield from walk(tree, (0, 0, width, height))


@pytest.mark.parametrize("name", SHOTS)
def test_every_visible_node_lies_on_the_screen_or_in_its_scrolling_container(name):
    _, tree = drawn(name)
    width, height = shot_size(name)
    outside = []
    for node, (left, top, right, bottom) in nodes_with_frames(tree, width, height):
        b = node["bounds"]
        if b["x"] < left or b["y"] < top or b["x"] + b["width"] > right or b["y"] + b["height"] > bottom:
            outside.append((node["id"], b))
    assert outside == []


@pytest.mark.parametrize("name", SHOTS)
def test_no_two_nodes_side_by_side_in_the_tree_overlap(name):
    _, tree = drawn(name)
    overlapping = []
    for node, _ in nodes_with_frames(tree, *shot_size(name)):
        shown = [c for c in node["children"] if c["visible"] and c["bounds"]["width"] > 0 and c["bounds"]["height"] > 0]
        for k, a in enumerate(shown):
            for b in shown[k + 1:]:
                p, q = a["bounds"], b["bounds"]
                if p["x"] < q["x"] + q["width"] and q["x"] < p["x"] + p["width"] \
                        and p["y"] < q["y"] + q["height"] and q["y"] < p["y"] + p["height"]:
                    overlapping.append((a["id"], b["id"]))
    assert overlapping == []


@pytest.mark.parametrize("name", SHOTS)
def test_every_control_is_at_least_a_44_point_touch_target(name):
    _, tree = drawn(name)
    small = [(node["id"], node["bounds"]["width"], node["bounds"]["height"])
             for node, _ in nodes_with_frames(tree, *shot_size(name))
             if "tap" in node["supported_actions"] and (node["bounds"]["width"] < 44 or node["bounds"]["height"] < 44)]
    assert small == []


@pytest.mark.parametrize("name", SHOTS)
def test_spacing_is_on_a_4_point_grid(name):
    """A child's inset from the nearer side of its parent, the gap between two
    nodes one under the other, and the gap between two side by side (up to
    24 points: more is a row's free room, not spacing) are multiples of 4.
    A screen's own nodes are inset from its safe area's sides (on its side,
    47 points of the notch's room at each: docs/SCREENSHOTS.md)."""
    _, tree = drawn(name)
    width, height = shot_size(name)
    off = []
    for node, _ in nodes_with_frames(tree, width, height):
        b = dict(node["bounds"])
        if node is tree and width > height:
            b["x"], b["width"] = b["x"] + 47, b["width"] - 2 * 47
        shown = [c for c in node["children"] if c["visible"] and (c["bounds"]["width"] > 0 or c["bounds"]["height"] > 0)]
        if node.get("scroll") is None:
            for child in shown:
                c = child["bounds"]
                left, right = c["x"] - b["x"], b["x"] + b["width"] - c["x"] - c["width"]
                if left % 4 and right % 4:
                    off.append((child["id"], "inset", left, right))
        for a, c in zip(shown, shown[1:]):
            above, below = a["bounds"], c["bounds"]
            if below["y"] >= above["y"] + above["height"] and (below["y"] - above["y"] - above["height"]) % 4:
                off.append((c["id"], "gap", below["y"] - above["y"] - above["height"]))
            elif below["y"] == above["y"] and 0 < below["x"] - above["x"] - above["width"] <= 24 \
                    and (below["x"] - above["x"] - above["width"]) % 4:
                off.append((c["id"], "gap beside", below["x"] - above["x"] - above["width"]))
    assert off == []


SVG = "{http://www.w3.org/2000/svg}"


def text_insets(svg: str, tree: dict):
    """Each text the core drew at the start or the end of a node's box: its
    words and how far it sits from that side of its node's box (a text drawn
    centred, or inside a run of styled words, is left out)."""
    bounds = {}

    def index(node):
        bounds[node["id"]] = node["bounds"]
        for child in node["children"]:
            index(child)
    index(tree)
    found = []

    def walk(element, node_id, dx):
        for child in element:
            tag = child.tag.replace(SVG, "")
            if tag == "g":
                x = dx
                move = child.get("transform")
                if move and move.startswith("translate("):
                    x = dx + float(move[len("translate("):-1].split()[0])
                walk(child, child.get("data-id", node_id), x)
            elif tag == "text" and node_id in bounds:
                b, x = bounds[node_id], float(child.get("x")) + dx
                words = child.text or "".join(t.text or "" for t in child)
                anchor = child.get("text-anchor", "start")
                if anchor == "start":
                    found.append((node_id, words, x - b["x"]))
                elif anchor == "end":
                    found.append((node_id, words, b["x"] + b["width"] - x))
    walk(ET.fromstring(svg), None, 0.0)
    return found


@pytest.mark.parametrize("name", SHOTS)
def test_every_text_sits_inside_its_box_on_the_4_point_grid(name):
    """The padding between a box's side and its words (and a list marker's
    gutter, a diff line's sign column) is a multiple of 4 points."""
    svg, tree = drawn(name)
    insets = text_insets(svg, tree)
    assert insets, "the screen has text in boxes"
    off = [(node_id, words, inset) for node_id, words, inset in insets if inset % 4]
    assert off == []


def texts_on_their_backgrounds(svg: str):
    """Each text of an SVG the core drew, its colours (its own and its runs')
    and its size, with the colour of the last filled box drawn under its
    first letter (white when none): (text, colour, background, font size)."""
    found = []

    def walk(element, boxes, dx, dy):
        for child in element:
            tag = child.tag.replace(SVG, "")
            if tag == "g":
                x, y = dx, dy
                move = child.get("transform")
                if move and move.startswith("translate("):
                    parts = move[len("translate("):-1].split()
                    x, y = dx + float(parts[0]), dy + (float(parts[1]) if len(parts) > 1 else 0)
                walk(child, boxes, x, y)
            elif tag == "rect" and (child.get("fill") or "none").startswith("#"):
                boxes.append((float(child.get("x", 0)) + dx, float(child.get("y", 0)) + dy,
                              float(child.get("width")), float(child.get("height")), child.get("fill")))
            elif tag == "text":
                x, y = float(child.get("x")) + dx, float(child.get("y")) + dy
                under = [f for (bx, by, bw, bh, f) in boxes if bx <= x + 1 <= bx + bw and by <= y - 4 <= by + bh]
                background = under[-1] if under else "#ffffff"
                size = float(child.get("font-size") or 13)
                words = child.text or "".join(t.text or "" for t in child)
                for colour in [child.get("fill")] + [t.get("fill") for t in child]:
                    if colour and colour.startswith("#"):
                        found.append((words, colour, background, size))
    walk(ET.fromstring(svg), [], 0.0, 0.0)
    return found


@pytest.mark.parametrize("name", SHOTS)
def test_every_text_has_the_contrast_wcag_asks_against_what_it_is_drawn_on(name):
    """4.5:1 for text, 3:1 for large text (18 points and more)."""
    svg, _ = drawn(name)
    texts = texts_on_their_backgrounds(svg)
    assert texts, "the screen has text"
    low = [(words, colour, background, round(contrast_ratio(colour, background), 2))
           for words, colour, background, size in texts
           if contrast_ratio(colour, background) < (3.0 if size >= 18 else 4.5)]
    assert low == []


@pytest.mark.parametrize("name", SHOTS)
def test_no_button_drawn_in_words_has_them_cut_short(name):
    """A button's words fit its box on the layout's grid (8 points a
    character, 8 of padding each side; an option's check mark takes 16 more),
    so the picture never ends them in "…"; an icon button shows its glyph."""
    svg, tree = drawn(name)
    cut = []
    for node, _ in nodes_with_frames(tree, *shot_size(name)):
        if node["role"] != "button" or node.get("icon"):
            continue
        room = (node["bounds"]["width"] - 16 - (16 if node.get("selected") is not None else 0)) // 8
        if len(node["label"]) > room:
            cut.append((node["id"], node["label"], room))
    assert cut == []
    assert not re.search(r'text-anchor="middle" xml:space="preserve">[^<]*…</text>', svg)
