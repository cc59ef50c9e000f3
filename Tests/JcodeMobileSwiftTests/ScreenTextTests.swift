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
