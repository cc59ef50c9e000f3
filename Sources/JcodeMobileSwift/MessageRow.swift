import Observation

/// One row of the conversation (a child of the `chat.messages` list): a
/// message with its tool cards, an outbox message, an image, "Load earlier
/// messages". Its own observable object, so a view drawing one row is told
/// when that row changes and not when another one does: a streamed delta
/// changes the row of the reply being streamed, nothing else.
///
///     ForEach(model.messages) { row in MessageView(row: row) }
///
/// A row keeps its identity (the same object, the same `id`) for as long as
/// the message list holds its node: changes to it are applied in place.
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
@MainActor
@Observable
public final class MessageRow: Identifiable {
    /// The row's node id: `message.m12`, `outbox.o3`, `image.2`, `chat.load_older`.
    public nonisolated let id: String

    @ObservationIgnored private var stored: SemanticNode

    /// The row's node and its subtree, as the core laid them out (bounds in
    /// the message list's content coordinates: on the screen at the list's
    /// top minus its scroll offset). A view reading it is told of every
    /// change of the row, including the core's layout moving it (when a row
    /// above it changes height).
    public var node: SemanticNode {
        access(keyPath: \.node)
        return stored
    }

    /// The same node, for a view that lays the row out itself (SwiftUI): a
    /// view reading it is told when what the row shows changes (a label, a
    /// text, a child), not when only its bounds moved.
    public var content: SemanticNode {
        access(keyPath: \.content)
        return stored
    }

    init(_ node: SemanticNode) {
        id = node.id
        stored = node
    }

    // MARK: - Changes (the view model's)

    /// Applies one operation inside the row's subtree, in place: observers
    /// of `node` are told, and those of `content` unless it moved bounds only.
    func apply(_ change: TreeChange) throws(SemanticNode.ApplyError) {
        var failure: SemanticNode.ApplyError?
        let body = {
            do throws(SemanticNode.ApplyError) {
                try self.stored.apply(change)
            } catch {
                failure = error
            }
        }
        if case .update(_, let fields, _) = change, fields.isSubset(of: .bounds) {
            withMutation(keyPath: \.node, body)
        } else {
            withMutation(keyPath: \.node) { withMutation(keyPath: \.content, body) }
        }
        if let failure { throw failure }
    }

    /// Takes `node` as the row's (a resync); nobody is told when it is the same.
    func replace(with node: SemanticNode) {
        guard node != stored else { return }
        withMutation(keyPath: \.node) { withMutation(keyPath: \.content) { stored = node } }
    }

    /// The children `range` of the row's node `parent` (to forget their ids).
    func children(of parent: String, _ range: Range<Int>) -> ArraySlice<SemanticNode> {
        guard let node = stored.find(parent), range.lowerBound >= 0, range.upperBound <= node.children.count else { return [] }
        return node.children[range]
    }
}
