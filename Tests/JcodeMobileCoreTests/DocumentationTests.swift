import Foundation
import XCTest
@testable import JcodeMobileCore

/// docs/ABI.md embeds a reference generated from the wire definitions; this
/// test fails when the two drift. Run with JCODE_UPDATE_DOCS=1 to rewrite it.
final class DocumentationTests: XCTestCase {
    static let begin = "<!-- BEGIN GENERATED REFERENCE: do not edit; regenerate with `make docs` -->"
    static let end = "<!-- END GENERATED REFERENCE -->"

    func testABIReferenceMatchesTheWireDefinitions() throws {
        let path = URLPath.repositoryRoot + "/docs/ABI.md"
        guard let text = readFile(path) else { return XCTFail("cannot read \(path)") }
        guard let start = text.range(of: Self.begin)?.upperBound, let stop = text.range(of: Self.end)?.lowerBound else {
            return XCTFail("docs/ABI.md lacks the generated-reference markers")
        }
        let generated = "\n" + ABIReference.markdown()
        if getenv("JCODE_UPDATE_DOCS") != nil {
            let updated = String(text[..<start]) + generated + String(text[stop...])
            XCTAssertTrue(writeFile(path, updated))
            return
        }
        XCTAssertEqual(String(text[start..<stop]), generated, "docs/ABI.md is stale: run `make docs`")
    }

    func testEveryExampleInTheReferenceDecodes() {
        for spec in Action.wire.members {
            let example = ABIReference.example(type: spec.type, spec.fields)
            XCTAssertNoThrow(try Action.wire.decode(JSONParser.parse(example)), example)
        }
        for spec in PlatformEvent.wire.members {
            let example = ABIReference.example(type: spec.type, spec.fields)
            XCTAssertNoThrow(try PlatformEvent.wire.decode(JSONParser.parse(example)), example)
        }
        for spec in ServerEvent.wire.members {
            let example = ABIReference.example(type: spec.type, spec.fields)
            XCTAssertNoThrow(try ServerEvent.wire.decode(JSONParser.parse(example)), example)
        }
    }
}

enum URLPath {
    /// The repository root, found from this file's path.
    static var repositoryRoot: String {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/JcodeMobileCoreTests/DocumentationTests.swift
        return parts.joined(separator: "/")
    }
}

func readFile(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

func writeFile(_ path: String, _ text: String) -> Bool {
    (try? text.write(toFile: path, atomically: true, encoding: .utf8)) != nil
}
