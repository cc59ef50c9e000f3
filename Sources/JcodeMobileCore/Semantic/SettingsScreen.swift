/// The server, the session's housekeeping, and pairing another server.
enum SettingsScreen {
    static func nodes(_ state: AppState) -> [SemanticNode] {
        let connected = state.connection.canSend
        let server = state.servers.selected
        var info: [SemanticNode] = []
        if let server {
            info.append(.text("settings.server", server.name, value: server.address.display))
            if let version = state.session.serverVersion ?? server.serverVersion {
                info.append(.text("settings.version", "Server version", value: version))
            }
        }
        if let tokens = state.session.currentTotalTokens {
            var value = "\(tokens.input) in · \(tokens.output) out"
            if let cached = tokens.cacheRead { value += " · \(cached) from cache" }
            info.append(.text("settings.tokens", "Tokens used", value: value))
        }
        if let type = state.session.connectionType {
            info.append(.text("settings.transport", "Model connection", value: type))
        }
        if let upstream = state.session.upstreamProvider {
            info.append(.text("settings.upstream", "Routed to", value: upstream))
        }
        var nodes: [SemanticNode] = []
        if let server {
            // Edited per server; the action names the server (the tree's edit action is the type).
            nodes.append(
                .field(
                    "settings.working_dir", "Working directory on the server", value: server.workingDir,
                    placeholder: "/home/you/project", editAction: "set_working_dir", focusedID: state.navigation.focusedNodeID,
                    error: server.workingDirError?.text))
        }
        // jcode refuses a rename or a clear while a turn runs: so do their controls.
        let busy = state.chat.turn.isProcessing
        let session = state.session
        if session.id != nil {
            let draft = session.renameDraft ?? session.title ?? ""
            let wanted = draft.trimmingSpaces()
            nodes.append(
                .field(
                    "settings.rename_field", "Session title", value: draft, placeholder: "Name this session",
                    editAction: "set_rename_draft", focusedID: state.navigation.focusedNodeID))
            nodes.append(
                .button(
                    "settings.rename", session.pendingRename != nil ? "Renaming…" : "Rename session",
                    .renameSession(title: draft),
                    enabled: connected && !busy && session.pendingRename == nil && !wanted.isEmpty && wanted != session.title))
        }
        return [
            SemanticNode("settings.header", .header, label: "Settings", children: [.button("nav.back", "Back", .navigate(.chat), icon: "chevron.left")]),
            SemanticNode("settings.info", .group, label: "", children: info),
        ] + nodes + [
            .button("settings.compact", state.session.isCompacting ? "Compacting…" : "Compact conversation", .compact,
                    enabled: connected && !state.session.isCompacting),
            .button("settings.clear", session.isClearing ? "Clearing…" : "Clear conversation", .clearConversation,
                    enabled: connected && !busy && !session.isClearing),
            .button("settings.disconnect", "Disconnect", .disconnect, visible: state.connection.phase != .disconnected && server != nil),
            .button("settings.connect", "Connect", .retryConnection, visible: state.connection.phase == .disconnected && server != nil),
            .button("settings.add_server", "Pair another server", .navigate(.onboarding)),
            .button("settings.forget", "Forget this server", server.map { .forgetServer(id: $0.id) } ?? .navigate(.onboarding),
                    visible: server != nil),
        ]
    }
}
