// TEMPORARY stubs until the helper modules merge. Not committed.
public struct MarkdownStyle: OptionSet, Sendable, Hashable { public let rawValue: UInt8; public init(rawValue: UInt8) { self.rawValue = rawValue } }
public struct MarkdownSpan: Equatable, Sendable { public var text: String; public var styles: MarkdownStyle; public var url: String? }
public enum MarkdownAlignment: String, Sendable { case none, left, center, right }
public struct MarkdownBlock: Equatable, Sendable {
  public enum Kind: Equatable, Sendable {
    case paragraph, heading(level: Int), list(ordered: Bool, start: Int, tight: Bool), listItem(checked: Bool?), quote
    case codeBlock(language: String?, open: Bool), table(alignments: [MarkdownAlignment]), tableRow(header: Bool), tableCell(alignment: MarkdownAlignment), thematicBreak, html
  }
  public var kind: Kind; public var text: String; public var spans: [MarkdownSpan]; public var children: [MarkdownBlock]
}
public enum Markdown { public static func parse(_ text: String) -> [MarkdownBlock] { [MarkdownBlock(kind: .paragraph, text: text, spans: [], children: [])] } }
public struct MarkdownStream: Sendable {
  public init() {}
  public private(set) var blocks: [MarkdownBlock] = []
  public private(set) var stableCount = 0
  @discardableResult public mutating func update(_ text: String, appendedOnly: Bool) -> Int { blocks = Markdown.parse(text); return 0 }
}
public enum ToolSummary { public static func summary(name: String, input: String) -> String { "" } }
public struct DiffLine: Equatable, Sendable { public enum Kind: String, Sendable { case added, removed, context }
  public var kind: Kind; public var text: String; public var oldLine: Int?; public var newLine: Int? }
public struct DiffHunk: Equatable, Sendable { public var oldStart: Int; public var newStart: Int; public var lines: [DiffLine]; public var header: String? }
public struct FileDiff: Equatable, Sendable { public var path: String; public var hunks: [DiffHunk]; public var added: Int; public var removed: Int; public var isNewFile: Bool; public var isDeletion: Bool; public var omittedLines: Int }
public enum ToolDiff { public static let lineLimit = 2000; public static func diffs(name: String, input: String) -> [FileDiff]? { nil } }
