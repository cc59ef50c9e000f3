@_spi(Leaves) import JcodeMobileJSON
import JcodeMobileMarkdown

/// One operation on the semantic tree, keyed by stable node ids: what
/// `jcode_mobile_tree_changes` answers and the event stream's
/// `tree_changed` carries. Applied in order, the operations of a revision
/// turn the tree of the previous one into the current tree.
///
/// Node ids are unique within a tree, so an id names one node.
public enum TreeChange: Equatable, Sendable {
    /// The children `index ..< index + removed.count` of `parent` (whose ids
    /// are `removed`) give way to `inserted` (whole subtrees). An insertion
    /// removes nothing; a removal inserts nothing. The message list's
    /// window moves by splices.
    case splice(parent: String, index: Int, removed: [String], inserted: [SemanticNode])
    /// The node `id`, a child of `parent`, moves to `index` among its siblings
    /// (counted without it).
    case move(id: String, parent: String, index: Int)
    /// The node's own `fields` take the values they have in `node` (its
    /// children are not part of the operation: they change by their own).
    /// Held out of line: a node is large, and an operation is copied
    /// several times on its way to the host (this keeps each copy small).
    indirect case update(id: String, fields: SemanticNode.Fields, node: SemanticNode)
    /// `text` is appended to the string field `field` (a streamed reply
    /// sends its delta, not the whole text again).
    case append(id: String, field: SemanticNode.Fields, text: String)
    /// The node's spans keep their first `keep` and go on with `spans`; its
    /// value and accessibility value become the spans' texts joined (as a
    /// text node's always are). A streamed paragraph sends its last runs,
    /// not all of them and its whole text again.
    case spans(id: String, keep: Int, spans: [TextSpan])
}

extension SemanticNode {
    /// A node's own fields (not its children), as a set.
    public struct Fields: OptionSet, Hashable, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        public static let role = Fields(rawValue: 1 << 0)
        public static let label = Fields(rawValue: 1 << 1)
        public static let value = Fields(rawValue: 1 << 2)
        public static let placeholder = Fields(rawValue: 1 << 3)
        public static let visible = Fields(rawValue: 1 << 4)
        public static let enabled = Fields(rawValue: 1 << 5)
        public static let focused = Fields(rawValue: 1 << 6)
        public static let accessibilityLabel = Fields(rawValue: 1 << 7)
        public static let accessibilityValue = Fields(rawValue: 1 << 8)
        public static let supportedActions = Fields(rawValue: 1 << 9)
        public static let bounds = Fields(rawValue: 1 << 10)
        public static let scroll = Fields(rawValue: 1 << 11)
        public static let window = Fields(rawValue: 1 << 12)
        /// What a tap does: not in the JSON (`supported_actions` says it).
        public static let tap = Fields(rawValue: 1 << 13)
        public static let level = Fields(rawValue: 1 << 14)
        public static let spans = Fields(rawValue: 1 << 15)
        public static let language = Fields(rawValue: 1 << 16)
        public static let checked = Fields(rawValue: 1 << 17)
        public static let variant = Fields(rawValue: 1 << 18)
        public static let expanded = Fields(rawValue: 1 << 19)
        public static let counts = Fields(rawValue: 1 << 20)
        public static let selected = Fields(rawValue: 1 << 21)
        public static let icon = Fields(rawValue: 1 << 22)

        /// Each field with its JSON name, in the order a node is written.
        static let named: [(Fields, StaticString)] = [
            (.role, "role"), (.label, "label"), (.value, "value"), (.placeholder, "placeholder"), (.visible, "visible"),
            (.enabled, "enabled"), (.focused, "focused"), (.accessibilityLabel, "accessibility_label"),
            (.accessibilityValue, "accessibility_value"), (.supportedActions, "supported_actions"), (.bounds, "bounds"),
            (.scroll, "scroll"), (.window, "window"), (.level, "level"), (.spans, "spans"), (.language, "language"),
            (.checked, "checked"), (.variant, "variant"), (.expanded, "expanded"), (.counts, "counts"),
            (.selected, "selected"), (.icon, "icon"),
        ]

