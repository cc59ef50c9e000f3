import XCTest
@testable import JcodeMobileCore
import JcodeMobileJSON
import JcodeMobileTestSupport

/// A tool call's card in the tree: what the cards' cache keeps between
/// deltas gives the card a build from scratch gives. (What the card reads of
/// the input, its summary and its diffs, is tested alone in
/// JcodeMobileToolCardsTests.)
final class ToolCardNodeTests: XCTestCase {
    private func json(_ object: [String: JSONValue]) -> String {
        JSONValue.object(JSONObject(object.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })).jsonString
    }

    func testAStreamedCardIsTheCardOfItsWholeInputAtEveryStepAndItsDiffShowsWhenOpened() {
        let inputs = [
            ("write", json(["file_path": "src/a.rs", "content": "fn a() {}\nfn b() {}\n\nfn c() {}\n"])),
            ("edit", json(["file_path": "src/a.rs", "old_string": "let x = 1;\nlet y = 2;\n", "new_string": "let x = 1;\nlet y = 3;\n"])),
            ("bash", json(["command": "make\nmake test"])),
            ("apply_patch", json(["patch_text": "*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** End Patch"])),
        ]
        for (tool, input) in inputs {
            let cards = ToolCardCache()
            for prefix in scalarPrefixes(input) {
                let call = ToolCall(id: "c1", name: tool, input: prefix, status: .pending)
                XCTAssertEqual(ChatScreen.toolCard(call, id: "tool.m1.c1", cards: cards), ChatScreen.toolCard(call, id: "tool.m1.c1"), prefix)
            }
        }
        // The write, complete: closed, the summary counts its lines; opened, its diff shows.
        let cards = ToolCardCache()
        let call = ToolCall(id: "c1", name: "write", input: inputs[0].1, status: .running)
        let closed = ChatScreen.toolCard(call, id: "tool.m1.c1", cards: cards)
        XCTAssertEqual(closed.children.map(\.id), ["tool.m1.c1.summary"])
        XCTAssertEqual(closed.children.first?.value, "src/a.rs +4 −0")
        var navigation = NavigationState()
        navigation.expansions = [NavigationState.Expansion(nodeID: "tool.m1.c1", expanded: true)]
        let opened = ChatScreen.toolCard(call, id: "tool.m1.c1", navigation: navigation, cards: cards)
        XCTAssertEqual(opened.children.map(\.id), ["tool.m1.c1.summary", "tool.m1.c1.diff.0"])
        XCTAssertEqual(opened.children[1].label, "src/a.rs")
        XCTAssertEqual(opened.children[1].value, "+4 −0")
        XCTAssertEqual(opened.children[1].children.first?.children.map(\.value), ["fn a() {}", "fn b() {}", "", "fn c() {}"])
        XCTAssertEqual(opened, ChatScreen.toolCard(call, id: "tool.m1.c1", navigation: navigation))
        // An input that changed otherwise than by growing is read again.
        let other = ToolCall(id: "c1", name: "write", input: json(["file_path": "src/b.rs", "content": "x\n"]), status: .running)
        XCTAssertEqual(ChatScreen.toolCard(other, id: "tool.m1.c1", cards: cards).children.first?.value, "src/b.rs +1 −0")
    }
}
