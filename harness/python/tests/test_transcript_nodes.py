"""The transcript's nodes through the Python binding (docs/ABI.md, "The
transcript's nodes"): tool cards open and close (``set_expanded``, a tap) and
the state remembers it; ``copy`` answers ``copy_to_clipboard`` with a
message's text or a code block's code, and a host puts it on the clipboard;
a markdown reply streamed in small deltas over a real socket keeps a tree
mirror equal to the tree after every delta, its closed blocks unchanged and
its code block "open" until its fence closes; an edit's card shows a diff;
the runtime schema holds every new role and field. Each test bounds its own
run time; servers listen on loopback, on a free port. No test asserts bounds
(the layout is another helper's)."""

import copy
import json
from typing import Any, List, Optional, Tuple

import pytest

from jcode_mobile import App, find_node, iter_nodes
from jcode_mobile.fake_gateway import FakeJcodeServer, Host, Reply
from jcode_mobile.gateway import RunningGateway
from jcode_mobile.host import BackgroundHost, VirtualClock
from jcode_mobile.schema import validator
from jcode_mobile.tree_mirror import TreeMirror, TreeMismatch

from helpers import WORKING_DIR

TEST_DEADLINE_S = 60
pytestmark = pytest.mark.timeout(TEST_DEADLINE_S)  # pytest-timeout fails a test still running then
CODE = "315724"
HISTORY = [
    {"role": "user", "content": "How do I retry?"},
    {"role": "assistant", "content": "Tap **Retry**."},
]
#: The roles the transcript's nodes added to the tree.
NEW_ROLES = {
    "paragraph", "heading", "list", "list_item", "quote", "code_block", "table", "table_row", "table_cell", "divider",
    "diff", "diff_hunk", "diff_line", "reasoning",
}
CODE_TEXT = 'app.dispatch(["type": "retry_connection"])'
#: A reply in markdown with every block: a heading, styled text, a task list, fenced code, a table, a quote, a divider.
MARKDOWN = (
    "## Retrying the connection\n\n"
    "The client retries **on its own** with _exponential_ backoff; see [the notes](https://example.com/n).\n\n"
    "- [x] check the server is up\n- [ ] tap **Retry**\n- or call `retry_connection`\n\n"
    f"```swift\n{CODE_TEXT}\nlet delay = 2\n```\n\n"
    "| Attempt | Delay |\n|:--|--:|\n| 1 | 1 s |\n| 2 | 2 s |\n\n"
    "---\n\n"
    "> The delay never passes ~~60 s~~ 30 s."
)



# -- helpers ----------------------------------------------------------------------------------


def server_event(app: App, event: dict) -> dict:
    """One server event over the app's WebSocket."""
    return app.platform_event({"type": "websocket_event", "event": event})


def chunks(text: str, size: int) -> List[str]:
    return [text[k:k + size] for k in range(0, len(text), size)]


def child_ids(node: dict) -> List[str]:
    return [c["id"] for c in node["children"]]


def without_bounds(node: dict) -> dict:
    """The node and its subtree without ``bounds`` (the layout may move a block it does not change)."""
    out = {k: v for k, v in node.items() if k not in ("bounds", "children")}
    out["children"] = [without_bounds(c) for c in node["children"]]
    return out


def blocks(message: dict) -> List[dict]:
    """A message's markdown blocks (its children ``<id>.md.<k>``)."""
    return [c for c in message["children"] if c["id"].startswith(message["id"] + ".md.")]


def streamed_reply(app: App, text: str, *, size: int = 9, reasoning: Optional[str] = None) -> str:
    """Sends a message and streams ``text`` as the reply in deltas of ``size`` characters; returns the row's id."""
    app.dispatch({"type": "send_message", "text": "How do I retry the connection?"})
    if reasoning:
        server_event(app, {"type": "reasoning_delta", "text": reasoning})
        server_event(app, {"type": "reasoning_done", "duration_secs": 2.0})
    for part in chunks(text, size):
        server_event(app, {"type": "text_delta", "text": part})
    server_event(app, {"type": "message_end"})
    entry = app.state()["transcript"][-1]
    assert entry["text"] == text
    return f"message.{entry['id']}"


