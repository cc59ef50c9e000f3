/// Models and reasoning effort.
enum ModelPickerScreen {
    static func nodes(_ state: AppState) -> [SemanticNode] {
        let s = state.session
        let canChange = state.connection.canSend
        let models = s.availableModels.isEmpty ? (s.model.map { [$0] } ?? []) : s.availableModels
        let modelRows: [SemanticNode] = models.map { model in
            let current = model == s.model
            var row = SemanticNode.button(
                "model.\(model)", model, .setModel(model), enabled: canChange && s.pendingModel == nil,
                accessibilityLabel: current ? "\(model), in use" : "Use \(model)", value: model == s.pendingModel ? "switching" : nil)
            row.selected = current
            return row
        }
        let effortRows: [SemanticNode] = s.reasoningEfforts.map { effort in
            let current = effort == s.reasoningEffort
            var row = SemanticNode.button(
                "effort.\(effort)", effort.prefix(1).uppercased() + effort.dropFirst(), .setReasoningEffort(effort),
                enabled: canChange && s.pendingReasoningEffort == nil,
                accessibilityLabel: current ? "Reasoning effort \(effort), in use" : "Reasoning effort \(effort)",
                value: effort == s.pendingReasoningEffort ? "switching" : nil)
            row.selected = current
            return row
        }
        return [
            SemanticNode("model.header", .header, label: "Model", value: s.provider, children: [.button("nav.back", "Back", .navigate(.chat), icon: "chevron.left")]),
            SemanticNode("model.list", .list, label: models.isEmpty ? "No models available" : "Models", children: modelRows),
            SemanticNode("effort.list", .list, label: "Reasoning effort", value: s.reasoningEffort, children: effortRows),
        ]
    }
}
