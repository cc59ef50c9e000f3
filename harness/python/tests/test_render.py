"""render_screen lays out the tree's own words."""

from jcode_mobile import App
from jcode_mobile.render import render_screen


def render(scenario: str, root_id=None) -> str:
    with App({"scenario": scenario}) as app:
        return render_screen(app.tree(), root_id)


def test_onboarding_screen():
    assert render("onboarding").splitlines() == [
        "# Connect to jcode",
        "  ## Connect to jcode",
        "  Run `jcode pair` on your computer, then scan its QR code or enter the details it shows.",
        "  [Scan QR code]",
        "  Host: (my-computer.local)",
        "  Port: (7643)",
        "  Pairing code: (6-digit code)",
        "  Device name: (My iPhone)",
        "  Working directory on the server: (/home/you/project)",
        "  [Pair]",
        "  [Check server] (disabled)",
    ]


def test_filled_form_and_error_banner():
    text = render("pairing_invalid_code")
    lines = text.splitlines()
    assert "  ! Invalid or expired pairing code" in lines
    assert "    [Dismiss]" in lines
    assert "  Host: devbox.local" in lines
    assert "  [Check server]" in lines


def under(lines, parent):
    """The lines drawn under the last line ``parent`` (indented deeper than it)."""
    start = len(lines) - 1 - lines[::-1].index(parent)
    depth = len(parent) - len(parent.lstrip()) + 2
    out = []
    for line in lines[start + 1:]:
        if len(line) - len(line.lstrip()) < depth:
            break
        out.append(line)
    return out


def test_chat_messages_and_tool_cards():
    lines = render("tool_failed").splitlines()
    assert "  You: Run the tests" in lines
    assert "    Tool bash [Failed]" in lines
    assert "      ! Error: exit status 101" in lines
    # A reply shows as its markdown blocks under the speaker (a code span without its backticks).
    assert "    The tests failed to compile: x is undefined in src/lib.rs." in under(lines, "  jcode")
    assert not any("Retry now" in line for line in lines)  # hidden nodes are left out


def test_streaming_sheet_status_and_secure_field():
    lines = render("stdin_request_pending").splitlines()
    assert "  >> [sudo] password for dev:" in lines
    assert "    (Password)" in lines  # the field under the prompt has no label of its own
    assert "  ~ Waiting for you" in lines  # the run status: the agent waits for the person
    assert "  [Stop]" in lines
    streaming = under(render("chat_streaming").splitlines(), "  jcode (typing)")
    assert streaming[0].startswith("    (thought) ")  # its reasoning, then its text
    assert any(line.startswith("    The build has two stages.") for line in streaming)


def test_status_banner_and_subtree():
    assert "  ~ Connection lost, retrying in 1 s (attempt 1)" in render("network_reconnect").splitlines()
    only = render("offline_queued_message", "chat.messages").splitlines()
    assert only[0] == "You: Why does test_reconnect fail on CI?"
    assert only[-1] == "You (waiting to send): Run the tests when you're back online"
    assert render("onboarding", "no.such.node") == ""


def test_layout_of_a_handmade_tree():
    tree = {"ok": True, "revision": 1, "tree": {
        "id": "root", "role": "screen", "label": "T", "visible": True, "children": [
            {"id": "g", "role": "group", "label": "", "visible": True, "children": [
                {"id": "f", "role": "text_field", "label": "Name", "value": "", "placeholder": "you",
                 "focused": True, "visible": True, "children": []},
                {"id": "m", "role": "message", "label": "jcode", "value": "line one\nline two", "visible": True,
                 "children": []},
                {"id": "h", "role": "button", "label": "Hidden", "visible": False, "children": []},
            ]},
        ]}}
    assert render_screen(tree).splitlines() == [
        "# T",
        "  Name: (you) *",
        "  jcode: line one",
        "    line two",
    ]


def test_the_transcript_nodes_of_a_handmade_tree():
    def node(node_id, role, *children, **fields):
        return {"id": node_id, "role": role, "label": "", "value": None, "visible": True,
                "children": list(children), **fields}

    md = "message.m2.md"
    message = node(
        "message.m2", "message",
        node("message.m2.reasoning", "reasoning", label="Thought for 2.0 s", expanded=False),
        node(f"{md}.0", "heading", value="Retrying", level=2),
        node(f"{md}.1", "paragraph", value="It retries on its own.",
             spans=[{"text": "It retries ", "styles": []}, {"text": "on its own", "styles": ["bold"]},
                    {"text": ".", "styles": []}]),
        node(f"{md}.2", "list",
             node(f"{md}.2.0", "list_item", label="•", value="check the server", checked=True),
             node(f"{md}.2.1", "list_item", label="•", value="tap Retry", checked=False),
             node(f"{md}.2.2", "list_item", label="•", value="or call it",
                  children=[node(f"{md}.2.2.0", "list", node(f"{md}.2.2.0.0", "list_item", label="1.", value="from C"),
                                 variant="ordered")]),
             variant="bullet"),
        node(f"{md}.3", "quote", node(f"{md}.3.0", "paragraph", value="Never past 30 s.")),
        node(f"{md}.4", "code_block", node(f"{md}.4.copy", "button", label="Copy"), value="let a = 1\nlet b = 2",
             language="swift"),
        node(f"{md}.5", "table",
             node(f"{md}.5.0", "table_row", node(f"{md}.5.0.0", "table_cell", value="Attempt"),
                  node(f"{md}.5.0.1", "table_cell", value="Delay"), variant="header"),
             node(f"{md}.5.1", "table_row", node(f"{md}.5.1.0", "table_cell", value="1"),
                  node(f"{md}.5.1.1", "table_cell", value="1 s"))),
        node(f"{md}.6", "divider"),
        node(f"{md}.7", "code_block", value="make", language=None, variant="open"),
        node("tool.m2.c1", "tool_call",
             node("tool.m2.c1.summary", "text", value="src/a.rs +1 −1"),
             node("tool.m2.c1.diff.0", "diff",
                  node("tool.m2.c1.diff.0.0", "diff_hunk",
                       node("tool.m2.c1.diff.0.0.0", "diff_line", value="old()", variant="removed"),
                       node("tool.m2.c1.diff.0.0.1", "diff_line", value="new()", variant="added"),
                       node("tool.m2.c1.diff.0.0.2", "diff_line", value="}", variant="context"),
                       label="@@ -1 +1 @@"),
                  label="src/a.rs", value="+1 −1", counts={"added": 1, "removed": 1}),
             label="edit", value="Done", expanded=True),
        label="jcode", value="## Retrying\n\nIt retries **on its own**.")
    assert render_screen(message).splitlines() == [
        "jcode",
        "  (thought) Thought for 2.0 s",
        "  ## Retrying",
        "  It retries on its own.",
        "  [x] check the server",
        "  [ ] tap Retry",
        "  • or call it",
        "    1. from C",
        "  >",
        "    Never past 30 s.",
        "  ```swift",
        "    let a = 1",
        "    let b = 2",
        "    ```",
        "    [Copy]",
        "  | Attempt | Delay |",
        "  | 1 | 1 s |",
        "  ---",
        "  ```",
        "    make",
        "  Tool edit [Done]",
        "    src/a.rs +1 −1",
        "    diff src/a.rs +1 −1",
        "      @@ -1 +1 @@",
        "        - old()",
        "        + new()",
        "          }",
    ]
    opened = dict(message["children"][0], expanded=True, value="Read the notes.")
    assert render_screen(opened).splitlines() == ["(thought) Thought for 2.0 s: Read the notes."]