def copied(report: dict) -> List[str]:
    return [e["text"] for e in report["effects"] if e["type"] == "copy_to_clipboard"]


def last_notes(app: App) -> List[str]:
    return app.logs(1)["entries"][-1]["notes"]


# -- (a) tool cards open and close --------------------------------------------------------------


def test_set_expanded_and_a_tap_open_and_close_a_tool_card_and_the_state_remembers_it():
    with App({"scenario": "code_edit_review"}) as app:
        # The scenario opened the edit's card; the others show closed, their summary only.
        assert app.state()["expanded_nodes"] == [{"node_id": "tool.m5.call_edit", "expanded": True}]
        edit = find_node(app.tree(), "tool.m5.call_edit")
        assert edit["role"] == "tool_call" and edit["expanded"] is True
        card = find_node(app.tree(), "tool.m5.call_read")
        assert card["role"] == "tool_call" and card["label"] == "read"
        assert card["expanded"] is False and "tap" in card["supported_actions"]
        assert "tool.m5.call_read.output" not in child_ids(card)

        app.actions.set_expanded(node_id="tool.m5.call_read", expanded=True)
        card = find_node(app.tree(), "tool.m5.call_read")
        assert card["expanded"] is True
        assert find_node(card, "tool.m5.call_read.output")["value"] == "1\tpub fn connect() {\n2\t    retry(500);\n3\t}"
        assert app.state()["expanded_nodes"] == [
            {"node_id": "tool.m5.call_edit", "expanded": True},
            {"node_id": "tool.m5.call_read", "expanded": True},
        ]

        # A tap toggles it; the later choice replaces the earlier one, the latest last.
        app.actions.tap_node(node_id="tool.m5.call_read")
        card = find_node(app.tree(), "tool.m5.call_read")
        assert card["expanded"] is False and "tool.m5.call_read.output" not in child_ids(card)
        app.actions.tap_node(node_id="tool.m5.call_edit")
        assert find_node(app.tree(), "tool.m5.call_edit")["expanded"] is False
        assert app.state()["expanded_nodes"] == [
            {"node_id": "tool.m5.call_read", "expanded": False},
            {"node_id": "tool.m5.call_edit", "expanded": False},
        ]

        # An id no node has is remembered like any other (it may be a row not built yet) and changes nothing shown.
        tree = app.tree()
        app.actions.set_expanded(node_id="tool.m99.nothing", expanded=True)
        assert app.tree() == tree
        assert app.state()["expanded_nodes"][-1] == {"node_id": "tool.m99.nothing", "expanded": True}


def test_a_long_output_is_folded_past_twelve_lines_until_show_all():
    output = "\n".join(f"line {k}" for k in range(1, 31))
    with App({"scenario": "connected_chat"}) as app:
        app.dispatch({"type": "send_message", "text": "Run it"})
        for event in [
            {"type": "tool_start", "id": "call_long", "name": "bash"},
            {"type": "tool_input", "delta": json.dumps({"command": "seq 30"})},
            {"type": "tool_exec", "id": "call_long", "name": "bash"},
            {"type": "tool_done", "id": "call_long", "name": "bash", "output": output},
        ]:
            server_event(app, event)
        card = next(n for n in iter_nodes(app.tree()) if n["role"] == "tool_call" and n["id"].endswith(".call_long"))
        app.actions.set_expanded(node_id=card["id"], expanded=True)
        folded = find_node(app.tree(), card["id"] + ".output")
        assert folded["value"] == "\n".join(f"line {k}" for k in range(1, 13))
        assert folded["expanded"] is False
        more = find_node(folded, card["id"] + ".output.more")
        assert more["role"] == "button" and more["label"] == "Show all 30 lines"

        app.actions.tap_node(node_id=more["id"])
        shown = find_node(app.tree(), card["id"] + ".output")
        assert shown["value"] == output and shown["expanded"] is True
        assert find_node(shown, more["id"])["label"] == "Show less"


