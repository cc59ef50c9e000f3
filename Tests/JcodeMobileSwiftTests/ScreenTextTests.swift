import JcodeMobileSwift
import Testing

/// `ScreenText` draws a tree it is given, whatever the core's screens are.
@Suite struct ScreenTextTests {
    @Test func eachRoleHasItsMarkAndChildrenAreIndentedUnderTheirParent() {
        var field = SemanticNode("f.host", .textField, label: "Host", value: "", placeholder: "my-computer.local")
        field.focused = true
        let tree = SemanticNode(
            "s", .screen, label: "Chat",
            children: [
                SemanticNode("h", .header, label: "Session", value: "jcode"),
                SemanticNode("t", .heading, label: "Today"),
                SemanticNode(
                    "l", .list,
                    children: [
                        SemanticNode("m1", .message, label: "You", value: "Run the tests"),
                        SemanticNode(
                            "m2", .message, label: "jcode", value: "Done.",
                            children: [SemanticNode("c1", .toolCall, label: "bash", value: "succeeded")]),
                    ]),
                SemanticNode("b", .banner, label: "Could not connect", value: "timed out"),
                SemanticNode("st", .status, label: "jcode is working…"),
                SemanticNode("n", .notice, label: "Model switched"),
                field,
                SemanticNode("p", .secureField, label: "Code", value: "••••••"),
                SemanticNode("send", .button, label: "Send", enabled: false),
                SemanticNode("stop", .button, label: "Stop", visible: false),
            ])

        #expect(
            ScreenText.render(tree) == """
                # Chat
                  Session — jcode
                  ## Today
                  You: Run the tests
                  jcode: Done.
                    tool bash [succeeded]
                  ! Could not connect: timed out
                  ~ jcode is working…
                  * Model switched
                  Host: (my-computer.local) *
                  Code: ••••••
                  [Send] (disabled)
                """)
    }

    @Test func aHiddenNodeHidesItsChildrenAndAMultilineValueStaysUnderItsNode() {
        let tree = SemanticNode(
            "s", .screen, label: "",
            children: [
                SemanticNode("g", .group, visible: false, children: [SemanticNode("x", .text, label: "secret")]),
                SemanticNode("m", .message, label: "jcode", value: "line one\nline two"),
            ])

        #expect(ScreenText.lines(tree) == ["jcode: line one", "  line two"])
    }
}

/// The transcript's nodes (docs/ABI.md, "The transcript's nodes"), built by
/// hand: each role's line, literal.
@Suite struct ScreenTextTranscriptTests {
    static func text(_ id: String, _ role: SemanticNode.Role, _ value: String) -> SemanticNode {
        SemanticNode(id, role, label: "", value: value)
    }

    static func item(_ id: String, _ marker: String, _ value: String, checked: Bool? = nil, children: [SemanticNode] = []) -> SemanticNode {
        var node = SemanticNode(id, .listItem, label: marker, value: value, children: children)
        node.checked = checked
        return node
    }

    static func codeBlock(_ id: String, _ code: String, language: String?, open: Bool = false) -> SemanticNode {
        var node = SemanticNode(
            id, .codeBlock, label: "", value: code, actions: ["copy"],
            children: [SemanticNode(id + ".copy", .button, label: "Copy")])
        node.language = language
        if open { node.variant = "open" }
        return node
    }

    @Test func aHeadingShowsOneMarkPerLevelAndItsText() {
        for (level, mark) in [(1, "#"), (2, "##"), (3, "###"), (6, "######")] {
            var heading = Self.text("message.m2.md.0", .heading, "Retrying the connection")
            heading.level = level
            #expect(ScreenText.lines(heading) == ["\(mark) Retrying the connection"])
        }
        // A heading without a level is a screen's section title (its label).
        #expect(ScreenText.lines(SemanticNode("t", .heading, label: "Today")) == ["## Today"])
    }

