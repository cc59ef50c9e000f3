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


def test_chat_messages_and_tool_cards():
    lines = render("tool_failed").splitlines()
    assert "  You: Run the tests" in lines
    assert "    Tool bash [Failed]" in lines
    assert "      ! Error: exit status 101" in lines
    assert "  jcode: The tests failed to compile: `x` is undefined in src/lib.rs." in lines
    assert not any("Retry now" in line for line in lines)  # hidden nodes are left out


def test_streaming_sheet_status_and_secure_field():
    lines = render("stdin_request_pending").splitlines()
    assert "  >> [sudo] password for dev:" in lines
    assert "    (Password)" in lines  # the field under the prompt has no label of its own
    assert "  ~ jcode is working…" in lines
    assert "  [Stop]" in lines
    streaming = render("chat_streaming")
    assert "jcode (typing): The build has two stages." in streaming


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
