import JcodeMobileSwift
import JcodeMobileSwiftTesting
import Testing

/// The harness itself: what it records, what it answers, how it fails.
@MainActor
@Suite struct HarnessTests {
    static func pairingReady() -> ViewModelTestHarness { ViewModelTestHarness(scenario: .pairingReady) }

    @Test func aScenarioHarnessStartsOnTheFixturesScreen() {
        #expect(ViewModelTestHarness(scenario: .connectedChat).screen == .chat)
        #expect(ViewModelTestHarness(scenario: .onboarding).screen == .onboarding)
    }

    @Test func effectsAreTakenOnceAndStayInTheRecord() throws {
        let harness = Self.pairingReady()
        harness.send(.submitPairing)

        #expect(harness.takeEffects().map(\.kind) == [.httpPair])
        #expect(harness.takeEffects() == [])
        #expect(harness.requested.map(\.kind) == [.httpPair])
    }

    @Test func anUnexpectedEffectFailsWithBothListsAndTheFieldsThatDiffer() {
        let harness = Self.pairingReady()
        harness.send(.submitPairing)

        let expected: [Effect] = [.http(.health(host: "devbox.local", port: 7643, useTLS: false))]
        do {
            try harness.expectEffects(expected)
            Issue.record("expectEffects accepted the wrong effect")
        } catch let failure as HarnessFailure {
            #expect(failure.description.hasPrefix(#"expected the effects ["http_health"], got ["http_pair"]; effect 0 differs: "#))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func expectingOneEffectOfAKindFailsWhenThereIsNone() {
        let harness = Self.pairingReady()
        #expect(throws: HarnessFailure.self) { try harness.expectEffect(.websocketConnect) }
    }

    @Test func effectsOfAKindCanBeAnsweredAutomatically() throws {
        let harness = Self.pairingReady()
        harness.answerAutomatically(.secureStoreWrite) { request in
            guard case .secureStore(.write(let key, _)) = request.effect else { return nil }
            return .secureStore(.writeFinished(effectID: request.id, key: key, ok: true))
        }
        harness.send(.submitPairing)
        let pair = try harness.expectEffect(.httpPair)

        harness.answer(.http(.pairFinished(PairResult(effectID: pair.id, ok: true, token: "t0k3n", serverName: "jcode"))))

        let log = String(decoding: harness.viewModel.app.logsJSON(limit: 2), as: UTF8.self)
        #expect(log.contains(#""type":"pair_finished""#))
        #expect(log.contains(#""type":"secure_store_write_finished""#))
        #expect(harness.requested.filter { $0.kind == .secureStoreWrite }.count == 1)
    }

    @Test func aMissingNodeIsNamedWithTheScreenItWasLookedFor() {
        let harness = Self.pairingReady()
        #expect(throws: HarnessFailure.self) { try harness.expectNode("chat.send") }
        #expect((try? harness.expectNode("pair.submit"))?.label == "Pair")
    }
}