    @Test func aParagraphShowsItsValueWhateverItsSpans() {
        var paragraph = Self.text("message.m2.md.1", .paragraph, "The client retries on its own; see the notes.")
        paragraph.spans = [
            TextSpan("The client retries "), TextSpan("on its own", .bold), TextSpan("; see "),
            TextSpan("the notes", .link, url: "https://example.com/notes"), TextSpan("."),
        ]
        #expect(ScreenText.lines(paragraph) == ["The client retries on its own; see the notes."])
    }

    @Test func listItemsShowTheirMarkerOrCheckBoxAndANestedListIsIndented() {
        var bullets = SemanticNode(
            "message.m2.md.2", .list, label: "",
            children: [
                Self.item("message.m2.md.2.0", "•", "check the server is up", checked: true),
                Self.item("message.m2.md.2.1", "•", "tap Retry", checked: false),
                Self.item(
                    "message.m2.md.2.2", "•", "or call retry_connection",
                    children: [
                        {
                            var inner = SemanticNode(
                                "message.m2.md.2.2.0", .list, label: "",
                                children: [
                                    Self.item("message.m2.md.2.2.0.0", "1.", "from Swift"),
                                    Self.item("message.m2.md.2.2.0.1", "2.", "from C"),
                                ])
                            inner.variant = "ordered"
                            return inner
                        }()
                    ]),
            ])
        bullets.variant = "bullet"
        #expect(
            ScreenText.lines(bullets) == [
                "[x] check the server is up",
                "[ ] tap Retry",
                "• or call retry_connection",
                "  1. from Swift",
                "  2. from C",
            ])
    }

    @Test func aQuoteMarksItsBlocksWhichAreIndentedUnderIt() {
        let quote = SemanticNode(
            "message.m2.md.3", .quote, label: "",
            children: [Self.text("message.m2.md.3.0", .paragraph, "The delay never passes 30 s.")])
        #expect(ScreenText.lines(quote) == [">", "  The delay never passes 30 s."])
    }

    @Test func aCodeBlockShowsItsFenceLanguageCodeAndCopyButton() {
        let closed = Self.codeBlock("message.m2.md.4", "let a = 1\nlet b = 2", language: "swift")
        #expect(ScreenText.lines(closed) == ["```swift", "  let a = 1", "  let b = 2", "  ```", "  [Copy]"])
        let plain = Self.codeBlock("message.m2.md.4", "make test", language: nil)
        #expect(ScreenText.lines(plain) == ["```", "  make test", "  ```", "  [Copy]"])
    }

    @Test func anOpenCodeBlockHasNoClosingFenceYet() {
        let open = Self.codeBlock("message.m2.md.4", "app.dispatch(", language: "swift", open: true)
        #expect(ScreenText.lines(open) == ["```swift", "  app.dispatch(", "  [Copy]"])
    }

    @Test func aTableShowsARowPerLineItsCellsBetweenBars() {
        func row(_ r: Int, _ cells: [String], header: Bool = false) -> SemanticNode {
            var node = SemanticNode(
                "message.m2.md.5.\(r)", .tableRow, label: "",
                children: cells.enumerated().map { Self.text("message.m2.md.5.\(r).\($0.offset)", .tableCell, $0.element) })
            if header { node.variant = "header" }
            return node
        }
        let table = SemanticNode(
            "message.m2.md.5", .table, label: "",
            children: [row(0, ["Attempt", "Delay"], header: true), row(1, ["1", "1 s"]), row(2, ["2", ""])])
        #expect(ScreenText.lines(table) == ["| Attempt | Delay |", "| 1 | 1 s |", "| 2 |  |"])
    }

    @Test func aDividerIsThreeDashes() {
        #expect(ScreenText.lines(SemanticNode("message.m2.md.6", .divider, label: "")) == ["---"])
    }

    @Test func aMessageInMarkdownShowsItsBlocksNotItsRawText() {
        var heading = Self.text("message.m2.md.0", .heading, "Retrying")
        heading.level = 2
        let message = SemanticNode(
            "message.m2", .message, label: "jcode", value: "## Retrying\n\nIt retries **on its own**.",
            actions: ["copy"],
            children: [heading, Self.text("message.m2.md.1", .paragraph, "It retries on its own.")])
        #expect(ScreenText.lines(message) == ["jcode", "  ## Retrying", "  It retries on its own."])
        // Without blocks (a person's message) the text follows the speaker.
        let said = SemanticNode("message.m1", .message, label: "You", value: "How do I retry?", actions: ["copy"])
        #expect(ScreenText.lines(said) == ["You: How do I retry?"])
    }

    @Test func aToolCardOpenedOnAnEditShowsItsSummaryDiffAndFoldedOutput() {
        func line(_ n: Int, _ kind: String, _ text: String) -> SemanticNode {
            var node = Self.text("tool.m6.call_edit.diff.0.0.\(n)", .diffLine, text)
            node.variant = kind
            return node
        }
        var diff = SemanticNode(
            "tool.m6.call_edit.diff.0", .diff, label: "src/connection.rs", value: "+2 −2",
            children: [
                SemanticNode(
                    "tool.m6.call_edit.diff.0.0", .diffHunk, label: "@@ -1 +1 @@",
                    children: [
                        line(0, "removed", "pub fn connect() {"), line(1, "removed", "    retry(500);"),
                        line(2, "added", "pub fn connect(delay_ms: u64) {"), line(3, "added", "    retry(delay_ms);"),
                        line(4, "context", "}"),
                    ])
            ])
        diff.counts = SemanticNode.Counts(added: 2, removed: 2)
        var output = SemanticNode(
            "tool.m6.call_edit.output", .text, label: "Output", value: "line 1\nline 2",
            children: [SemanticNode("tool.m6.call_edit.output.more", .button, label: "Show all 30 lines")])
        output.expanded = false
        var card = SemanticNode(
            "tool.m6.call_edit", .toolCall, label: "edit", value: "succeeded",
            children: [Self.text("tool.m6.call_edit.summary", .text, "src/connection.rs +2 −2"), diff, output])
        card.expanded = true
        #expect(
            ScreenText.lines(card) == [
                "tool edit [succeeded]",
                "  src/connection.rs +2 −2",
                "  diff src/connection.rs +2 −2",
                "    @@ -1 +1 @@",
                "      - pub fn connect() {",
                "      -     retry(500);",
                "      + pub fn connect(delay_ms: u64) {",
                "      +     retry(delay_ms);",
                "        }",
                "  Output: line 1",
                "    line 2",
                "    [Show all 30 lines]",
            ])
    }

    @Test func aClosedToolCardShowsItsSummaryOnly() {
        var card = SemanticNode(
            "tool.m6.call_test", .toolCall, label: "bash", value: "succeeded",
            children: [Self.text("tool.m6.call_test.summary", .text, "cargo test -p connection")])
        card.expanded = false
        #expect(ScreenText.lines(card) == ["tool bash [succeeded]", "  cargo test -p connection"])
    }

    @Test func reasoningShowsItsTitleAndItsTextOnlyWhenOpen() {
        var closed = SemanticNode("message.m6.reasoning", .reasoning, label: "Thought for 3s")
        closed.expanded = false
        #expect(ScreenText.lines(closed) == ["(thought) Thought for 3s"])
        var open = SemanticNode("message.m6.reasoning", .reasoning, label: "Thought for 3s", value: "Read the file first.")
        open.expanded = true
        #expect(ScreenText.lines(open) == ["(thought) Thought for 3s: Read the file first."])
    }

    @Test func aButtonsVariantDoesNotChangeItsLine() {
        for variant in ["primary", "secondary", "destructive"] {
            var button = SemanticNode("permission.r1.deny", .button, label: "Deny")
            button.variant = variant
            #expect(ScreenText.lines(button) == ["[Deny]"])
        }
    }
}