        /// The fields kept in `detail`.
        static let detailFields: Fields = [.level, .spans, .language, .checked, .variant, .expanded, .counts, .selected, .icon]

        /// The field of a JSON name (nil for one that is not a node's own field).
        public init?(jsonName: String) {
            guard let entry = Self.named.first(where: { $0.1.description == jsonName }) else { return nil }
            self = entry.0
        }

        public var jsonName: String? { staticName?.description }

        /// The JSON name, as written (nil for a set of fields, or `tap`).
        var staticName: StaticString? { Self.named.first(where: { $0.0 == self })?.1 }
    }

    /// The own fields that differ between `node` and `other`, read where
    /// they lie (not copied whole, as a node passed by value would be).
    static func differingFields(_ node: UnsafePointer<SemanticNode>, from other: UnsafePointer<SemanticNode>) -> Fields {
        var f: Fields = []
        if node.pointee.role != other.pointee.role { f.insert(.role) }
        if node.pointee.label != other.pointee.label { f.insert(.label) }
        if node.pointee.value != other.pointee.value { f.insert(.value) }
        if node.pointee.placeholder != other.pointee.placeholder { f.insert(.placeholder) }
        if node.pointee.visible != other.pointee.visible { f.insert(.visible) }
        if node.pointee.enabled != other.pointee.enabled { f.insert(.enabled) }
        if node.pointee.focused != other.pointee.focused { f.insert(.focused) }
        if node.pointee.accessibilityLabel != other.pointee.accessibilityLabel { f.insert(.accessibilityLabel) }
        if node.pointee.accessibilityValue != other.pointee.accessibilityValue { f.insert(.accessibilityValue) }
        if node.pointee.supportedActions != other.pointee.supportedActions { f.insert(.supportedActions) }
        if node.pointee.bounds != other.pointee.bounds { f.insert(.bounds) }
        if node.pointee.scroll != other.pointee.scroll { f.insert(.scroll) }
        if node.pointee.window != other.pointee.window { f.insert(.window) }
        if node.pointee.tap != other.pointee.tap { f.insert(.tap) }
        if node.pointee.detailStorage !== other.pointee.detailStorage { f.formUnion(node.pointee.detail.differingFields(from: other.pointee.detail)) }
        return f
    }

    /// Copies `fields` from `source`.
    public mutating func take(_ fields: Fields, from source: SemanticNode) {
        if fields.contains(.role) { role = source.role }
        if fields.contains(.label) { label = source.label }
        if fields.contains(.value) { value = source.value }
        if fields.contains(.placeholder) { placeholder = source.placeholder }
        if fields.contains(.visible) { visible = source.visible }
        if fields.contains(.enabled) { enabled = source.enabled }
        if fields.contains(.focused) { focused = source.focused }
        if fields.contains(.accessibilityLabel) { accessibilityLabel = source.accessibilityLabel }
        if fields.contains(.accessibilityValue) { accessibilityValue = source.accessibilityValue }
        if fields.contains(.supportedActions) { supportedActions = source.supportedActions }
        if fields.contains(.bounds) { bounds = source.bounds }
        if fields.contains(.scroll) { scroll = source.scroll }
        if fields.contains(.window) { window = source.window }
        if fields.contains(.tap) { tap = source.tap }
        if !fields.isDisjoint(with: Fields.detailFields) {
            var d = detail
            let s = source.detail
            if fields.contains(.level) { d.level = s.level }
            if fields.contains(.spans) { d.spans = s.spans }
            if fields.contains(.language) { d.language = s.language }
            if fields.contains(.checked) { d.checked = s.checked }
            if fields.contains(.variant) { d.variant = s.variant }
            if fields.contains(.expanded) { d.expanded = s.expanded }
            if fields.contains(.counts) { d.counts = s.counts }
            if fields.contains(.selected) { d.selected = s.selected }
            if fields.contains(.icon) { d.icon = s.icon }
            detail = d
        }
    }

    /// Appends `text` to the string field `field` (label, value or an
    /// accessibility text), in place: a mirror streaming a long reply pays
    /// for the delta, not for the text so far.
    public mutating func append(_ text: String, to field: Fields) {
        switch field {
        case .label: label.append(text)
        case .value:
            if value == nil { value = text } else { value!.append(text) }
        case .accessibilityLabel: accessibilityLabel.append(text)
        case .accessibilityValue:
            if accessibilityValue == nil { accessibilityValue = text } else { accessibilityValue!.append(text) }
        default: break
        }
    }
}

