import XCTest
@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// Drives one feature alone, in the spirit of Lattice's
/// `InteractorTestHarness` and TCA's exhaustive `TestStore`: a literal
/// starting slice, the facts the feature reads (literal too), and one of the
/// feature's own inputs per step. Each step states the expected slice as an
/// edit of the previous one, and the exact effects, outputs told to other
/// features (`InternalInput`: addressed by `AppRouter`), notes, app events
/// and ledger settlements; anything else the feature emitted fails (a host
/// action above all: features speak to each other by address only).
///
///     var composer = FeatureHarness(ComposerInteractor(), ComposerState())
///     composer.receive(.setDraft("hi")) { $0.draft = "hi" }
///     composer.receive(.attachImage, effects: [.device(.requestImagePicker)])
struct FeatureHarness<Feature: Interactor> where Feature.State: Equatable {
    let feature: Feature
    private(set) var state: Feature.State
    /// What the feature may read of the others (for the app's features, `Facts`).
    var context: Feature.Context

    init(_ feature: Feature, _ state: Feature.State, context: Feature.Context) {
        self.feature = feature
        self.state = state
        self.context = context
    }

    /// Everything one input made the feature emit, sorted by kind.
    struct Emitted: Equatable {
        var effects: [Effect] = []
        var tells: [InternalInput] = []
        var notes: [String] = []
        var events: [AppEvent] = []
        var settled: [EffectID] = []
        var other: [String] = []

        init(_ emission: Emission) { add(emission) }

        private mutating func add(_ emission: Emission) {
            switch emission.kind {
            case .none: break
            case .effect(let effect): effects.append(effect)
            case .input(.internal(let message)): tells.append(message)
            case .input(.action(let action)): other.append("action \(action.typeName)")
            case .input(let input): other.append("input \(input.name)")
            case .note(let note): notes.append(note.text)
            case .announce(let event): events.append(event)
            case .settle(let id): settled.append(id)
            case .settleAll(let kind): other.append("settle_all \(kind.rawValue)")
            case .scrub(let path): other.append("scrub \(path)")
            case .merge(let list): for e in list { add(e) }
            }
        }
    }

    /// Runs `input`; `expect` turns the previous slice into the expected one.
    mutating func receive(
        _ input: Feature.Input, effects: [Effect] = [], tells: [InternalInput] = [], notes: [String] = [],
        events: [AppEvent] = [], settled: [EffectID] = [],
        file: StaticString = #filePath, line: UInt = #line, _ expect: (inout Feature.State) -> Void = { _ in }
    ) {
        var expected = state
        expect(&expected)
        let emitted = Emitted(feature.interact(&state, input, context))
        check(emitted, effects: effects, tells: tells, notes: notes, events: events, settled: settled, file: file, line: line)
        XCTAssertEqual(state, expected, "the slice", file: file, line: line)
    }

    fileprivate func check(
        _ emitted: Emitted, effects: [Effect], tells: [InternalInput], notes: [String], events: [AppEvent], settled: [EffectID],
        file: StaticString, line: UInt
    ) {
        XCTAssertEqual(emitted.effects, effects, "effects", file: file, line: line)
        XCTAssertEqual(emitted.tells, tells, "outputs told", file: file, line: line)
        XCTAssertEqual(emitted.notes, notes, "notes", file: file, line: line)
        XCTAssertEqual(emitted.events, events, "app events", file: file, line: line)
        XCTAssertEqual(emitted.settled, settled, "settled effects", file: file, line: line)
        XCTAssertEqual(emitted.other, [], "nothing else", file: file, line: line)
    }
}

extension FeatureHarness where Feature == ChatInteractor {
    /// A streamed event (`text_delta`, `reasoning_delta`, `text_replace`,
    /// `tool_input`) handed to the chat alone, as the app hands it
    /// (`ChatInteractor.stream`: no facts, nothing else reached).
    /// `transcript`: the entries afterwards as the state JSON writes them;
    /// `expect` edits the rest of the slice.
    mutating func stream(
        _ event: ChatInteractor.Stream, notes: [String] = [], transcript: [JSONValue],
        file: StaticString = #filePath, line: UInt = #line, _ expect: (inout ChatState) -> Void = { _ in }
    ) {
        var expected = state
        expect(&expected)
        let emitted = Emitted(ChatInteractor.stream(&state, event))
        check(emitted, effects: [], tells: [], notes: notes, events: [], settled: [], file: file, line: line)
        compare(transcript: transcript, rest: expected, file: file, line: line)
    }

    /// `receive`, with the transcript stated as JSON entries.
    mutating func receive(
        _ input: ChatInteractor.Input, effects: [Effect] = [], tells: [InternalInput] = [], notes: [String] = [],
        events: [AppEvent] = [], transcript: [JSONValue],
        file: StaticString = #filePath, line: UInt = #line, _ expect: (inout ChatState) -> Void = { _ in }
    ) {
        var expected = state
        expect(&expected)
        let emitted = Emitted(feature.interact(&state, input, context))
        check(emitted, effects: effects, tells: tells, notes: notes, events: events, settled: [], file: file, line: line)
        compare(transcript: transcript, rest: expected, file: file, line: line)
    }

    private func compare(transcript: [JSONValue], rest expected: ChatState, file: StaticString, line: UInt) {
        XCTAssertEqual(state.transcript.entries.map(\.json), transcript, "the transcript", file: file, line: line)
        var rest = state
        rest.transcript = expected.transcript
        XCTAssertEqual(rest, expected, "the slice but its transcript", file: file, line: line)
    }
}

extension FeatureHarness where Feature.Context == Void {
    init(_ feature: Feature, _ state: Feature.State) { self.init(feature, state, context: ()) }
}

extension Facts {
    /// Facts written as literals: the defaults (nothing paired, offline)
    /// with what a specification sets.
    static func with(_ edit: (inout Facts) -> Void) -> Facts {
        var facts = Facts()
        edit(&facts)
        return facts
    }
}
