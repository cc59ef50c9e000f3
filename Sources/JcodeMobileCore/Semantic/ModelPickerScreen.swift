/// Models and reasoning effort.
enum ModelPickerScreen {
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
        let effortRows: [SemanticNode] = s.reasoningEfforts.map { effort in
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