// MARK: - Diffing

extension TreeChange {
    /// The operations that turn `old` into `new` (two trees whose roots
    /// have the same id): O(size of the two trees), with unchanged strings
    /// compared by identity first.
    public static func diff(from old: SemanticNode, to new: SemanticNode) -> [TreeChange] {
        var changes: [TreeChange] = []
        diff(from: old, to: new, into: &changes)
        return changes
    }

    /// The operations that make `old` into `new`, appended to `changes`.
    static func diff(from old: SemanticNode, to new: SemanticNode, into changes: inout [TreeChange]) {
        withUnsafePointer(to: old) { old in withUnsafePointer(to: new) { new in diffNode(old, new, into: &changes) } }
    }

    /// `old` and `new` are read where they lie: a node passed by value
    /// beside `changes` (inout) would be copied whole at each call, as the
    /// compiler cannot tell the two apart.
    private static func diffNode(_ old: UnsafePointer<SemanticNode>, _ new: UnsafePointer<SemanticNode>, into changes: inout [TreeChange]) {
        var fields = SemanticNode.differingFields(new, from: old)
        if !fields.isEmpty {
            // Spans that kept their first ones are sent from the first that
            // changed, and the text they make up with them.
            if fields.contains(.spans), let kept = keptSpans(old.pointee.spans, new.pointee.spans), spansMakeText(new.pointee) {
                changes.append(.spans(id: new.pointee.id, keep: kept, spans: Array(new.pointee.spans![kept...])))
                fields.subtract([.spans, .value, .accessibilityValue])
            }
            // A text that only grew is sent as what was appended.
            var valueAppended: String??  // .none: not compared
            for field in [SemanticNode.Fields.value, .accessibilityValue, .label, .accessibilityLabel] where fields.contains(field) {
                let added: String?
                if field == .accessibilityValue, let known = valueAppended,
                   old.pointee.accessibilityValue == old.pointee.value, new.pointee.accessibilityValue == new.pointee.value {
                    // The same two texts as the value's (a text node's accessibility value is its value,
                    // one string, so the test above is one of identity): not compared again, byte by byte.
                    added = known
                } else {
                    added = appended(from: SemanticNode.text(field, of: old), to: SemanticNode.text(field, of: new))
                }
                if field == .value { valueAppended = .some(added) }
                if let added {
                    changes.append(.append(id: new.pointee.id, field: field, text: added))
                    fields.remove(field)
                }
            }
            if fields == .bounds {
                // The most common update by far (a node moved or grew): the
                // operation holds what it sets, not a copy of the node.
                var own = SemanticNode(new.pointee.id, new.pointee.role, label: "")
                own.bounds = new.pointee.bounds
                changes.append(.update(id: own.id, fields: fields, node: own))
            } else if !fields.isEmpty {
                var own = new.pointee
                own.children = []
                // Only what it sets: a long value the update does not carry is not held by it.
                if !fields.contains(.value) { own.value = nil }
                if !fields.contains(.accessibilityValue) { own.accessibilityValue = nil }
                changes.append(.update(id: new.pointee.id, fields: fields, node: own))
            }
        }
        // The same children (a row reused as placed before): nothing below changed.
        if old.pointee.children.withUnsafeBufferPointer({ o in new.pointee.children.withUnsafeBufferPointer { o.baseAddress == $0.baseAddress } }) {
            return
        }
        diffChildren(of: new.pointee.id, old.pointee.children, new.pointee.children, into: &changes)
    }

