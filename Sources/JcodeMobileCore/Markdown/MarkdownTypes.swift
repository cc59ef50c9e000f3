// The public shapes of the markdown parser: blocks with inline spans.
//
// Coverage (CommonMark 0.31 + GFM), as tested by MarkdownTests.swift:
//   full:    thematic breaks, ATX headings, setext headings, indented code,
//            fenced code, block quotes, list items, lists, paragraphs, blank
//            lines, backslash escapes, code spans, emphasis, links, images,
//            autolinks, hard/soft breaks, tables, task lists, strikethrough
//   partial: tabs (columns inside containers follow the spec; a tab in a
//            paragraph is kept), HTML blocks and raw inline HTML (kept as
//            literal text; an inline tag longer than 64 KiB is text), link
//            reference definitions (labels are case-folded with lowercased(),
//            not full Unicode case folding), entities (a table of the common
//            named ones, every numeric one), extended autolinks (www., http://
//            and https://; no bare e-mail addresses)
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
    /// A link, an autolink or an image (whose run is its alt text and whose url is its source).
    public static let link = MarkdownStyle(rawValue: 16)
}

/// A run of inline text with one set of styles (adjacent runs with equal styles and url are merged).
public struct MarkdownSpan: Equatable, Sendable {
    public var text: String
    public var styles: MarkdownStyle
    public var url: String?
    public init(text: String, styles: MarkdownStyle = [], url: String? = nil) {
        self.text = text
        self.styles = styles
        self.url = url
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
    public var spans: [MarkdownSpan]
    /// list -> listItems; listItem/quote -> blocks; table -> rows; row -> cells.
    public var children: [MarkdownBlock]

    public init(kind: Kind, text: String = "", spans: [MarkdownSpan] = [], children: [MarkdownBlock] = []) {
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

public enum Markdown {
    /// How deep block quotes, lists and list items may nest; a deeper marker is text.
    public static let maxContainerDepth = 29
    /// The deepest a block tree can be (`MarkdownBlock.depth`): containers plus a table's three levels.
    public static let maxDepth = maxContainerDepth + 3

    /// Parses a whole document.
    public static func parse(_ text: String) -> [MarkdownBlock] {
        var text = text
        return text.withUTF8 { bytes in
            var parser = BlockParser(bytes: bytes, from: 0)
            return parser.run(definitions: [:]).nodes.compactMap(\.block)
        }
    }
}
