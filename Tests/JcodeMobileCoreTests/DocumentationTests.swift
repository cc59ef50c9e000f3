import Foundation
import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON
import JcodeMobileTestSupport

/// docs/ABI.md embeds a reference generated from the wire definitions; this
/// test fails when the two drift. Run with JCODE_UPDATE_DOCS=1 to rewrite it.
final class DocumentationTests: XCTestCase {
    static let begin = "<!-- BEGIN GENERATED REFERENCE: do not edit; regenerate with `make docs` -->"
    static let end = "<!-- END GENERATED REFERENCE -->"

    func testABIReferenceMatchesTheWireDefinitions() throws {
        checkGeneratedPart(of: "docs/ABI.md", between: Self.begin, and: Self.end, is: ABIReference.markdown())
    }

    static let answersBegin = "<!-- BEGIN GENERATED ANSWERS: do not edit; regenerate with `make docs` -->"
    static let answersEnd = "<!-- END GENERATED ANSWERS -->"

    /// docs/PROTOCOL.md's "Answers" table is the answer table the core reads (`GatewayAnswer`).
    func testTheAnswerTableInPROTOCOLIsTheOneTheCoreReads() throws {
        checkGeneratedPart(of: "docs/PROTOCOL.md", between: Self.answersBegin, and: Self.answersEnd, is: AnswerReference.markdown())
    }

    static let tableBegin = "<!-- BEGIN GENERATED OWNERSHIP: do not edit; regenerate with `make docs` -->"
    static let tableEnd = "<!-- END GENERATED OWNERSHIP -->"

    /// docs/ARCHITECTURE.md's "Who owns what" is generated from the router,
    /// the state sections and the effect declarations.
    func testTheOwnershipTableMatchesTheCode() throws {
        checkGeneratedPart(of: "docs/ARCHITECTURE.md", between: Self.tableBegin, and: Self.tableEnd, is: OwnershipTable.markdown())
    }

    /// The text between the markers of a document is `generated` (or, with
    /// JCODE_UPDATE_DOCS=1, becomes it).
    private func checkGeneratedPart(
        of document: String, between begin: String, and end: String, is generated: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        let path = URLPath.repositoryRoot + "/" + document
        guard let text = readFile(path) else { return XCTFail("cannot read \(path)", file: file, line: line) }
        guard let start = text.range(of: begin)?.upperBound, let stop = text.range(of: end)?.lowerBound else {
            return XCTFail("\(document) lacks the generated-part markers", file: file, line: line)
        }
        if getenv("JCODE_UPDATE_DOCS") != nil {
            XCTAssertTrue(writeFile(path, String(text[..<start]) + "\n" + generated + String(text[stop...])), file: file, line: line)
            return
        }
        XCTAssertEqual(String(text[start..<stop]), "\n" + generated, "\(document) is stale: run `make docs`", file: file, line: line)
    }

    /// The table's outputs are every case of every output type (the compiler
    /// sees to it: OutputSamples.swift), each kind's examples of that kind.
    func testTheTableKnowsEveryOutputAndEachExampleIsOfItsKind() {
        func examplesAreOfTheirKind<Output: EnumeratedOutput>(_: Output.Type) {
            for kind in Output.Kind.allCases {
                let samples = Output.samples(of: kind)
                XCTAssertFalse(samples.isEmpty, "\(Output.self).\(kind)")
                XCTAssertTrue(samples.allSatisfy { $0.kind == kind }, "\(Output.self).\(kind)")
            }
        }
        examplesAreOfTheirKind(InternalInput.self)
        examplesAreOfTheirKind(PairingOutput.self)
        examplesAreOfTheirKind(LifecycleOutput.self)
        examplesAreOfTheirKind(ServersOutput.self)
        examplesAreOfTheirKind(ConnectionOutput.self)
        examplesAreOfTheirKind(SessionOutput.self)
        examplesAreOfTheirKind(ChatOutput.self)
        examplesAreOfTheirKind(ApprovalsOutput.self)
        examplesAreOfTheirKind(AppOutput.self)
        let names = Set(OwnershipTable.everyOutput.map(\.name))
        XCTAssertEqual(names.count, 37, "33 outputs of the eight features and 4 shared requests")
        XCTAssertTrue(names.isSuperset(of: ["history_lost", "clear_answered", "turn_started", "older_messages_shown", "session_asked", "reconnect_asked"]))
    }