    /// How many of `old`'s first spans `new` begins with, when some and not
    /// all of `new` (nil otherwise: then the spans are sent whole).
    static func keptSpans(_ old: MarkdownSpans?, _ new: MarkdownSpans?) -> Int? {
        guard let old, let new, !old.isEmpty, new.count > 1 else { return nil }
        // The chunks the two share (a streamed paragraph's first runs) are not read.
        let k = old.commonPrefixCount(with: new)
        return k > 0 && k < new.count ? k : nil
    }

    /// Whether `node`'s value and accessibility value are its spans' texts
    /// joined, as a text node's are (`MarkdownNodes`): its length is theirs.
    static func spansMakeText(_ node: borrowing SemanticNode) -> Bool {
        guard let value = node.value, let spans = node.spans, node.accessibilityValue == value else { return false }
        return spans.utf8Count == value.utf8.count
    }

    /// What was appended to `old` to make `new`, when `new` is `old` and
    /// more (nil otherwise, and for a field that was absent).
    static func appended(from old: String?, to new: String?) -> String? {
        guard var old, var new, !old.isEmpty else { return nil }
        let oldCount = old.utf8.count
        guard new.utf8.count > oldCount else { return nil }
        let isPrefix = old.withUTF8 { o in new.withUTF8 { n in RawMemory.equal(n.baseAddress!, o.baseAddress!, oldCount) } }
        guard isPrefix else { return nil }
        let utf8 = new.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: oldCount)
        // Only where a character starts (never inside a UTF-8 sequence).
        guard utf8[start] & 0xC0 != 0x80 else { return nil }
        return String(new[start...])
    }

    /// The operations that make the children `old` of `parent`, from its
    /// child `offset` on, into `new` (the children before are the same).
    static func diff(children old: [SemanticNode], to new: [SemanticNode], of parent: String, from offset: Int, into changes: inout [TreeChange]) {
        diffChildren(of: parent, old, new, offset: offset, into: &changes)
    }

    /// `diffNode` for each of the first `count` children of `old` and `new`,
    /// read in place: a node is large, and one read through a subscript
    /// (even a buffer's) is copied whole before the call and destroyed after.
    private static func diffPairs(_ old: [SemanticNode], _ new: [SemanticNode], count: Int, into changes: inout [TreeChange]) {
        old.withUnsafeBufferPointer { old in
            new.withUnsafeBufferPointer { new in
                guard let o = old.baseAddress, let n = new.baseAddress else { return }
                var k = 0
                while k < count {
                    diffNode(o + k, n + k, into: &changes)
                    k &+= 1
                }
            }
        }
    }

    private static func diffChildren(
        of parent: String, _ old: [SemanticNode], _ new: [SemanticNode], offset: Int = 0, into changes: inout [TreeChange]
    ) {
        // The common case: the same children in the same order.
        if old.count == new.count {
            var same = true
            for k in old.indices where old[k].id != new[k].id {
                same = false
                break
            }
            if same {
                diffPairs(old, new, count: old.count, into: &changes)
                return
            }
        }
        // A streamed list's or table's: children added or taken away at the end only.
        let common = min(old.count, new.count)
        var prefix = true
        for k in 0 ..< common where old[k].id != new[k].id {
            prefix = false
            break
        }
        if prefix {
            if old.count > common {
                changes.append(.splice(parent: parent, index: offset &+ common, removed: old[common...].map(\.id), inserted: []))
            }
            diffPairs(old, new, count: common, into: &changes)
            if new.count > common {
                changes.append(.splice(parent: parent, index: offset &+ common, removed: [], inserted: Array(new[common...])))
            }
            return
        }
        var newIDs: [String: Int] = [:]
        newIDs.reserveCapacity(new.count)
        for (k, node) in new.enumerated() { newIDs[node.id] = k }
        // 1. Removals, as runs (the ids still in place are the mirror's list).
        var mirror: [SemanticNode] = []
        mirror.reserveCapacity(old.count)
        var k = 0
        while k < old.count {
            guard newIDs[old[k].id] == nil else {
                mirror.append(old[k])
                k &+= 1
                continue
            }
            let index = mirror.count
            var removed: [String] = []
            while k < old.count && newIDs[old[k].id] == nil {
                removed.append(old[k].id)
                k &+= 1
            }
            changes.append(.splice(parent: parent, index: offset &+ index, removed: removed, inserted: []))
        }
        var oldIDs: Set<String> = []
        oldIDs.reserveCapacity(mirror.count)
        for node in mirror { oldIDs.insert(node.id) }
        // 2. Insertions (as runs) and moves, left to right.
        var j = 0
        while j < new.count {
            if j < mirror.count && mirror[j].id == new[j].id {
                mirror.withUnsafeBufferPointer { m in
                    new.withUnsafeBufferPointer { n in diffNode(m.baseAddress! + j, n.baseAddress! + j, into: &changes) }
                }
                j &+= 1
                continue
            }
            if !oldIDs.contains(new[j].id) {
                var inserted: [SemanticNode] = []
                let index = j
                while j < new.count && !oldIDs.contains(new[j].id) {
                    inserted.append(new[j])
                    j &+= 1
                }
                mirror.insert(contentsOf: inserted, at: index)
                changes.append(.splice(parent: parent, index: offset &+ index, removed: [], inserted: inserted))
                continue
            }
            // Further on in the mirror: move it here.
            let from = mirror.firstIndex(where: { $0.id == new[j].id })!
            let moved = mirror.remove(at: from)
            mirror.insert(moved, at: j)
            changes.append(.move(id: moved.id, parent: parent, index: offset &+ j))
            withUnsafePointer(to: moved) { moved in
                new.withUnsafeBufferPointer { n in diffNode(moved, n.baseAddress! + j, into: &changes) }
            }
            j &+= 1
        }
    }
}

