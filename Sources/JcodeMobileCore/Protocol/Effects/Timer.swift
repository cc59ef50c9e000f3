import JcodeMobileJSON
import JcodeMobileWire

/// Timers: the core never reads the clock, it asks the host to wake it.
public enum TimerEffect: Equatable, Sendable {
    case schedule(timerID: String, afterMS: Int, purpose: String)
    case cancel(timerID: String)

    var encoded: EncodedMessage<EffectKind> {
        switch self {
        case .schedule(let id, let after, let purpose): return EncodedMessage(.scheduleTimer, [.string(id), .int(after), .string(purpose)])
        case .cancel(let id): return EncodedMessage(.cancelTimer, [.string(id)])
        }
    }

    static let specs: [EffectSpec] = [
        EffectSpec(
            .scheduleTimer,
            doc: "Report timer_fired {timer_id} after after_ms milliseconds. Scheduling an id that is pending replaces it.",
            fields: [
                FieldSpec("timer_id", .string), FieldSpec("after_ms", .integer(.count)),
                FieldSpec("purpose", .string, doc: "what the timer is for, e.g. \"reconnect\""),
            ], answeredBy: ["timer_fired"]),
        EffectSpec(.cancelTimer, doc: "Cancel a pending timer; it must not fire.", fields: [FieldSpec("timer_id", .string)]),
    ]
}

public enum TimerResult: Equatable, Sendable {
    case fired(timerID: String)

    static let specs: [MessageSpec<PlatformEvent>] = [
        MessageSpec("timer_fired", doc: "A scheduled timer fired.", fields: [FieldSpec("timer_id", .string)]) {
            r throws(CoreError) in
            .timer(.fired(timerID: try r.string("timer_id")))
        }
    ]
}
