/// Which screen shows, and which field has the keyboard.
public struct NavigationState: Equatable, Sendable {
    public var screen: Screen = .onboarding
    /// The node that has keyboard focus (a text field tapped last).
    public var focusedNodeID: String?
    /// How far the message list is scrolled from its top, in points; nil
    /// follows the newest message (the list shows its end as it grows).
    public var messagesScroll: Int?
    /// How far a screen taller than the viewport (not the chat) is
    /// scrolled from its top, in points; 0 when another screen opens.
    public var screenScroll = 0
    /// Collapsible nodes the person opened or closed (`set_expanded`), the
    /// latest last; a node not named here shows as its role's default
    /// (a tool card closed, a long output folded). At most `expansionLimit`.
    public var expansions: [Expansion] = []

    public struct Expansion: Equatable, Sendable {
        public var nodeID: String
        public var expanded: Bool
    }

    /// The most nodes remembered: the oldest choice is forgotten first.
    public static let expansionLimit = 256

    /// Whether the node `id` is open, given its role's default.
    public func isExpanded(_ id: String, default value: Bool) -> Bool {
        var k = expansions.count
        while k > 0 {
            k &-= 1
            if expansions[k].nodeID == id { return expansions[k].expanded }
        }
        return value
    }

    public init() {}
}