extension SemanticNode.Detail {
    func differingFields(from other: Self) -> SemanticNode.Fields {
        var f: SemanticNode.Fields = []
        if level != other.level { f.insert(.level) }
        if spans != other.spans { f.insert(.spans) }
        if language != other.language { f.insert(.language) }
        if checked != other.checked { f.insert(.checked) }
        if variant != other.variant { f.insert(.variant) }
        if expanded != other.expanded { f.insert(.expanded) }
        if counts != other.counts { f.insert(.counts) }
        if selected != other.selected { f.insert(.selected) }
        if icon != other.icon { f.insert(.icon) }
        return f
    }
}

extension SemanticNode {
    static func text(_ field: Fields, of node: UnsafePointer<SemanticNode>) -> String? {
        switch field {
        case .label: return node.pointee.label
        case .value: return node.pointee.value
        case .accessibilityLabel: return node.pointee.accessibilityLabel
        case .accessibilityValue: return node.pointee.accessibilityValue
        default: return nil
        }
    }
}

// MARK: - Applying (a mirror)

extension SemanticNode {
    public enum ApplyError: Error, Equatable {
        /// An operation names a node the tree does not hold.
        case noNode(String)
        /// An index or a removed id does not match the children.
        case mismatch(String)
    }

    /// Applies `changes` in order, as a host's mirror of the tree does.
    public mutating func apply(_ changes: [TreeChange]) throws(ApplyError) {
        for change in changes { try apply(change) }
    }

