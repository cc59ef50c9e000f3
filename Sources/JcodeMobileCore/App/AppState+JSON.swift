import JcodeMobileJSON

/// The state JSON, written from the section table (`StateSection.all`,
/// `App/StateSections.swift`): every section, in the order declared there.
extension AppState {
    /// The JSON of one section (the transcript too, though writers use `writeJSON`).
    public func json(of section: StateSection) -> JSONValue { withUnsafePointer(to: self) { section.json($0) } }

    /// Writes the whole state as JSON.
    public func writeJSON(to w: inout JSONWriter) {
        withUnsafePointer(to: self) { state in
            w.objectStart()
            for section in StateSection.all {
                w.key(string: section.name)
                if let write = section.write {
                    write(state, &w)
                } else {
                    w.value(section.json(state))
                }
            }
            w.objectEnd()
        }
    }

    public var json: JSONValue {
        withUnsafePointer(to: self) { state in
            var o = JSONObject(capacity: StateSection.all.count)
            for section in StateSection.all { o.append(section.name, section.json(state)) }
            return .object(o)
        }
    }
}
