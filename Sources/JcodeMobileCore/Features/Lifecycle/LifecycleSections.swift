import JcodeMobileJSON

private typealias B = SchemaBuilder

extension LifecycleState {
    /// The lifecycle's sections of the state JSON (`StateSection`), in the
    /// order written; `StateSection.all` places them.
    static let sections: [StateSection] = [
        StateSection(
            "lifecycle", owner: .lifecycle,
            schema: {
                B.strictObject([
                    ("is_foreground", B.boolean), ("network_reachable", B.boolean), ("push_registered", B.boolean),
                    ("device_id", B.nullableString),
                    ("appearance", B.described(B.enumeration(Appearance.allCases.map(\.rawValue)), "light or dark, as the host told (appearance): how the pictures are drawn")),
                ])
            },
            json: { $0.pointee.lifecycle.json },
            changed: { $0.pointee.$lifecycle != $1.pointee.$lifecycle }),
    ]
}
