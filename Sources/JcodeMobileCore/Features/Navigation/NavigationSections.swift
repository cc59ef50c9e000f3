import JcodeMobileJSON

private typealias B = SchemaBuilder

extension NavigationState {
    /// The navigation's sections of the state JSON (`StateSection`), in the
    /// order written; `StateSection.all` places them.
    static let sections: [StateSection] = [
        StateSection(
            "screen", owner: .navigation,
            schema: { B.enumeration(Screen.allCases.map(\.rawValue)) },
            json: { .string($0.pointee.navigation.screen.rawValue) },
            changed: { $0.pointee.navigation.screen != $1.pointee.navigation.screen }),
        StateSection(
            "focused_node_id", owner: .navigation,
            schema: { B.nullableString },
            json: { .from($0.pointee.navigation.focusedNodeID) },
            changed: { $0.pointee.navigation.focusedNodeID != $1.pointee.navigation.focusedNodeID }),
        StateSection(
            "messages_scroll", owner: .navigation,
            schema: {
                B.described(B.nullableInteger(.count), "points of the conversation scrolled above the message list's top; null follows the newest message")
            },
            json: { $0.pointee.navigation.messagesScroll.map { .int(Int64($0)) } ?? .null },
            changed: { $0.pointee.navigation.messagesScroll != $1.pointee.navigation.messagesScroll }),
        StateSection(
            "screen_scroll", owner: .navigation,
            schema: { B.described(B.integer(.count), "points of a screen taller than the viewport scrolled above its top (scroll_screen); 0 on a screen that fits, and when another screen opens") },
            json: { .int(Int64($0.pointee.navigation.screenScroll)) },
            changed: { $0.pointee.navigation.screenScroll != $1.pointee.navigation.screenScroll }),
        StateSection(
            "expanded_nodes", owner: .navigation,
            schema: {
                B.described(
                    B.array(B.strictObject([("node_id", B.string), ("expanded", B.boolean)])),
                    "collapsible nodes opened or closed with set_expanded, the latest last (at most 256); the others show as their role's default")
            },
            json: { state in
                .array(state.pointee.navigation.expansions.map { e in
                    var o = JSONObject(capacity: 2)
                    o.append("node_id", .string(e.nodeID))
                    o.append("expanded", .bool(e.expanded))
                    return .object(o)
                })
            },
            changed: { $0.pointee.navigation.expansions != $1.pointee.navigation.expansions }),
    ]
}
