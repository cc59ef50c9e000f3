import Foundation
import XCTest
@testable import JcodeMobileMarkdown
import JcodeMobileTestSupport

/// The official examples of CommonMark 0.31.2 and GFM 0.29 (../shared/commonmark,
/// not copied into the project), each parsed by the core and its blocks rendered
/// to HTML by a small renderer of this test's own, compared with the spec's HTML
/// once both are normalised (whitespace between tags, attribute order, entities),
/// as the specs' normalize.py does. The titles of links and images are not kept by
/// the core: the comparison leaves `title` out.
///
/// An example whose only difference is raw HTML (inline tags the core keeps as
/// text) is counted apart. Every other miss is listed here by number and in
/// docs/LIMITS.md with why: a regression and an improvement both fail the test.
final class CommonMarkSpecTests: XCTestCase {
    /// CommonMark 0.31.2 examples that disagree (not raw HTML): GFM's extended autolinks,
    /// which the core applies everywhere, where CommonMark has plain text (docs/LIMITS.md).
    static let commonMarkMisses: [Int] = [608, 611, 612]
    /// GFM 0.29 examples that disagree (not raw HTML): the same three examples of its core
    /// part, written without the autolink extension.
    static let gfmMisses: [Int] = [616, 619, 620]

    struct Outcome {
        var agreed: [Int] = []
        var rawHTML: [Int] = []
        var misses: [Int] = []
        var report = ""
        var rawReport = ""
    }

    static func run(_ examples: [SpecExamples.Example]) -> Outcome {
        var outcome = Outcome()
        for example in examples {
            let ours = SpecHTML.normalize(SpecHTML.render(Markdown.parse(example.markdown)))
            let expected = SpecHTML.normalize(example.html)
            if ours == expected {
                outcome.agreed.append(example.number)
            } else if SpecHTML.isRawHTMLDifference(ours: ours, expected: expected) {
                outcome.rawHTML.append(example.number)
                outcome.rawReport += "== \(example.number) (\(example.section))\n\(example.markdown.debugDescription)\n"
                    + "expected: \(expected)\nours:     \(ours)\n"
            } else {
                outcome.misses.append(example.number)
                outcome.report += "== \(example.number) (\(example.section))\n\(example.markdown.debugDescription)\n"
                    + "expected: \(expected)\nours:     \(ours)\n"
            }
        }
        return outcome
    }

    private func check(_ file: String, misses expectedMisses: [Int], name: String) throws {
        guard let examples = SpecExamples.examples(file) else {
            throw XCTSkip("\(file) not found in ../shared/commonmark")
        }
        let outcome = Self.run(examples)
        let counted = examples.count - outcome.rawHTML.count
        let line = "\(name): \(outcome.agreed.count) of \(examples.count) agree; \(outcome.rawHTML.count) raw HTML kept as text "
            + "(\(outcome.rawHTML)); \(outcome.misses.count) misses \(outcome.misses)"
        print(line)
        if let path = ProcessInfo.processInfo.environment["SPEC_REPORT"] {
            try? (line + "\n" + outcome.report + "\nRAW\n" + outcome.rawReport).write(toFile: path + "." + name, atomically: true, encoding: .utf8)
        }
        XCTAssertGreaterThanOrEqual(Double(outcome.agreed.count), 0.99 * Double(counted), line)
        XCTAssertEqual(outcome.misses, expectedMisses, outcome.report)
        XCTAssertEqual(outcome.rawHTML.count, rawHTMLCount[name], "raw HTML: \(outcome.rawHTML)")
    }

    /// Examples whose only difference is raw HTML kept as text (an inline tag, comment or
    /// declaration; an HTML block the spec filters): counted apart.
    private let rawHTMLCount = ["CommonMark 0.31.2": 27, "GFM 0.29": 27]

    func testCommonMarkExamples() throws {
        try check("commonmark-0.31.2.json", misses: Self.commonMarkMisses, name: "CommonMark 0.31.2")
    }

