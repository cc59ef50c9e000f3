import XCTest
@testable import JcodeMobileCore

/// The section table (`StateSection.all`) as literals: a section added,
/// moved or given to another owner shows here first.
final class StateSectionTests: XCTestCase {
    func testSectionsInOrderWithTheirOwners() {
        let expected: [(String, FeatureID)] = [
            ("revision", .store), ("screen", .navigation), ("focused_node_id", .navigation), ("messages_scroll", .navigation),
            ("screen_scroll", .navigation),
            ("expanded_nodes", .navigation),
            ("connection", .connection), ("pairing", .pairing), ("servers", .servers), ("selected_server_id", .servers),
            ("session", .session), ("transcript", .chat), ("images", .chat), ("run_status", .chat), ("interrupted_turn", .chat), ("older_history", .chat), ("soft_interrupts", .chat), ("outbox", .chat),
            ("permission_requests", .approvals), ("stdin_requests", .approvals), ("notices", .notices), ("banners", .notices),
            ("draft", .composer), ("attachments", .composer), ("voice", .composer), ("lifecycle", .lifecycle),
            ("pending_effects", .store),
        ]
        XCTAssertEqual(StateSection.all.map(\.name), expected.map(\.0))
        XCTAssertEqual(StateSection.all.map(\.owner), expected.map(\.1))
        XCTAssertEqual(StateSection.all.map(\.index), Array(0..<expected.count))
        XCTAssertEqual(StateSection.named("session").alsoReads, [.chat])
        XCTAssertEqual(StateSection.named("banners").alsoReads, [.connection, .servers, .pairing, .chat])
        XCTAssertEqual(StateSection.named("run_status").alsoReads, [.approvals, .connection])
        XCTAssertEqual(StateSection.all.filter { !$0.alsoReads.isEmpty }.map(\.name), ["session", "run_status", "banners"])
        XCTAssertEqual(Snapshot.members.map(\.name), ["version", "device", "servers", "selected_server_id", "composer", "outbox"])
    }

    /// Every section's declared schema accepts the JSON it declares, and the
    /// snapshot's members theirs.
    func testEverySchemaValidatesItsJSON() {
        let validator = SchemaValidator(RuntimeSchema.document)
        for scenario in [Scenario.onboarding, .connectedChat, .toolApprovalRequired, .offlineQueuedMessage, .modelSwitchFailed] {
            let state = scenario.build().state
            for section in StateSection.all {
                XCTAssertEqual(validator.errors(state.json(of: section), section.schema(), at: "$"), [], "\(scenario.rawValue).\(section.name)")
            }
            let snapshot = Snapshot(of: state)
            for member in Snapshot.members {
                XCTAssertEqual(validator.errors(member.write(snapshot), member.schema(), at: "$"), [], "\(scenario.rawValue) snapshot.\(member.name)")
            }
        }
    }
}
