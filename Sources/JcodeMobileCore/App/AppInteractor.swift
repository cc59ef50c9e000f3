/// The root interactor: each input goes to the feature(s) that own it, as
/// `AppRouter` routes it, in the owner's own words; what is resolved
/// against the whole state (taps, scrolls) or replaces it (scenarios,
/// reset) is the root's own.
///
/// Features never see each other's mutations during one input: every owner
/// of an input reads the same `Facts`, taken before the input (and taken
/// only when an owner reads them: the streamed deltas, frames and
/// keystrokes need none). What one feature does that matters to another
/// travels as an output (`InternalInput`), which the store runs after the
/// input (in emission order), routed like any other input.
public struct AppInteractor: Sendable {
    /// What the root itself acts on.
    public enum Input: Equatable, Sendable {
        case tapNode(id: String)
        case tapXY(x: Double, y: Double)
        case scrollMessages(offset: Int)
        case scrollScreen(offset: Int)
        case scrollToMessage(index: Int)
        /// `copy`: the node's text, resolved against the tree.
        case copy(nodeID: String)
        /// Older messages now come first (`entriesAbove` entries before the
        /// ones shown before): the list keeps the same entries in view.
        case keepReadingPlace(entriesAbove: Int)
        case loadScenario(String)
        case reset
    }

    /// The screen the layout fills: what `tap_xy` and `scroll_messages`
    /// resolve against.
    let viewport: SemanticTree.Viewport

    public init(viewport: SemanticTree.Viewport = SemanticTree.Viewport()) {
        self.viewport = viewport
    }

    public func interact(_ state: inout AppState, _ input: JcodeMobileCore.Input) -> Emission {
        var reached: UInt32 = 0
        return interact(&state, route: AppRouter.route(input), reaching: &reached)
    }

    /// Delivers a routed input to its owners, adding to `reached` the
    /// features whose slices they may have changed (the root's own inputs
    /// may replace the whole state: every feature).
    func interact(_ state: inout AppState, route: AppRouter.Route, reaching reached: inout UInt32) -> Emission {
        switch route {
        case .nobody:
            return .none
        case .one(let delivery):
            reached |= delivery.reaches
            return deliver(delivery, &state)
        case .many(let deliveries):
            let facts = Self.facts(&state)
            var emission = Emission.none
            for delivery in deliveries {
                reached |= delivery.reaches
                emission.append(deliver(delivery, &state, facts: facts))
            }
            return emission
        }
    }

    /// Runs one owner on its slice, with the facts taken now for an owner
    /// that reads them (before the owner changes anything).
    private func deliver(_ delivery: AppRouter.Delivery, _ state: inout AppState) -> Emission {
        switch delivery {
        case .connectionFrame(let id, let items): return ConnectionInteractor.frame(state.connection, effectID: id, items: items)
        case .chatStream(let input): return ChatInteractor.stream(&state.chat, input)
        case .composer(let input): return ComposerInteractor().interact(&state.composer, input, ())
        case .notices(let input): return NoticesInteractor().interact(&state.notices, input, ())
        case .app(let input): return app(&state, input)
        case .navigation, .pairing, .servers, .connection, .session, .chat, .approvals, .lifecycle:
            let facts = Self.facts(&state)
            return deliver(delivery, &state, facts: facts)
        }
    }

    /// Runs one owner on its slice with `facts`, taken before the input
    /// (borrowed: one input's owners share them, never a copy).
    private func deliver(_ delivery: AppRouter.Delivery, _ state: inout AppState, facts: borrowing Facts) -> Emission {
        switch delivery {
        case .connectionFrame, .chatStream, .composer, .notices, .app: return deliver(delivery, &state)
        case .navigation(let input): return NavigationInteractor().interact(&state.navigation, input, facts)
        case .pairing(let input): return PairingInteractor().interact(&state.pairing, input, facts)
        case .servers(let input): return ServersInteractor().interact(&state.servers, input, facts)
        case .connection(let input): return ConnectionInteractor().interact(&state.connection, input, facts)
        case .session(let input): return SessionInteractor().interact(&state.session, input, facts)
        case .chat(let input): return ChatInteractor().interact(&state.chat, input, facts)
        case .approvals(let input): return ApprovalsInteractor().interact(&state.approvals, input, facts)
        case .lifecycle(let input): return LifecycleInteractor().interact(&state.lifecycle, input, facts)
        }
    }

