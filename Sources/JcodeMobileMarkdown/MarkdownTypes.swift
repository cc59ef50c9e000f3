// The public shapes of the markdown parser: blocks with inline spans.
//
// Coverage (CommonMark 0.31.2 + GFM 0.29): CommonMarkSpecTests.swift runs
// both specs' examples; every one agrees but raw HTML (HTML blocks are kept
// as their literal text, inline tags as text) and GFM's extended autolinks
// where plain CommonMark has text. docs/LIMITS.md, "Markdown", lists them.
// Entities: a table of the common named ones, every numeric one. Link titles
// are not kept.
// Caps: containers (block quotes, lists, list items) nest at most
// `Markdown.maxContainerDepth` (29) deep; a deeper marker is paragraph text,
// so a block tree is at most `Markdown.maxDepth` (32) levels deep even with a
// table (table, row, cell) at the bottom.

/// Inline styles of a run of text.
public struct MarkdownStyle: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let bold = MarkdownStyle(rawValue: 1)
    public static let italic = MarkdownStyle(rawValue: 2)
    public static let code = MarkdownStyle(rawValue: 4)
    public static let strikethrough = MarkdownStyle(rawValue: 8)
    /// A link or an autolink (its url is the target).
    public static let link = MarkdownStyle(rawValue: 16)
    /// An image: the run is its alt text (plain), `source` its source; `url` the link around it, if any.
    public static let image = MarkdownStyle(rawValue: 32)
    /// A hard line break (two spaces or a backslash before a newline): a run "\n" of its own
    /// (a soft break is a "\n" in plain text).
    public static let lineBreak = MarkdownStyle(rawValue: 64)
}

/// A run of inline text with one set of styles (adjacent runs with equal styles and url are merged;
/// an image is a run of its own).
public struct MarkdownSpan: Equatable, Sendable {
    public var text: String
    public var styles: MarkdownStyle
    /// A link's target.
    public var url: String?
    /// An image's source (`image` style).
    public var source: String?
    public init(text: String, styles: MarkdownStyle = [], url: String? = nil, source: String? = nil) {
        self.text = text
        self.styles = styles
        self.url = url
        self.source = source
    }
}

/// Column alignment of a GFM table, from its delimiter row.
public enum MarkdownAlignment: String, Sendable {
    case none, left, center, right
}

/// One block of a markdown document.
public struct MarkdownBlock: Equatable, Sendable {
    public enum Kind: Equatable, Sendable {
        case paragraph
        /// ATX and setext, 1...6.
        case heading(level: Int)
        /// start: the first number (1 for bullets).
        case list(ordered: Bool, start: Int, tight: Bool)
        /// GFM task item: true/false; nil when not a task.
        case listItem(checked: Bool?)
        case quote
        /// Fenced (language = the info string's first word) or indented (nil);
        /// open = the fence is not closed yet and runs to the end of the text.
        case codeBlock(language: String?, open: Bool)
        case table(alignments: [MarkdownAlignment])
        case tableRow(header: Bool)
        case tableCell(alignment: MarkdownAlignment)
        case thematicBreak
        /// An HTML block: shown as its literal text.
        case html
    }
    public var kind: Kind
    /// Plain text of the block's inline content (markers removed, entities and escapes resolved);
    /// for a code block: the code, without the fences, ending without the final newline; for containers: "".
    public var text: String
    /// Inline runs whose texts concatenate to `text`; empty when the whole text is plain
    /// (no style, no link) and for code blocks and containers.
    public var spans: MarkdownSpans
    /// list -> listItems; listItem/quote -> blocks; table -> rows; row -> cells.
    public var children: [MarkdownBlock]

    public init(kind: Kind, text: String = "", spans: MarkdownSpans = [], children: [MarkdownBlock] = []) {
        self.kind = kind
        self.text = text
        self.spans = spans
        self.children = children
    }

    /// Levels of this block's tree: 1 for a leaf.
    public var depth: Int {
        1 + (children.map(\.depth).max() ?? 0)
    }
}

/// An open fenced code block a text ends in, at the top or in list items
/// only: what its next line needs to be read as the parser reads it.
public struct OpenFenceLine: Equatable, Sendable {
    /// The columns of blanks a line needs to go on in the list items the fence is in (0 at the top).
    public var indent: Int
    /// The fence's own indent: that many blanks more at a line's start are not code.
    public var fenceOffset: Int
    /// The fence has a line of code, if only an empty one (false: the text
    /// ends on the fence's own line, or with that line's line ending).
    public var hasLines: Bool
    /// Its character (`` ` `` or `~`) and the length of its run: a line
    /// that begins with a run of it that long may close it.
    public var fenceChar: UInt8
    public var fenceLength: Int
}

public enum Markdown {
    /// How deep block quotes, lists and list items may nest; a deeper marker is text.
    public static let maxContainerDepth = 29
    /// The deepest a block tree can be (`MarkdownBlock.depth`): containers plus a table's three levels.
    public static let maxDepth = maxContainerDepth + 3

    /// The inline content of a paragraph whose only line is `line` (its
    /// text after the marks of the blocks it is in): its text and runs as the
    /// paragraph's block holds them, references resolved with `definitions`
    /// (normalized labels, as `MarkdownStream.definitions` holds them).
    /// `scratch`: buffers kept from one call to the next (one owner's, never
    /// used by two threads at once).
    public static func paragraphText(
        ofLine line: [UInt8], definitions: [String: String], scratch: MarkdownScratch? = nil
    ) -> (text: String, spans: MarkdownSpans) {
        let (text, spans, _) = InlineParser.parse(line, definitions: definitions, scratch: scratch?.inline)
        return (text, MarkdownSpans(spans))
    }

    /// The last cell of a table's row (`row`: its line from its first
    /// character that is not a blank, not ended): its text and runs as a
    /// parse reads them, and its index among the row's cells. Nil when that
    /// cell holds a backslash (an escaped pipe is read apart).
    package static func lastCellText(
        ofRow row: [UInt8], definitions: [String: String], scratch: MarkdownScratch? = nil
    ) -> (text: String, spans: MarkdownSpans, cell: Int)? {
        let cells = Table.cellBounds(row)
        guard let last = cells.last, !last.escaped else { return nil }
        let (text, spans, _) = InlineParser.parse(row, in: last.from..<last.to, definitions: definitions, scratch: scratch?.inline)
        return (text, MarkdownSpans(spans), cells.count &- 1)
    }

    /// Parses a whole document.
    public static func parse(_ text: String) -> [MarkdownBlock] {
        var text = text
        return text.withUTF8 { bytes in
            var parser = BlockParser(bytes: bytes, from: 0)
            return parser.run(definitions: [:]).nodes.compactMap(\.block)
        }
    }
}

/// Buffers an inline parse reuses from one call to the next
/// (`Markdown.paragraphText`); an owner's own, used by one thread at a time.
public final class MarkdownScratch {
    let inline = InlineScratch()
    public init() {}
}