def test_a_reply_past_4096_nodes_shows_its_start_until_show_the_whole_reply():
    # A table of 1 400 rows of two cells: 4 204 nodes. Shown: the table, its header and 1 364 rows (4 096).
    text = "| File | Lines |\n|:--|--:|\n" + "".join(f"| src/module_{k}.py | {k * 7} |\n" for k in range(1, 1401))
    with App({"scenario": "connected_chat"}) as app:
        row_id = streamed_reply(app, text, size=4096)
        message = find_node(app.tree(), row_id)
        table = blocks(message)[0]
        assert table["role"] == "table" and len(table["children"]) == 1365
        assert table["children"][-1]["children"][0]["value"] == "src/module_1364.py"
        more = find_node(message, row_id + ".more")
        assert more["role"] == "button" and more["label"] == "Show the whole reply"
        assert message["expanded"] is False
        # The whole text is still the message's: copy gives all of it.
        assert message["value"] == text
        assert copied(app.dispatch({"type": "copy", "node_id": row_id})) == [text]

        app.actions.tap_node(node_id=more["id"])
        message = find_node(app.tree(), row_id)
        assert len(blocks(message)[0]["children"]) == 1401 and message["expanded"] is True
        assert find_node(message, more["id"])["label"] == "Show less"
        assert app.state()["expanded_nodes"][-1] == {"node_id": row_id, "expanded": True}


def test_reasoning_closes_once_the_answer_comes_and_opens_with_set_expanded():
    with App({"scenario": "connected_chat"}) as app:
        row = streamed_reply(app, "It builds the library first.", reasoning="Looking at the Makefile")
        reasoning = find_node(app.tree(), row + ".reasoning")
        assert reasoning["role"] == "reasoning" and reasoning["label"] == "Thought for 2.0 s"
        assert reasoning["expanded"] is False and reasoning["value"] is None
        app.actions.set_expanded(node_id=row + ".reasoning", expanded=True)
        reasoning = find_node(app.tree(), row + ".reasoning")
        assert reasoning["expanded"] is True and reasoning["value"] == "Looking at the Makefile"


# -- (b) copy -----------------------------------------------------------------------------------


def test_copy_on_a_message_gives_its_text_and_an_unknown_node_is_a_note():
    with App({"scenario": "code_edit_review"}) as app:
        message = find_node(app.tree(), "message.m6")
        assert "copy" in message["supported_actions"]
        text = "Done: `connect` takes the delay, and the **12 tests** pass."
        assert message["value"] == text and message["accessibility_value"] is None

        report = app.actions.copy(node_id="message.m6")
        assert [{k: v for k, v in e.items() if k != "effect_id"} for e in report["effects"]] == [
            {"type": "copy_to_clipboard", "text": text}]

        # A person's message is copied as written too.
        assert copied(app.actions.copy(node_id="message.m4")) == ["Make the retry delay configurable"]

        for node_id in ["message.m99", "tool.m5.call_read", "chat.send", ""]:
            revision = app.revision
            report = app.actions.copy(node_id=node_id)
            assert report["effects"] == [], node_id
            assert app.revision == revision
            assert last_notes(app) == [f'copy: no node "{node_id}" with copy on this screen']


def test_the_in_memory_host_puts_what_is_copied_on_its_clipboard():
    host = Host(App({"scenario": "code_edit_review"}))
    host.dispatch({"type": "copy", "node_id": "message.m4"})
    host.dispatch({"type": "copy", "node_id": "message.m99"})
    assert host.clipboard == ["Make the retry delay configurable"]


def test_copy_on_a_code_block_gives_its_code_and_its_button_does_the_same():
    with App({"scenario": "connected_chat"}) as app:
        row = streamed_reply(app, MARKDOWN)
        code = next(n for n in iter_nodes(find_node(app.tree(), row)) if n["role"] == "code_block")
        assert code["value"] == f"{CODE_TEXT}\nlet delay = 2"
        assert code["language"] == "swift" and "variant" not in code
        assert code["supported_actions"] == ["copy"]
        (button,) = code["children"]
        assert button["id"] == code["id"] + ".copy" and button["role"] == "button" and button["label"] == "Copy"
        assert copied(app.actions.copy(node_id=code["id"])) == [code["value"]]
        assert copied(app.actions.tap_node(node_id=button["id"])) == [code["value"]]
        # The message copies its markdown as written.
        assert copied(app.actions.copy(node_id=row)) == [MARKDOWN]


# -- (c) a markdown reply streamed over a real socket ------------------------------------------------