    /// The facts of `state`, read in place.
    private static func facts(_ state: inout AppState) -> Facts {
        withUnsafePointer(to: &state) { Facts($0) }
    }

    private func app(_ state: inout AppState, _ input: Input) -> Emission {
        switch input {
        case .tapNode(let id):
            return Self.tap(id, in: state)
        case .tapXY(let x, let y):
            return tap(x: x, y: y, in: state)
        case .scrollMessages(let offset):
            return scrollMessages(to: offset, in: state)
        case .scrollScreen(let offset):
            return scrollScreen(to: offset, in: state)
        case .scrollToMessage(let index):
            return scrollToMessage(index, in: state)
        case .copy(let id):
            guard let text = SemanticTree.copyText(of: id, in: state) else {
                return .note("copy: no node \"\(id)\" with copy on this screen")
            }
            return .effect(.device(.copyToClipboard(text: text)))
        case .keepReadingPlace(let count):
            return keepReadingPlace(entriesAbove: count, in: state)
        case .loadScenario(let name):
            guard let scenario = Scenario(rawValue: name) else { return .note("unknown scenario \(name)") }
            return Self.replace(&state, with: scenario.state())
        case .reset:
            return Self.replace(&state, with: AppState())
        }
    }

    /// `tap_node`: does what the node's `supported_actions` promised, as
    /// the semantic layer resolves it.
    static func tap(_ nodeID: String, in state: AppState) -> Emission {
        switch SemanticTree.tapTarget(of: nodeID, in: state) {
        case .none: return .note("tap_node: no tappable node \"\(nodeID)\" on this screen")
        case .disabled: return .note("tap_node: \"\(nodeID)\" is disabled")
        case .focus: return .tell(.focus(nodeID: nodeID))
        case .action(let action): return .tapped(action)
        }
    }

    /// `tap_xy`: taps the deepest tappable node at the point, like `tap_node` would.
    func tap(x: Double, y: Double, in state: AppState) -> Emission {
        // The laid-out screen holds the message list's window only.
        let root = SemanticTree.build(state, viewport: viewport)
        guard let hit = SemanticTree.hitTest(root, x: x, y: y) else {
            return .note("tap_xy: (\(x), \(y)) is outside the \(viewport.width)×\(viewport.height) viewport")
        }
        guard let target = hit.tappable else { return .note("tap_xy: nothing tappable at (\(x), \(y)): \(hit.node.id)") }
        return Self.tap(target.id, in: state)
    }

    /// `scroll_messages`: an offset within the list keeps its place; one at
    /// or past the end follows the newest message.
    func scrollMessages(to offset: Int, in state: AppState) -> Emission {
        guard let scroll = SemanticTree.messagesScroll(state, viewport: viewport) else {
            return .note("scroll_messages: the message list is not on this screen")
        }
        return .tell(.scrollMessages(offset: offset >= scroll.maxOffset ? nil : offset))
    }

    /// `scroll_screen`: a screen taller than the viewport shows from
    /// `offset` points down (at most its end).
    func scrollScreen(to offset: Int, in state: AppState) -> Emission {
        guard state.navigation.screen != .chat else { return .note("scroll_screen: the chat scrolls its message list (scroll_messages)") }
        var unscrolled = state
        unscrolled.navigation.screenScroll = 0
        guard let scroll = SemanticTree.build(unscrolled, viewport: viewport).scroll else {
            return .note("scroll_screen: the \(state.navigation.screen.rawValue) screen fits the \(viewport.width)×\(viewport.height) viewport")
        }
        return .tell(.scrollScreen(offset: min(offset, scroll.maxOffset)))
    }