    /// A few rows stated as literals, so the generator itself is checked.
    func testTheOwnershipTableNamesWhatEachFeatureOwns() {
        let rows = OwnershipTable.rows()
        XCTAssertEqual(rows[.composer]?.sections, ["draft", "attachments", "voice"])
        XCTAssertEqual(rows[.composer]?.actions, ["set_draft", "attach_image", "remove_attachment", "start_voice_input"])
        XCTAssertEqual(rows[.composer]?.platformEvents, ["speech_transcript", "image_attachment_selected"])
        XCTAssertEqual(rows[.composer]?.actsOn, ["composer_sent (chat)", "keep_in_draft (chat)"])
        XCTAssertEqual(rows[.composer]?.tells, [])
        XCTAssertEqual(rows[.composer]?.awaits, ["request_speech_transcript", "request_image_picker"])
        XCTAssertEqual(rows[.servers]?.actions, ["set_working_dir", "select_server", "forget_server"])
        XCTAssertEqual(rows[.pairing]?.actions.contains("set_working_dir"), true, "the form's working directory, without server_id")
        XCTAssertEqual(rows[.chat]?.tells, ["turn_ended", "composer_sent", "keep_in_draft", "turn_started", "older_messages_shown"])
        XCTAssertEqual(
            rows[.notices]?.actsOn,
            ["pairing_started (pairing)", "server_selected (servers)", "socket_opened (connection)", "session_switched (session)",
             "clear_answered (session)", "turn_started (chat)", "show_error", "notice"])
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

final class ProtocolDocumentTests: XCTestCase {
    /// The rows of docs/PROTOCOL.md: `type` → decision, for requests and for events.
    private func rows() -> (requests: [String: String], events: [String: String]) {
        guard let text = readFile(URLPath.repositoryRoot + "/docs/PROTOCOL.md") else {
            XCTFail("docs/PROTOCOL.md is missing")
            return ([:], [:])
        }
        var requests: [String: String] = [:]
        var events: [String: String] = [:]
        var section = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { section = String(line) }
            guard line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            let type = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            if section.hasPrefix("## Requests") { requests[type] = cells[2] }
            if section.hasPrefix("## Server events") { events[type] = cells[2] }
        }
        return (requests, events)
    }

    func testEveryEventTheCoreDecodesHasItsRowAndLoggedOnlyOnesSaySo() {
        let (_, events) = rows()
        for spec in ServerEvent.wire.members where spec.type != "permission_request" {
            XCTAssertNotNil(events[spec.type], "docs/PROTOCOL.md has no row for server event \(spec.type)")
        }
        for (type, _) in ServerEvent.loggedOnly {
            XCTAssertEqual(events[type], "logged only", type)
        }
        XCTAssertEqual(events.count, 71, "every ServerEvent of wire.rs at the documented commit")
    }

    func testEveryRequestTheCoreSendsIsSupportedInTheDocument() {
        let (requests, _) = rows()
        for kind in GatewayRequest.Kind.allCases where kind != .permissionResponse {
            XCTAssertEqual(requests[kind.rawValue]?.hasPrefix("supported"), true, "\(kind.rawValue) is sent, so its row says supported")
        }
        // The keep-alive sends ping now (it is one of the kinds above).
        XCTAssertEqual(requests["ping"], "supported")
        XCTAssertEqual(requests.count, 77, "every Request of wire.rs at the documented commit")
    }
}

func readFile(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

func writeFile(_ path: String, _ text: String) -> Bool {
    (try? text.write(toFile: path, atomically: true, encoding: .utf8)) != nil
}
