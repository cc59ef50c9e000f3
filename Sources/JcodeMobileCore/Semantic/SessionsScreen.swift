/// The server's sessions.
enum SessionsScreen {
    static func nodes(_ state: AppState) -> [SemanticNode] {
        let canSwitch = state.connection.canSend
        var rows: [SemanticNode] = []
        for session in state.session.allSessions {
            let current = session.id == state.session.id
            rows.append(
                .button(
                    "session.\(session.id)", session.title ?? session.id, .resumeSession(id: session.id), enabled: canSwitch,
                    accessibilityLabel: "Session \(session.title ?? session.id)", value: current ? "current" : nil))
        }
        return [
            SemanticNode(
                "sessions.header", .header, label: "Sessions",
                children: [.button("nav.back", "Back", .navigate(.chat))]),
            SemanticNode(
                "sessions.list", .list, label: rows.isEmpty ? "No other sessions" : "", value: nil,
                accessibilityValue: "\(rows.count) sessions", children: rows),
        ]
    }
}
