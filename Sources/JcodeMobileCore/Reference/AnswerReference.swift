/// docs/PROTOCOL.md's answer table, generated from `GatewayAnswer` (a test
/// checks the document against it; `make docs` rewrites it).
public enum AnswerReference {
    public static func markdown() -> String {
        var lines = [
            "| request | jcode answers with | ends (forgotten) at | where jcode does it |",
            "|---|---|---|---|",
        ]
        for answer in GatewayAnswer.all {
            lines.append("| `\(answer.request.rawValue)` | \(answer.sequence) | \(ending(answer.ending)) | \(answer.source) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func ending(_ ending: GatewayAnswer.Ending) -> String {
        switch ending {
        case .first(let events): return events.map { "`\($0.rawValue)`" }.joined(separator: " or ")
        case .doneAfterSession: return "the `done` after `session`, or `error`"
        case .never: return "never by id (the socket's end)"
        }
    }
}
