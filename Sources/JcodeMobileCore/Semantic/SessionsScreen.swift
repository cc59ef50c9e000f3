/// The server's sessions.
enum SessionsScreen {
    static func nodes(_ state: AppState) -> [SemanticNode] {
        let canSwitch = state.connection.canSend
        var rows: [SemanticNode] = []
        for session in state.session.allSessions {
            let current = session.id == state.session.id
            let title = SemanticText.sessionTitle(session.title, id: session.id)
            // What it last said, as far as this device saw (jcode lists ids only).
            let preview = ChatInteractor.preview(of: session.id, in: state.chat)?.line
            var row = SemanticNode.button(
                "session.\(session.id)", title, .resumeSession(id: session.id), enabled: canSwitch,
                accessibilityLabel: current ? "Session \(title), current" : "Session \(title)", value: preview)
            row.selected = current
            rows.append(row)
        }
        return [
            SemanticNode(
                "sessions.header", .header, label: "Sessions",
                children: [.button("nav.back", "Back", .navigate(.chat), icon: "chevron.left")]),
            SemanticNode(
                "sessions.list", .list, label: rows.isEmpty ? "No other sessions" : "", value: nil,
                accessibilityValue: "\(rows.count) sessions", children: rows),
        ]
    }
}