    /// `scroll_to_message`: the row's top at the list's top, where the
    /// layout places it for that offset, or the end when it is among the last.
    func scrollToMessage(_ index: Int, in state: AppState) -> Emission {
        guard state.navigation.screen == .chat, let frame = SemanticTree.chrome(state, viewport: viewport).list?.frame else {
            return .note("scroll_to_message: the message list is not on this screen")
        }
        let rows = MessageRows(state, width: frame.width)
        guard index < rows.count else { return scrollMessages(to: Int.max, in: state) }
        var measurer = Layout.RowMeasurer(rows: rows, x: frame.x, width: frame.width, cache: nil)
        return scrollMessages(to: Layout.topOf(index, rows: rows, frameHeight: frame.height, measurer: &measurer), in: state)
    }

    /// Entries were put before the ones the person was reading: the list
    /// scrolls down so the row at the top of the view stays where it was. A
    /// list following the newest message keeps following it.
    ///
    /// The layout places a windowed list's rows from the row at the offset,
    /// at its estimated top, or, near the top of the list, from the first
    /// row, measured (`Layout.placeMessages`). The row being read, and how
    /// far into it the offset was, are found as the list before the new
    /// rows placed them; the new offset puts that row where the list with
    /// them places it.
    func keepReadingPlace(entriesAbove count: Int, in state: AppState) -> Emission {
        guard let offset = state.navigation.messagesScroll, state.navigation.screen == .chat, count > 0 else { return .none }
        guard let frame = SemanticTree.chrome(state, viewport: viewport).list?.frame else { return .none }
        let rows = MessageRows(state, width: frame.width)
        let first = rows.hasOlder ? 1 : 0
        guard first &+ count < rows.count else { return .none }
        var measurer = Layout.RowMeasurer(rows: rows, x: frame.x, width: frame.width, cache: nil)
        // Row r of the list before is row r (the "load earlier" button) or r + count now.
        let before = rows.count &- count
        func now(_ r: Int) -> Int { r < first ? r : r &+ count }
        let inserted = rows.estimatedTop(first &+ count) &- rows.estimatedTop(first)
        func estimatedTopBefore(_ r: Int) -> Int { r <= first ? rows.estimatedTop(r) : rows.estimatedTop(now(r)) &- inserted }

        // Where the row being read was, and how far into it the offset was.
        var reading: Int
        var readingTop: Int
        var anchor = 0
        if before > Layout.exactRowLimit {
            var low = 0
            var high = before &- 1
            while low < high {
                let mid = (low &+ high &+ 1) / 2
                if estimatedTopBefore(mid) <= offset { low = mid } else { high = mid &- 1 }
            }
            anchor = low
        }
        if before <= Layout.exactRowLimit || Layout.rowsAbove(anchor, frameHeight: frame.height, { measurer.measure(now($0)).height }).reachTheTop {
            reading = 0
            readingTop = 0
            while reading < before &- 1 {
                let h = measurer.measure(now(reading)).height
                if readingTop &+ h > offset { break }
                readingTop &+= h
                reading &+= 1
            }
        } else {
            reading = anchor
            readingTop = estimatedTopBefore(anchor)
        }
        // Reading the "load earlier" button: the message under it keeps its place.
        while reading < first {
            readingTop &+= measurer.measure(reading).height
            reading &+= 1
        }
        let row = now(reading)
        let within = offset &- readingTop
        let top = Layout.topOf(row, within: within, rows: rows, frameHeight: frame.height, measurer: &measurer)
        return .tell(.scrollMessages(offset: top &+ within))
    }

    /// `load_scenario` and `reset`: replace the whole state, closing what the
    /// old one had open (so the host does too) and keeping the revision,
    /// effect ids, entry ids and the device identity moving forward so a
    /// host never sees one reused.
    static func replace(_ state: inout AppState, with replacement: AppState) -> Emission {
        let closing = ConnectionInteractor.closingEffects(state.connection, Facts(state))
        let revision = state.revision
        let nextEffectID = state.effects.nextID
        let nextSerial = state.chat.transcript.nextSerial
        let deviceID = state.lifecycle.deviceID
        let transcriptChanged = replacement.chat.transcript.entries != state.chat.transcript.entries
        state = replacement
        state.revision = revision
        state.lifecycle.deviceID = deviceID
        state.effects.advance(atLeast: nextEffectID)
        state.chat.transcript.advanceSerial(atLeast: nextSerial)
        if transcriptChanged { state.chat.transcript.recordReset() }
        return closing
    }
}