    public mutating func apply(_ change: TreeChange) throws(ApplyError) {
        switch change {
        case .splice(let parent, let index, let removed, let inserted):
            try withNode(parent) { (node) throws(ApplyError) in
                guard index >= 0, index + removed.count <= node.children.count else {
                    throw .mismatch("splice at \(index) of \(node.children.count) children of \(parent)")
                }
                for (k, id) in removed.enumerated() where node.children[index + k].id != id {
                    throw .mismatch("splice removes \(id), found \(node.children[index + k].id)")
                }
                node.children.replaceSubrange(index..<(index + removed.count), with: inserted)
            }
        case .move(let id, let parent, let index):
            try withNode(parent) { (node) throws(ApplyError) in
                guard let from = node.children.firstIndex(where: { $0.id == id }) else { throw .noNode(id) }
                let moved = node.children.remove(at: from)
                guard index >= 0, index <= node.children.count else { throw .mismatch("move to \(index)") }
                node.children.insert(moved, at: index)
            }
        case .update(let id, let fields, let source):
            try withNode(id) { (node) throws(ApplyError) in node.take(fields, from: source) }
        case .append(let id, let field, let text):
            try withNode(id) { (node) throws(ApplyError) in node.append(text, to: field) }
        case .spans(let id, let keep, let spans):
            try withNode(id) { (node) throws(ApplyError) in
                guard var all = node.spans, keep >= 0, keep <= all.count else {
                    throw .mismatch("spans keep \(keep) of \(node.spans?.count ?? 0) of \(id)")
                }
                node.spans = nil  // held once: the kept spans are not copied
                let before = all.utf8Count
                all.removeSuffix(keeping: keep)
                var text: String
                if var value = node.value, value.utf8.count == before {
                    // The value is the spans' texts: it keeps the kept ones' bytes (a run ends where a character does).
                    node.value = nil
                    let utf8 = value.utf8
                    if all.utf8Count < before {
                        value = String(Substring(utf8[..<utf8.index(utf8.startIndex, offsetBy: all.utf8Count)]))
                    }
                    text = value
                } else {
                    text = ""
                    for span in all { text += span.text }
                }
                for span in spans { text += span.text }
                all.append(contentsOf: spans)
                node.spans = all
                node.value = text
                node.accessibilityValue = text
            }
        }
    }

    private mutating func withNode(_ id: String, _ body: (inout SemanticNode) throws(ApplyError) -> Void) throws(ApplyError) {
        guard try modifyNode(id, body) else { throw .noNode(id) }
    }

    private mutating func modifyNode(_ id: String, _ body: (inout SemanticNode) throws(ApplyError) -> Void) throws(ApplyError) -> Bool {
        if self.id == id {
            try body(&self)
            return true
        }
        for k in children.indices where try children[k].modifyNode(id, body) { return true }
        return false
    }
}

// MARK: - JSON

extension TreeChange {
    /// `{"op":"splice","parent":…,"index":…,"remove":[ids],"insert":[nodes]}`,
    /// `{"op":"move","id":…,"parent":…,"index":…}`,
    /// `{"op":"update","id":…,"set":{field: value, …}}`,
    /// `{"op":"append","id":…,"field":…,"text":…}`,
    /// `{"op":"spans","id":…,"keep":…,"spans":[…]}`. An update of what the
    /// JSON does not carry (`tap`) writes nothing; the answer is then false.
    @discardableResult
    func write(to w: inout JSONWriter) -> Bool {
        switch self {
        case .splice(let parent, let index, let removed, let inserted):
            w.objectStart()
            w.key("op"); w.staticString("splice")
            w.key("parent"); w.string(parent)
            w.key("index"); w.int(index)
            w.key("remove")
            w.arrayStart()
            for id in removed { w.string(id) }
            w.arrayEnd()
            w.key("insert")
            w.arrayStart()
            for node in inserted { node.write(to: &w) }
            w.arrayEnd()
            w.objectEnd()
        case .move(let id, let parent, let index):
            w.objectStart()
            w.key("op"); w.staticString("move")
            w.key("id"); w.string(id)
            w.key("parent"); w.string(parent)
            w.key("index"); w.int(index)
            w.objectEnd()
        case .update(let id, let fields, let node):
            guard !fields.subtracting(.tap).isEmpty else { return false }
            w.objectStart()
            w.key("op"); w.staticString("update")
            w.key("id"); w.string(id)
            w.key("set")
            w.objectStart()
            node.writeFields(fields, to: &w)
            w.objectEnd()
            w.objectEnd()
        case .append(let id, let field, let text):
            w.objectStart()
            w.key("op"); w.staticString("append")
            w.key("id"); w.string(id)
            w.key("field"); w.staticString(field.staticName ?? "")
            w.key("text"); w.string(text)
            w.objectEnd()
        case .spans(let id, let keep, let spans):
            w.objectStart()
            w.key("op"); w.staticString("spans")
            w.key("id"); w.string(id)
            w.key("keep"); w.int(keep)
            w.key("spans")
            w.arrayStart()
            for span in spans { span.write(to: &w) }
            w.arrayEnd()
            w.objectEnd()
        }
        return true
    }
}