    func testGFMExamples() throws {
        try check("gfm-0.29-spec.json", misses: Self.gfmMisses, name: "GFM 0.29")
    }

    /// The GFM extensions' own examples (tables, task lists, strikethrough, autolinks, tag filter).
    func testGFMExtensionExamples() throws {
        guard let examples = SpecExamples.examples("gfm-0.29-spec.json") else { throw XCTSkip("gfm-0.29-spec.json not found") }
        let outcome = Self.run(examples.filter { !$0.extensions.isEmpty })
        XCTAssertEqual(outcome.agreed.count, 23, outcome.report)
        // 653: the tag filter: inline tags are text here, and the HTML block `<xmp>` is kept as it is.
        XCTAssertEqual(outcome.rawHTML, [653])
        XCTAssertEqual(outcome.misses, [], outcome.report)
    }
}

/// What the conformance run found wrong, each held to its fix.
final class CommonMarkFixesTests: XCTestCase {
    func testADefinitionInAQuoteOrAListItemCountsForTheDocument() {
        XCTAssertEqual(Markdown.parse("[foo]\n\n> [foo]: /url\n")[0].spans, [MarkdownSpan(text: "foo", styles: .link, url: "/url")])
        XCTAssertEqual(Markdown.parse("- [bar]: /b\n\n[bar]\n")[1].spans, [MarkdownSpan(text: "bar", styles: .link, url: "/b")])
    }

    func testALoneCRIsALineEnding() {
        XCTAssertEqual(Markdown.parse("# a\rb\r\nc"), [
            MarkdownBlock(kind: .heading(level: 1), text: "a"), MarkdownBlock(kind: .paragraph, text: "b\nc"),
        ])
        XCTAssertEqual(Markdown.parse("~~~\rabc"), [MarkdownBlock(kind: .codeBlock(language: nil, open: true), text: "abc")])
    }

    func testALonePipeOverADelimiterRowIsAParagraph() {
        XCTAssertEqual(Markdown.parse("|\n-|\n"), [MarkdownBlock(kind: .paragraph, text: "|\n-|")])
    }

    func testTightAndLooseLists() {
        guard case .list(_, _, let tight) = Markdown.parse("* a\n  > b\n  >\n* c\n")[0].kind else { return XCTFail() }
        XCTAssertTrue(tight)
        guard case .list(_, _, let loose) = Markdown.parse("- a\n- b\n\n  [ref]: /url\n- d\n")[0].kind else { return XCTFail() }
        XCTAssertFalse(loose)
    }

    func testImagesHardBreaksAndEmptyLinksAreSpansOfTheirOwn() {
        XCTAssertEqual(Markdown.parse("[![*moon*](m.jpg)](/uri) x").first?.spans, [
            MarkdownSpan(text: "moon", styles: [.link, .image], url: "/uri", source: "m.jpg"), MarkdownSpan(text: " x"),
        ])
        XCTAssertEqual(Markdown.parse("![](a.png)").first?.spans, [MarkdownSpan(text: "", styles: .image, source: "a.png")])
        XCTAssertEqual(Markdown.parse("a  \nb\\\nc\nd").first?.spans, [
            MarkdownSpan(text: "a"), MarkdownSpan(text: "\n", styles: .lineBreak), MarkdownSpan(text: "b"),
            MarkdownSpan(text: "\n", styles: .lineBreak), MarkdownSpan(text: "c\nd"),
        ])
        XCTAssertEqual(Markdown.parse("[](/t)").first?.spans, [MarkdownSpan(text: "", styles: .link, url: "/t")])
    }

    func testBareEmailAndFTPAutolinks() {
        XCTAssertEqual(Markdown.parse("a.b-c_d@a.b. ftp://foo.bar.baz.").first?.spans, [
            MarkdownSpan(text: "a.b-c_d@a.b", styles: .link, url: "mailto:a.b-c_d@a.b"), MarkdownSpan(text: ". "),
            MarkdownSpan(text: "ftp://foo.bar.baz", styles: .link, url: "ftp://foo.bar.baz"), MarkdownSpan(text: "."),
        ])
        XCTAssertEqual(Markdown.parse("hello@mail+xyz.example a@b.c-").first?.spans, [])
    }

