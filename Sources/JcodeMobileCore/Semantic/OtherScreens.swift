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

/// Models and reasoning effort.
enum ModelPickerScreen {
    static let efforts = ["low", "medium", "high"]

    static func nodes(_ state: AppState) -> [SemanticNode] {
        let s = state.session
        let canChange = state.connection.canSend
        let models = s.availableModels.isEmpty ? (s.model.map { [$0] } ?? []) : s.availableModels
        let modelRows: [SemanticNode] = models.map { model in
            let status = model == s.pendingModel ? "switching" : (model == s.model ? "current" : nil)
            return .button(
                "model.\(model)", model, .setModel(model), enabled: canChange && s.pendingModel == nil,
                accessibilityLabel: "Use \(model)", value: status)
        }
        let effortRows: [SemanticNode] = efforts.map { effort in
            let status = effort == s.pendingReasoningEffort ? "switching" : (effort == s.reasoningEffort ? "current" : nil)
            return .button(
                "effort.\(effort)", effort.prefix(1).uppercased() + effort.dropFirst(), .setReasoningEffort(effort),
                enabled: canChange && s.pendingReasoningEffort == nil, accessibilityLabel: "Reasoning effort \(effort)", value: status)
        }
        return [
            SemanticNode("model.header", .header, label: "Model", value: s.provider, children: [.button("nav.back", "Back", .navigate(.chat))]),
            SemanticNode("model.list", .list, label: models.isEmpty ? "No models available" : "Models", children: modelRows),
            SemanticNode("effort.list", .list, label: "Reasoning effort", value: s.reasoningEffort, children: effortRows),
        ]
    }
}

/// The server, the session's housekeeping, and pairing another server.
enum SettingsScreen {
    static func nodes(_ state: AppState) -> [SemanticNode] {
        let connected = state.connection.canSend
        let server = state.selectedServer
        var info: [SemanticNode] = []
        if let server {
            info.append(.text("settings.server", server.name, value: server.address.display))
            if let version = state.session.serverVersion ?? server.serverVersion {
                info.append(.text("settings.version", "Server version", value: version))
            }
        }
        if let tokens = state.session.totalTokens {
            info.append(.text("settings.tokens", "Tokens used", value: "\(tokens.input) in · \(tokens.output) out"))
        }
        return [
            SemanticNode("settings.header", .header, label: "Settings", children: [.button("nav.back", "Back", .navigate(.chat))]),
            SemanticNode("settings.info", .group, label: "", children: info),
            .button("settings.compact", state.session.isCompacting ? "Compacting…" : "Compact conversation", .compact,
                    enabled: connected && !state.session.isCompacting),
            .button("settings.clear", "Clear conversation", .clearConversation, enabled: connected),
            .button("settings.disconnect", "Disconnect", .disconnect, visible: state.connection.phase != .disconnected && server != nil),
            .button("settings.connect", "Connect", .retryConnection, visible: state.connection.phase == .disconnected && server != nil),
            .button("settings.add_server", "Pair another server", .navigate(.onboarding)),
            .button("settings.forget", "Forget this server", server.map { .forgetServer(id: $0.id) } ?? .navigate(.onboarding),
                    visible: server != nil),
        ]
    }
}