class MirroredApp(App):
    """An app whose tree mirror is brought up to date from tree_changes after every call into the
    core (on the host's thread), compared with the tree, and the streamed reply's row kept."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.mirror = TreeMirror(self)
        self.mismatches: List[str] = []
        #: After every call: (the last entry's text, its row as the mirror has it) when it is the reply.
        self.rows: List[Tuple[str, dict]] = []
        self.ops: List[dict] = []

    def check(self, what: str) -> None:
        try:
            self.mirror.update()
        except TreeMismatch as mismatch:
            self.mismatches.append(f"after {what}: {mismatch}")
            return
        self.ops.extend(self.mirror.last_ops)
        if self.mirror.tree != self.tree():
            self.mismatches.append(f"after {what}: the mirror differs from the tree")
        transcript = self.state()["transcript"]
        if transcript and transcript[-1]["role"] == "assistant" and transcript[-1]["text"]:
            row = self.mirror.node(f"message.{transcript[-1]['id']}")
            if row is not None:
                self.rows.append((transcript[-1]["text"], copy.deepcopy(row)))

    def dispatch_raw(self, action):
        report = super().dispatch_raw(action)
        self.check(f"action {json.dumps(action)[:120]}")
        return report

    def platform_event_raw(self, event):
        report = super().platform_event_raw(event)
        self.check(f"event {json.dumps(event)[:120]}")
        return report


def fences(text: str) -> int:
    """How many fence lines (```…) the text has so far, the partial last line included."""
    return sum(1 for line in text.split("\n") if line.startswith("```"))


def test_a_markdown_reply_streamed_over_a_socket_keeps_the_mirror_equal_and_closed_blocks_unchanged():
    deltas = chunks(MARKDOWN, 7)
    fake = FakeJcodeServer(pair_code=CODE, history=HISTORY, other_sessions={},
                           replies=[Reply(text=MARKDOWN, chunks=deltas)])
    with RunningGateway(fake) as gateway:
        app = MirroredApp()
        host = BackgroundHost(app, clock=VirtualClock(), http_timeout=2.0, connect_timeout=2.0)
        try:
            for kind, value in [("set_host", "127.0.0.1"), ("set_port", str(gateway.port)), ("set_pair_code", CODE),
                                ("set_device_name", "Markdown phone"), ("set_working_dir", WORKING_DIR)]:
                host.dispatch({"type": kind, "value": value})
            host.dispatch({"type": "submit_pairing"})
            host.wait_for(lambda s: s["connection"]["phase"] == "connected" and s["session"]["history_loaded"],
                          timeout=5)
            main = gateway.fake.main_session
            host.dispatch({"type": "resume_session", "session_id": main})
            host.wait_for(lambda s: s["session"]["id"] == main and len(s["transcript"]) == len(HISTORY), timeout=5)
            assert host.settle(timeout=5)
            app.rows.clear()
            host.dispatch({"type": "send_message", "text": "How do I retry the connection?"})
            final = host.wait_for(lambda s: not s["session"]["is_processing"] and s["transcript"][-1]["text"] == MARKDOWN,
                                  timeout=10)
            assert host.settle(timeout=5)
            # The row's Copy button, through the host: the text lands on its clipboard.
            code_id = next(n["id"] for n in iter_nodes(host.tree()) if n["role"] == "code_block")
            host.dispatch({"type": "tap_node", "node_id": code_id + ".copy"})
            assert host.host.device.clipboard == [f"{CODE_TEXT}\nlet delay = 2"]
            assert host.errors == []
        finally:
            host.close()

    assert app.mismatches == []
    assert app.mirror.resyncs == 0
    assert final["transcript"][-1]["text"] == MARKDOWN
    # Every delta came as its own frame and was seen: each prefix of the reply was a state the mirror followed.
    texts = [text for text, _ in app.rows]
    prefix = ""
    for delta in deltas:
        prefix += delta
        assert prefix in texts, f"the reply's text never was {prefix!r}"
    assert any(op["op"] == "append" for op in app.ops), "the open block grows by appends"

    closed: dict = {}  # block id -> its node (without bounds) once a later block exists
    seen_open = False
    code_ids = set()
    for text, row in app.rows:
        shown = blocks(row)
        assert [b["id"] for b in shown] == [f"{row['id']}.md.{k}" for k in range(len(shown))]
        for block in shown[:-1]:
            node = without_bounds(block)
            if block["id"] in closed:
                assert closed[block["id"]] == node, f"closed block {block['id']} changed at {text!r}"
            closed[block["id"]] = node
        for block_id in closed:
            assert block_id in [b["id"] for b in shown], f"closed block {block_id} went away at {text!r}"
        codes = [b for b in shown if b["role"] == "code_block"]
        code_ids.update(b["id"] for b in codes)
        if fences(text) % 2 == 1:
            assert shown[-1]["role"] == "code_block", f"an unclosed fence is not the last block at {text!r}"
            assert shown[-1]["variant"] == "open", text
            assert all("variant" not in b for b in codes[:-1])
            seen_open = True
        else:
            assert all("variant" not in b for b in codes), f"a closed code block is still open at {text!r}"
    assert seen_open, "the deltas never showed an open code block"
    assert len(code_ids) == 1, f"the code block changed ids: {code_ids}"

    row = app.rows[-1][1]
    assert [b["role"] for b in blocks(row)] == ["heading", "paragraph", "list", "code_block", "table", "divider", "quote"]
    heading, paragraph, listing, code, table, divider, quote = blocks(row)
    assert heading["level"] == 2 and heading["value"] == "Retrying the connection"
    assert "".join(s["text"] for s in paragraph["spans"]) == paragraph["value"]
    assert {"text": "on its own", "styles": ["bold"]} in paragraph["spans"]
    assert {"text": "the notes", "styles": ["link"], "url": "https://example.com/n"} in paragraph["spans"]
    assert listing["variant"] == "bullet"
    assert [(i["role"], i.get("checked"), i["value"]) for i in listing["children"]] == [
        ("list_item", True, "check the server is up"), ("list_item", False, "tap Retry"),
        ("list_item", None, "or call retry_connection")]
    assert code["value"] == f"{CODE_TEXT}\nlet delay = 2" and code["language"] == "swift"
    assert [r["variant"] if "variant" in r else None for r in table["children"]] == ["header", None, None]
    assert [[c["value"] for c in r["children"]] for r in table["children"]] == [
        ["Attempt", "Delay"], ["1", "1 s"], ["2", "2 s"]]
    assert divider["children"] == []
    assert quote["children"][0]["role"] == "paragraph"
    assert quote["children"][0]["value"] == "The delay never passes 60 s 30 s."


# -- (d) an edit's diff ---------------------------------------------------------------------------


def test_an_edit_card_opened_shows_a_diff_with_counts_and_lines():
    with App({"scenario": "code_edit_review"}) as app:
        card = find_node(app.tree(), "tool.m5.call_edit")
        assert card["expanded"] is True
        summary = find_node(card, "tool.m5.call_edit.summary")
        assert summary["value"].startswith("src/connection.rs") and summary["value"].endswith("+2 −2")
        (diff,) = [c for c in card["children"] if c["role"] == "diff"]
        assert diff["id"] == "tool.m5.call_edit.diff.0"
        assert diff["label"] == "src/connection.rs" and diff["counts"] == {"added": 2, "removed": 2}
        lines = [line for hunk in diff["children"] if hunk["role"] == "diff_hunk" for line in hunk["children"]]
        assert all(line["role"] == "diff_line" for line in lines)
        assert [(line["variant"], line["value"]) for line in lines if line["variant"] != "context"] == [
            ("removed", "pub fn connect() {"), ("removed", "    retry(500);"),
            ("added", "pub fn connect(delay_ms: u64) {"), ("added", "    retry(delay_ms);")]
        assert {line["variant"] for line in lines} <= {"added", "removed", "context"}
        # Closed, the card keeps its summary and drops the diff.
        app.actions.set_expanded(node_id=card["id"], expanded=False)
        closed = find_node(app.tree(), card["id"])
        assert [c["role"] for c in closed["children"]] == ["text"]


# -- (e) the schema -------------------------------------------------------------------------------


def every_new_node() -> dict:
    """A hand-built node for each new role, with every optional field (ids as the core writes them)."""

    def node(node_id: str, role: str, *children: dict, **fields: Any) -> dict:
        base = {"id": node_id, "role": role, "label": "", "value": None, "placeholder": None, "visible": True,
                "enabled": True, "focused": False, "accessibility_label": "", "accessibility_value": None,
                "supported_actions": [], "bounds": {"x": 0, "y": 0, "width": 10, "height": 10},
                "children": list(children)}
        base.update(fields)
        return base

    md = "message.m2.md"
    return node(
        "message.m2", "message",
        node("message.m2.reasoning", "reasoning", label="Thought for 2.0 s", expanded=False, supported_actions=["tap"]),
        node(f"{md}.0", "heading", value="Title", level=1),
        node(f"{md}.1", "paragraph", value="A bold link",
             spans=[{"text": "A ", "styles": []}, {"text": "bold", "styles": ["bold", "italic"]},
                    {"text": " link", "styles": ["link", "code", "strikethrough"], "url": "https://example.com"}]),
        node(f"{md}.2", "list", node(f"{md}.2.0", "list_item", label="1.", value="done", checked=True), variant="ordered"),
        node(f"{md}.3", "quote", node(f"{md}.3.0", "paragraph", value="quoted")),
        node(f"{md}.4", "code_block", node(f"{md}.4.copy", "button", label="Copy", variant="secondary"),
             value="x = 1", language="python", variant="open", supported_actions=["copy"]),
        node(f"{md}.5", "table", node(f"{md}.5.0", "table_row", node(f"{md}.5.0.0", "table_cell", value="a",
                                                                      variant="right"), variant="header")),
        node(f"{md}.6", "divider"),
        node("tool.m2.c1", "tool_call",
             node("tool.m2.c1.diff.0", "diff",
                  node("tool.m2.c1.diff.0.0", "diff_hunk",
                       node("tool.m2.c1.diff.0.0.0", "diff_line", value="+x", variant="added"), label="@@ -1 +1 @@"),
                  label="a.py", value="+1 −0", counts={"added": 1, "removed": 0}, expanded=True),
             label="edit", value="Done", expanded=True, supported_actions=["tap"]),
        value="# Title", supported_actions=["copy"])


def test_the_schema_describes_every_new_role_and_field_and_refuses_wrong_ones():
    check = validator("#/$defs/tree_node")
    hand_built = every_new_node()
    check.validate(hand_built)
    assert NEW_ROLES <= {n["role"] for n in iter_nodes(hand_built)}

    def broken(node_id: str, **fields: Any) -> dict:
        tree = copy.deepcopy(hand_built)
        find_node(tree, node_id).update(fields)
        return tree

    for tree in [
        broken("message.m2.md.0", level=7),
        broken("message.m2.md.0", level="1"),
        broken("message.m2.md.1", spans=[{"text": "x", "styles": ["underline"]}]),
        broken("message.m2.md.1", spans=[{"text": "x"}]),
        broken("message.m2.md.2.0", checked="yes"),
        broken("message.m2.md.4", language=3),
        broken("tool.m2.c1", expanded="true"),
        broken("tool.m2.c1.diff.0", counts={"added": 1}),
        broken("tool.m2.c1.diff.0", counts={"added": -1, "removed": 0}),
        broken("message.m2", role="markdown"),
    ]:
        assert not check.is_valid(tree), json.dumps(tree)[:200]


def test_the_runtime_schema_validates_trees_holding_every_new_role():
    check = validator("#/$defs/tree_node")
    roles = set()
    with App({"scenario": "connected_chat"}) as app:
        row = streamed_reply(app, MARKDOWN, reasoning="Reading the lifecycle notes")
        app.actions.set_expanded(node_id=row + ".reasoning", expanded=True)
        tree = app.tree()
        check.validate(tree)
        roles |= {n["role"] for n in iter_nodes(tree)}
    with App({"scenario": "code_edit_review"}) as app:
        tree = app.tree()
        check.validate(tree)
        roles |= {n["role"] for n in iter_nodes(tree)}
    for scenario in ["markdown_reply"]:
        with App({"scenario": scenario}) as app:
            check.validate(app.tree())
    assert NEW_ROLES <= roles, f"never built: {sorted(NEW_ROLES - roles)}"
