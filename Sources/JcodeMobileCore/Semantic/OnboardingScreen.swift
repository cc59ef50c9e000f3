/// Pair with a server, or pick a saved one.
enum OnboardingScreen {
    static func nodes(_ state: AppState) -> [SemanticNode] {
        let form = state.pairing
        let errors = form.visibleErrors
        let focus = state.navigation.focusedNodeID
        var nodes: [SemanticNode] = [
            .text("pair.title", "Connect to jcode", role: .heading),
            .text("pair.instructions", "Run `jcode pair` on your computer, then scan its QR code or enter the details it shows."),
            .button("pair.scan_qr", "Scan QR code", .scanQR, enabled: !form.isSubmitting),
            .field(
                "pair.host", "Host", value: form.host, placeholder: "my-computer.local", editAction: "set_host",
                focusedID: focus, error: errors.host?.text),
            .field(
                "pair.port", "Port", value: form.port, placeholder: String(ServerAddress.defaultPort), editAction: "set_port",
                focusedID: focus, error: errors.port?.text),
            .field(
                "pair.code", "Pairing code", value: form.code,
                placeholder: form.heldCode == nil ? "6-digit code" : "Code kept from the last try", editAction: "set_pair_code",
                focusedID: focus, error: errors.code?.text),
            .field(
                "pair.device_name", "Device name", value: form.deviceName, placeholder: "My iPhone", editAction: "set_device_name",
                focusedID: focus, error: errors.deviceName?.text),
            .field(
                "pair.working_dir", "Working directory on the server", value: form.workingDir, placeholder: "/home/you/project",
                editAction: "set_working_dir", focusedID: focus, error: errors.workingDir?.text),
            .button(
                "pair.submit", form.isSubmitting ? "Pairing…" : "Pair", .submitPairing, enabled: !form.isSubmitting,
                accessibilityLabel: form.isSubmitting ? "Pairing, please wait" : "Pair with this server"),
            .button(
                "pair.check", form.health?.status == .checking ? "Checking…" : "Check server", .checkServer,
                enabled: form.address != nil && form.health?.status != .checking && !form.isSubmitting),
        ]
        if let health = form.health {
            nodes.append(.text("pair.health", health.message, value: health.status.rawValue, role: .status))
        }
        if !state.servers.list.isEmpty {
            let connectedID = state.connection.phase == .connected ? state.servers.selectedID : nil
            var rows: [SemanticNode] = []
            for server in state.servers.list {
                let status = server.id == connectedID ? "connected" : (server.id == state.servers.selectedID ? "selected" : nil)
                var row = SemanticNode.button(
                    "server.\(server.id)", server.name, .selectServer(id: server.id), enabled: !form.isSubmitting,
                    accessibilityLabel: "Connect to \(server.name)",
                    value: [server.address.display, status].compactMap { $0 }.joined(separator: " · "))
                row.children = [
                    .button("server.\(server.id).forget", "Forget", .forgetServer(id: server.id), accessibilityLabel: "Forget \(server.name)")
                ]
                rows.append(row)
            }
            nodes.append(SemanticNode("servers", .list, label: "Saved servers", children: rows))
        }
        if state.servers.selected != nil {
            nodes.append(.button("nav.chat", "Back to chat", .navigate(.chat)))
        }
        return nodes
    }
}