    func testLabelsAreCaseFolded() {
        XCTAssertEqual(Markdown.parse("[ẞ]\n\n[SS]: /url\n").first?.spans, [MarkdownSpan(text: "ẞ", styles: .link, url: "/url")])
    }
}

/// The test's renderer: blocks to HTML as a CommonMark renderer prints them, and the normaliser.
enum SpecHTML {
    static func render(_ blocks: [MarkdownBlock], tight: Bool = false) -> String {
        blocks.map { render($0, tight: tight) }.joined()
    }

    static func render(_ block: MarkdownBlock, tight: Bool) -> String {
        switch block.kind {
        case .paragraph:
            return tight ? inline(block) + "\n" : "<p>" + inline(block) + "</p>\n"
        case .heading(let level):
            return "<h\(level)>" + inline(block) + "</h\(level)>\n"
        case .thematicBreak:
            return "<hr />\n"
        case .codeBlock(let language, _):
            let info = language.map { " class=\"language-\(escape($0))\"" } ?? ""
            return "<pre><code\(info)>" + escape(block.text) + (block.text.isEmpty ? "" : "\n") + "</code></pre>\n"
        case .html:
            return block.text + "\n"
        case .quote:
            return "<blockquote>\n" + render(block.children) + "</blockquote>\n"
        case .list(let ordered, let start, let tight):
            let open = ordered ? (start == 1 ? "<ol>" : "<ol start=\"\(start)\">") : "<ul>"
            return open + "\n" + block.children.map { render($0, tight: tight) }.joined() + (ordered ? "</ol>\n" : "</ul>\n")
        case .listItem(let checked):
            let box = checked.map { "<input " + ($0 ? "checked=\"\" " : "") + "disabled=\"\" type=\"checkbox\" /> " } ?? ""
            return "<li>" + box + render(block.children, tight: tight) + "</li>\n"
        case .table(let alignments):
            var html = "<table>\n"
            for (r, row) in block.children.enumerated() {
                if r == 0 { html += "<thead>\n" }
                if r == 1 { html += "<tbody>\n" }
                html += "<tr>\n"
                for (c, cell) in row.children.enumerated() {
                    let tag = r == 0 ? "th" : "td"
                    let alignment = c < alignments.count && alignments[c] != .none ? " align=\"\(alignments[c].rawValue)\"" : ""
                    html += "<\(tag)\(alignment)>" + inline(cell) + "</\(tag)>\n"
                }
                html += "</tr>\n"
                if r == 0 { html += "</thead>\n" }
            }
            if block.children.count > 1 { html += "</tbody>\n" }
            return html + "</table>\n"
        case .tableRow, .tableCell:
            return ""
        }
    }

