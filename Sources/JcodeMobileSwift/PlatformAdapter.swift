@_exported import JcodeMobileCore

/// One effect the core asked the host to carry out, with the id its answers
/// must quote (`pair_finished`'s `effectID`, every `websocket_*` event of a
/// socket).
public struct RequestedEffect: Equatable, Sendable, CustomStringConvertible {
    public let id: EffectID
    public let effect: Effect

    public init(id: EffectID, effect: Effect) {
        self.id = id
        self.effect = effect
    }

    public var kind: EffectKind { effect.kind }

    /// `#7 http_pair`: the id and the type, never a field (fields may be secret).
    public var description: String { "#\(id) \(effect.type)" }
}

/// What one call into the core did.
public struct DispatchReport: Equatable, Sendable {
    /// The state's revision after the call.
    public let revision: Int
    /// Whether the call changed the state (the revision moved).
    public let changed: Bool
    /// The effects the call requested, in order (already handed to the adapter).
    public let effects: [RequestedEffect]

    public init(revision: Int, changed: Bool, effects: [RequestedEffect]) {
        self.revision = revision
        self.changed = changed
        self.effects = effects
    }
}

/// The platform side of the app, implemented by the host: it carries out the
/// effects the core requests (HTTP, the WebSocket, the Keychain, timers, the
/// camera…) and reports what happened as `PlatformEvent`s.
///
/// Threading. `perform` is called on the main actor, one effect at a time, in
/// the order the core requested them. It must return quickly: start slow work
/// (a request, a socket) and answer later through `events`, back on the main
/// actor (`await events.send(…)` from async code; from a callback queue, hop
/// with `DispatchQueue.main.async` in the order things happened). An answer
/// given synchronously inside `perform` is fine too: the view model queues it
/// and feeds it to the core after the effects requested before it have been
/// handed out, so answers never interleave with a batch of effects.
///
///     final class PhoneAdapter: PlatformAdapter {
///         func perform(_ request: RequestedEffect, events: PlatformEventSink) {
///             switch request.effect {
///             case .secureStore(.write(let key, let value)):
///                 let ok = keychain.set(value, for: key)
///                 events.send(.secureStore(.writeFinished(effectID: request.id, key: key, ok: ok)))
///             case .http(.pair(let host, let port, let useTLS, let code, let deviceID, let deviceName, let apnsToken)):
///                 Task { events.send(.http(.pairFinished(await pair(…, effectID: request.id)))) }
///             default: …
///             }
///         }
///     }
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
@MainActor
public protocol PlatformAdapter: AnyObject {
    /// Carries out one effect; answers (now or later) through `events`.
    func perform(_ request: RequestedEffect, events: PlatformEventSink)
}

/// Where an adapter delivers platform events: into the view model that
/// requested the effect. Holds the view model weakly, so an adapter may keep
/// it (a socket's reader does) without keeping the view model alive; events
/// sent after the view model is gone are dropped.
@available(macOS 14.0, iOS 17.0, tvOS 17.0, watchOS 10.0, *)
public struct PlatformEventSink: Sendable {
    private weak var viewModel: ViewModel?

    init(_ viewModel: ViewModel) {
        self.viewModel = viewModel
    }

    /// Feeds `event` to the core (queued behind the effects being handed out).
    @MainActor
    public func send(_ event: PlatformEvent) {
        viewModel?.receive(event)
    }

    /// `sink(event)` reads as `sink.send(event)`.
    @MainActor
    public func callAsFunction(_ event: PlatformEvent) {
        send(event)
    }
}

extension PlatformEvent {
    /// One text frame from the gateway (newline-delimited JSON events) as the
    /// `websocket_event` of the socket `socket` (its `websocket_connect`'s id).
    /// A malformed line is dropped with a reason the log keeps; the lines
    /// around it still count.
    public static func webSocketFrame(_ text: String, socket: EffectID) -> PlatformEvent {
        let items: [FrameItem]
        do {
            items = try ServerFrame.items(of: text)
        } catch {
            // Only a frame too large for memory gets here: say so rather than lose it silently.
            items = [.dropped("frame of \(text.utf8.count) bytes refused: \(error.message)")]
        }
        return .webSocket(.event(effectID: socket, items: items))
    }
}
