/// What a session last said, in one line: the sessions list shows it under
/// the session's name. jcode lists its sessions by id only (`history`'s
/// `all_sessions`: no time, no preview), so what the app knows of a session
/// is what this device saw in it: the shown session's last message, and for
/// a session it left, its last message when it left.
public struct SessionPreview: Equatable, Sendable {
    /// Who said it: the person (`user`) or jcode (`assistant`).
    public var role: TranscriptEntry.Role
    /// Its first line of words (a heading's, quote's or list item's marker
    /// left out), at most `length` characters, ending in "…" when cut; or
    /// "used <tool>" for a reply of tool calls only.
    public var text: String

    /// A session this device left, and what it last said then.
    public struct Left: Equatable, Sendable {
        public var sessionID: String
        public var preview: SessionPreview
    }

    public static let length = 80
    /// How many entries from the end are read for one that says something.
    static let lookBack = 32

    /// The line the list shows: "You: …" or "jcode: …".
    public var line: String { (role == .user ? "You" : "jcode") + ": " + text }

    /// The last message of `transcript` that says something (the person's
    /// or jcode's, sent), among its last `lookBack` entries; nil when none.
    static func of(_ transcript: Transcript) -> SessionPreview? {
        for entry in transcript.entries.reversed().prefix(lookBack)
        where (entry.role == .user || entry.role == .assistant) && !entry.isQueued {
            if let words = firstLine(entry.text) { return SessionPreview(role: entry.role, text: words) }
            if let call = entry.toolCalls.last { return SessionPreview(role: entry.role, text: "used \(call.name)") }
        }
        return nil
    }

    /// The first line of `text` with words in it, its markdown block marker
    /// and surrounding blanks left out, cut to `length` characters.
    static func firstLine(_ text: String) -> String? {
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            var words = line.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
            // A heading's #s, a quote's >, a list item's bullet.
            words = words.drop { $0 == "#" || $0 == ">" }
            if let first = words.first, "-*+".contains(first), words.dropFirst().first == " " { words = words.dropFirst() }
            words = words.drop { $0 == " " || $0 == "\t" }
            while let last = words.last, last == " " || last == "\t" || last == "\r" { words = words.dropLast() }
            guard !words.isEmpty else { continue }
            let scalars = words.unicodeScalars
            guard scalars.count > length else { return String(words) }
            var cut = String.UnicodeScalarView()
            cut.append(contentsOf: scalars.prefix(length - 1))
            cut.append("…")
            return String(cut)
        }
        return nil
    }
}

extension ChatInteractor {
    /// The person leaves the session the transcript shows for `next`: what
    /// it last said is kept for the sessions list (the latest last, at most
    /// `ChatState.previewsLimit`).
    static func rememberPreview(_ state: inout ChatState, leaving next: String?) {
        guard let left = state.shownSessionID, left != next, let preview = SessionPreview.of(state.transcript) else { return }
        state.previews.removeAll { $0.sessionID == left }
        state.previews.append(SessionPreview.Left(sessionID: left, preview: preview))
        if state.previews.count > ChatState.previewsLimit { state.previews.removeFirst(state.previews.count - ChatState.previewsLimit) }
    }

    /// What session `id` last said, as far as this device knows: the shown
    /// session's last message, or what a session it left said then.
    static func preview(of id: String, in state: ChatState) -> SessionPreview? {
        // The shown session's own, or (its history still loading) what it said when this device left it.
        if id == state.shownSessionID, let shown = SessionPreview.of(state.transcript) { return shown }
        return state.previews.last { $0.sessionID == id }?.preview
    }
}
