import XCTest
@testable import JcodeMobileCore

/// Every input goes to the feature(s) that own it, in their own words
/// (`AppRouter`), and only those run.
final class RoutingTests: XCTestCase {
    private func owners(_ input: Input) -> [String] {
        AppRouter.route(input).deliveries.map { "\($0.feature.rawValue).\($0.name)" }
    }

    func testAStreamedDeltaGoesToTheChatAlone() {
        XCTAssertEqual(owners(.server(.textDelta("a"))), ["chat.text_delta"])
        XCTAssertEqual(owners(.server(.toolInput(delta: "{"))), ["chat.tool_input"])
        XCTAssertEqual(owners(.platform(.webSocket(.event(effectID: nil, items: [])))), ["connection.frame"])
        XCTAssertEqual(owners(.action(.setDraft("typed"))), ["composer.set_draft"])
    }

    func testAnInputSeveralFeaturesActOnGoesToEachInTheFixedOrder() {
        XCTAssertEqual(owners(.server(.tokens(TokenUsage(input: 5, output: 2)))), ["session.tokens", "chat.tokens"])
        XCTAssertEqual(
            owners(.server(.history(ServerEvent.History(sessionID: "s", messages: [], images: [])))), ["connection.history", "session.history", "chat.history"])
        XCTAssertEqual(
            owners(.internal(.connection(.socketOpened))),
            ["navigation.socket_opened", "chat.socket_opened", "approvals.socket_opened", "notices.fresh_attempt"])
        // The lifecycle hears it too: in the background, a turn's end is a local notification.
        XCTAssertEqual(
            owners(.internal(.chat(.turnEnded(outcome: .done)))), ["session.turn_over", "approvals.nothing_waits", "lifecycle.turn_ended"])
        XCTAssertEqual(owners(.internal(.approvals(.permissionAsked(action: "bash", sessionID: nil)))), ["lifecycle.permission_asked"])
        XCTAssertEqual(owners(.internal(.approvals(.inputAsked(prompt: "Name:")))), ["lifecycle.input_asked"])
        // A lost connection ends the turn but not what the agent asked: an answer waits for the next one.
        XCTAssertEqual(owners(.internal(.connection(.connectionLost))), ["session.connection_lost", "chat.connection_lost"])
        // The session owns the answers to clear and rename_session; the chat, a turn's; the
        // connection forgets the request a done ends.
        XCTAssertEqual(owners(.server(.done(id: 3))), ["connection.answered", "session.done", "chat.done"])
        XCTAssertEqual(
            owners(.server(.error(id: 3, message: "busy", retryAfterSecs: 1))), ["connection.error", "session.error", "chat.error"])
    }

    func testWhoActsCanDependOnWhatTheInputSays() {
        XCTAssertEqual(owners(.action(.setWorkingDir("/src", serverID: nil))), ["pairing.set_working_dir"])
        XCTAssertEqual(owners(.action(.setWorkingDir("/src", serverID: "devbox:7643"))), ["servers.set_working_dir"])
        XCTAssertEqual(
            owners(.internal(.servers(.serverChanged(to: nil)))),
            ["navigation.server_changed", "connection.server_cleared", "session.server_changed", "chat.server_changed", "approvals.nothing_waits"])
    }

    func testAnEventOnlyLoggedReachesNoFeature() {
        XCTAssertEqual(AppRouter.route(.server(.loggedOnly(type: "memory_injected"))), .nobody("memory_injected: shown in the log only"))
    }

    /// The store skips the snapshot compare after the inputs whose route says
    /// they cannot change it (they arrive hundreds of times a second): they
    /// must never change what it holds.
    func testTheInputsTheStoreDoesNotPersistAfterLeaveTheSnapshotAlone() {
        let skipped: [Input] = [
            .server(.textDelta("a")), .server(.textReplace("b")), .server(.reasoningDelta("c")),
            .server(.toolInput(delta: "d")),
            .platform(.webSocket(.event(effectID: EffectID(4), items: [.event(.textDelta("e")), .event(.done(id: 3))]))),
        ]
        for scenario in Scenario.allCases {
            for input in skipped {
                XCTAssertFalse(AppRouter.route(input).mayChangeSnapshot, "\(input)")
                var state = scenario.state()
                let before = Snapshot(of: state)
                _ = AppInteractor().interact(&state, input)
                XCTAssertEqual(Snapshot(of: state), before, "\(scenario.rawValue): \(input)")
            }
        }
        XCTAssertTrue(AppRouter.route(.server(.done(id: 3))).mayChangeSnapshot, "a done can send the next outbox message")
        XCTAssertTrue(AppRouter.route(.action(.setDraft("typed"))).mayChangeSnapshot, "the draft is in the snapshot")
    }

    /// The change feed compares only the sections that read the slices an
    /// input reached: every other section must be unchanged. Every action,
    /// platform event, server event and feature output, in every fixture.
    func testAnInputChangesNoSectionOutsideTheFeaturesItReached() {
        var inputs: [Input] = OwnershipTable.examples(Action.wire).map { .action($0.value) }
        inputs += OwnershipTable.examples(PlatformEvent.wire).map { .platform($0.value) }
        inputs += OwnershipTable.examples(ServerEvent.wire).map { .server($0.value) }
        inputs += OwnershipTable.everyOutput.map { .internal($0) }
        XCTAssertGreaterThan(inputs.count, 200)
        for scenario in Scenario.allCases {
            for input in inputs {
                var state = scenario.state()
                let before = state
                var reached: UInt32 = FeatureID.store.bit  // the store issues and settles effects
                _ = AppInteractor().interact(&state, route: AppRouter.route(input), reaching: &reached)
                XCTAssertEqual(
                    state.changedSections(from: before, reaching: reached), state.changedSections(from: before),
                    "\(scenario.rawValue): \(input.name)")
            }
        }
    }
}
