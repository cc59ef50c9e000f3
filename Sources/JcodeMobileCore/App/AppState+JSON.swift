/// The state JSON, written from the section table (`StateSection.all`,
/// `App/StateSections.swift`): every section, in the order declared there.
extension AppState {
    /// The JSON of one section (the transcript too, though writers use `writeJSON`).
    public func json(of section: StateSection) -> JSONValue { section.json(self) }

    /// Writes the whole state as JSON.
    public func writeJSON(to w: inout JSONWriter) {
        w.objectStart()
        for section in StateSection.all {
            w.key(string: section.name)
            if let write = section.write {
                write(self, &w)
            } else {
                w.value(section.json(self))
            }
        }
        w.objectEnd()
    }

    public var json: JSONValue {
        var o = JSONObject(capacity: StateSection.all.count)
        for section in StateSection.all { o.append(section.name, section.json(self)) }
        return .object(o)
    }
}
