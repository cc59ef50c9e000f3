import JcodeMobileJSON

private typealias B = SchemaBuilder

extension PairingForm {
    /// The pairing form's sections of the state JSON (`StateSection`), in the
    /// order written; `StateSection.all` places them.
    static let sections: [StateSection] = [
        StateSection(
            "pairing", owner: .pairing,
            schema: {
                let errors = B.strictObject(["host", "port", "pair_code", "device_name", "working_dir"].map { ($0, B.nullableString) })
                return B.strictObject([
                    ("host", B.string), ("port", B.string),
                    ("pair_code", B.described(B.string, "the code while it is typed; empty once used")),
                    ("has_held_code", B.boolean), ("device_name", B.string), ("working_dir", B.string),
                    ("is_submitting", B.boolean), ("awaiting_identity", B.boolean), ("can_submit", B.boolean),
                    ("errors", B.described(errors, "the validation message shown for each field, or null")),
                    ("health", B.orNull(B.strictObject([
                        ("status", B.enumeration(PairingForm.HealthCheck.Status.allCases.map(\.rawValue))), ("message", B.string),
                    ]))),
                ])
            },
            json: { $0.pointee.pairing.json },
            changed: { $0.pointee.$pairing != $1.pointee.$pairing }),
    ]
}