    /// The inline runs as nested tags: a style or link that starts at several runs at once
    /// opens the one that lasts longest first.
    static func inline(_ block: MarkdownBlock) -> String {
        let runs = block.spans.isEmpty ? [MarkdownSpan(text: block.text)] : block.spans
        enum Layer: Equatable { case bold, italic, strike, link(String) }
        func layers(_ run: MarkdownSpan) -> [Layer] {
            var result: [Layer] = []
            if run.styles.contains(.bold) { result.append(.bold) }
            if run.styles.contains(.italic) { result.append(.italic) }
            if run.styles.contains(.strikethrough) { result.append(.strike) }
            if run.styles.contains(.link), let url = run.url { result.append(.link(url)) }
            return result
        }
        func open(_ layer: Layer) -> String {
            switch layer {
            case .bold: return "<strong>"
            case .italic: return "<em>"
            case .strike: return "<del>"
            case .link(let url): return "<a href=\"\(escape(encodeURL(url)))\">"
            }
        }
        func close(_ layer: Layer) -> String {
            switch layer {
            case .bold: return "</strong>"
            case .italic: return "</em>"
            case .strike: return "</del>"
            case .link: return "</a>"
            }
        }
        var html = ""
        var stack: [Layer] = []
        for (i, run) in runs.enumerated() {
            let wanted = layers(run)
            // Close down to the deepest layer every one of which this run keeps.
            var keep = 0
            while keep < stack.count && wanted.contains(stack[keep]) { keep += 1 }
            while stack.count > keep { html += close(stack.removeLast()) }
            func extent(_ layer: Layer) -> Int {
                var j = i
                while j < runs.count && layers(runs[j]).contains(layer) { j += 1 }
                return j
            }
            let opening = wanted.filter { !stack.contains($0) }.sorted { extent($0) > extent($1) }
            for layer in opening {
                html += open(layer)
                stack.append(layer)
            }
            if run.styles.contains(.image) {
                html += "<img src=\"\(escape(encodeURL(run.source ?? "")))\" alt=\"\(escape(run.text))\" />"
            } else if run.styles.contains(.lineBreak) {
                html += "<br />\n"
            } else if run.styles.contains(.code) {
                html += "<code>" + escape(run.text) + "</code>"
            } else {
                html += escape(run.text)
            }
        }
        while let layer = stack.popLast() { html += close(layer) }
        return html
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for c in s.unicodeScalars {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// A url as CommonMark renderers print it: percent-encoded but for the characters a URL keeps.
    static func encodeURL(_ url: String) -> String {
        let keep = Set(";/?:@&=+$,-_.!~*'()#".utf8)
        let hex = Array("0123456789ABCDEF".utf8)
        let bytes = Array(url.utf8)
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let c = bytes[i]
            let isHex: (UInt8) -> Bool = { ($0 >= 48 && $0 <= 57) || (($0 | 0x20) >= 97 && ($0 | 0x20) <= 102) }
            if c == UInt8(ascii: "%") && i + 2 < bytes.count && isHex(bytes[i + 1]) && isHex(bytes[i + 2]) {
                out.append(c)
            } else if (c >= 48 && c <= 57) || ((c | 0x20) >= 97 && (c | 0x20) <= 122) || keep.contains(c) {
                out.append(c)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(c >> 4)], hex[Int(c & 15)]]
            }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Normalising

    private static let blockTags: Set<String> = [
        "p", "li", "ul", "ol", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "pre", "table", "thead", "tbody",
        "tr", "th", "td", "div",
    ]
    /// The tags this renderer prints.
    private static let ownTags: Set<String> = blockTags.subtracting(["div"]).union(["code", "em", "strong", "del", "a", "img", "br", "input"])

    private enum Token { case text(String), tag(name: String, closing: Bool, html: String), other(String) }

    /// HTML with whitespace runs made one space (outside `<pre>`), none next to block tags,
    /// entities decoded and the four specials escaped again, attributes sorted, `title` left out;
    /// inline styles as runs (`canonicalInline`).
    static func normalize(_ html: String) -> String {
        var tokens = tokenize(html)
        var inPre = 0
        for index in tokens.indices {
            switch tokens[index] {
            case .tag(let name, let closing, _):
                if name == "pre" { inPre += closing ? -1 : 1 }
            case .other:
                break
            case .text(var text):
                text = escape(decodeEntities(text))
                if inPre == 0 {
                    text = collapse(text)
                    if index == 0 || isBlock(tokens[index - 1]) { text = String(text.drop { $0 == " " }) }
                    if index + 1 == tokens.count || isBlock(tokens[index + 1]) {
                        while text.last == " " { text.removeLast() }
                    }
                }
                tokens[index] = .text(text)
            }
        }
        return canonicalInline(tokens)
    }

    private static let inlineTags: Set<String> = ["em", "strong", "del", "a"]

    /// The core keeps inline styles as runs of text with a set of styles, not as a tree: two
    /// `<em>` nested are one style, and of styles that start and end together which one is
    /// outside is not kept. Both sides are compared as such runs: each stretch of inline
    /// content between block tags is taken apart into runs and printed again, a style that
    /// lasts longer opened first (ties by name).
    private static func canonicalInline(_ tokens: [Token]) -> String {
        var out = ""
        var items: [(html: String, layers: [String])] = []
        var active: [(name: String, html: String)] = []
        func flush() {
            func name(_ layer: String) -> String {
                String(layer.dropFirst().prefix { $0 != " " && $0 != ">" })
            }
            var stack: [String] = []
            for (i, item) in items.enumerated() {
                var keep = 0
                while keep < stack.count && item.layers.contains(stack[keep]) { keep += 1 }
                while stack.count > keep { out += "</" + name(stack.removeLast()) + ">" }
                func extent(_ layer: String) -> Int {
                    var j = i
                    while j < items.count && items[j].layers.contains(layer) { j += 1 }
                    return j
                }
                let opening = item.layers.filter { !stack.contains($0) }
                    .sorted { extent($0) != extent($1) ? extent($0) > extent($1) : $0 < $1 }
                for layer in opening {
                    out += layer
                    stack.append(layer)
                }
                out += item.html
            }
            while let layer = stack.popLast() { out += "</" + name(layer) + ">" }
            items = []
        }
        func layers() -> [String] {
            var seen: [String] = []
            for layer in active where !seen.contains(layer.html) { seen.append(layer.html) }
            return seen
        }
        for token in tokens {
            switch token {
            case .tag(let name, let closing, let html) where blockTags.contains(name):
                flush()
                active = []
                _ = closing
                out += html
            case .tag(let name, let closing, let html) where inlineTags.contains(name):
                if closing {
                    if let k = active.lastIndex(where: { $0.name == name }) { active.remove(at: k) }
                } else {
                    active.append((name, html))
                }
            case .tag(_, _, let html), .other(let html):
                items.append((html, layers()))
            case .text(let text):
                if let last = items.last, last.layers == layers(), !last.html.hasPrefix("<") && !last.html.hasSuffix(">") {
                    items[items.count - 1].html += text
                } else {
                    items.append((text, layers()))
                }
            }
        }
        flush()
        return out
    }

    private static func isBlock(_ token: Token) -> Bool {
        if case .tag(let name, _, _) = token { return blockTags.contains(name) }
        return false
    }

    private static func collapse(_ text: String) -> String {
        var out = ""
        var space = false
        for c in text.unicodeScalars {
            if c == " " || c == "\n" || c == "\t" || c == "\r" {
                space = true
            } else {
                if space { out += " " }
                space = false
                out.unicodeScalars.append(c)
            }
        }
        if space { out += " " }
        return out
    }

    private static func tokenize(_ html: String) -> [Token] {
        let s = Array(html.unicodeScalars)
        var tokens: [Token] = []
        var text = ""
        var i = 0
        func flush() { if !text.isEmpty { tokens.append(.text(text)); text = "" } }
        while i < s.count {
            if s[i] == "<", i + 1 < s.count {
                if s[i + 1] == "!" || s[i + 1] == "?" {
                    let terminator: [Unicode.Scalar] = s[i + 1] == "?" ? ["?", ">"]
                        : (i + 3 < s.count && s[i + 2] == "-" && s[i + 3] == "-") ? ["-", "-", ">"] : [">"]
                    var j = i + 2
                    while j + terminator.count <= s.count && Array(s[j..<(j + terminator.count)]) != terminator { j += 1 }
                    let end = min(s.count, j + terminator.count)
                    flush()
                    tokens.append(.other(String(String.UnicodeScalarView(s[i..<end]))))
                    i = end
                    continue
                }
                if let (token, end) = tag(s, i) {
                    flush()
                    tokens.append(token)
                    i = end
                    continue
                }
            }
            text.unicodeScalars.append(s[i])
            i += 1
        }
        flush()
        return tokens
    }

    private static func isNameScalar(_ c: Unicode.Scalar) -> Bool {
        (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || (c >= "0" && c <= "9") || c == "-" || c == "_" || c == ":" || c == "."
    }

    /// A tag at `i`: its token (attributes sorted, `title` left out, no self-closing slash) and end.
    private static func tag(_ s: [Unicode.Scalar], _ start: Int) -> (Token, Int)? {
        var i = start + 1
        let closing = s[i] == "/"
        if closing { i += 1 }
        let nameStart = i
        while i < s.count && isNameScalar(s[i]) { i += 1 }
        guard i > nameStart else { return nil }
        let name = String(String.UnicodeScalarView(s[nameStart..<i])).lowercased()
        var attributes: [(String, String?)] = []
        while true {
            while i < s.count && (s[i] == " " || s[i] == "\n" || s[i] == "\t") { i += 1 }
            guard i < s.count else { return nil }
            if s[i] == ">" { i += 1; break }
            if s[i] == "/" && i + 1 < s.count && s[i + 1] == ">" { i += 2; break }
            let attributeStart = i
            while i < s.count && isNameScalar(s[i]) { i += 1 }
            guard i > attributeStart else { return nil }
            let attribute = String(String.UnicodeScalarView(s[attributeStart..<i])).lowercased()
            var value: String?
            if i < s.count && s[i] == "=" {
                i += 1
                guard i < s.count else { return nil }
                if s[i] == "\"" || s[i] == "'" {
                    let quote = s[i]
                    let valueStart = i + 1
                    i += 1
                    while i < s.count && s[i] != quote { i += 1 }
                    guard i < s.count else { return nil }
                    value = String(String.UnicodeScalarView(s[valueStart..<i]))
                    i += 1
                } else {
                    let valueStart = i
                    while i < s.count && s[i] != " " && s[i] != ">" { i += 1 }
                    value = String(String.UnicodeScalarView(s[valueStart..<i]))
                }
            }
            if attribute != "title" { attributes.append((attribute, value)) }
        }
        attributes.sort { $0.0 < $1.0 }
        var html = "<" + (closing ? "/" : "") + name
        for (attribute, value) in attributes {
            html += " " + attribute
            if let value { html += "=\"" + escape(decodeEntities(value)) + "\"" }
        }
        html += ">"
        return (.tag(name: name, closing: closing, html: html), i)
    }

    private static let entities: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "copy": "©",
    ]

    static func decodeEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        let s = Array(text.unicodeScalars)
        var out = ""
        var i = 0
        while i < s.count {
            if s[i] == "&", let semicolon = s[i...].prefix(40).firstIndex(of: ";") {
                let body = String(String.UnicodeScalarView(s[(i + 1)..<semicolon]))
                var decoded: String?
                if body.hasPrefix("#x") || body.hasPrefix("#X") {
                    decoded = UInt32(body.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
                } else if body.hasPrefix("#") {
                    decoded = UInt32(body.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
                } else {
                    decoded = entities[body]
                }
                if let decoded {
                    out += decoded
                    i = semicolon + 1
                    continue
                }
            }
            out.unicodeScalars.append(s[i])
            i += 1
        }
        return out
    }

    /// Whether the difference is raw HTML: the spec keeps a tag or comment this renderer
    /// never prints, or ours shows as text (`&lt;tag`) a tag the spec passes through.
    static func isRawHTMLDifference(ours: String, expected: String) -> Bool {
        for token in tokenize(expected) + tokenize(ours) {
            switch token {
            case .other: return true
            case .tag(let name, _, _) where !ownTags.contains(name): return true
            default: continue
            }
        }
        func escapedTags(_ s: String) -> Int {
            let scalars = Array(s.unicodeScalars)
            var count = 0
            for i in scalars.indices where i + 4 < scalars.count && String(String.UnicodeScalarView(scalars[i..<(i + 4)])) == "&lt;" {
                let c = scalars[i + 4]
                if (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") || c == "/" || c == "!" || c == "?" { count += 1 }
            }
            return count
        }
        return escapedTags(ours) > escapedTags(expected)
    }
}
