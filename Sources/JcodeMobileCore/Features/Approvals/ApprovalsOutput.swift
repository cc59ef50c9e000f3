/// What the approvals feature tells the others.
public enum ApprovalsOutput: Equatable, Sendable {
    /// A new `permission_request` waits for the person: the tool asks to run
    /// `action` ("bash") in `sessionID` (the request's, when it names one).
    case permissionAsked(action: String, sessionID: String?)
    /// A new `stdin_request` waits for the person's typed answer.
    case inputAsked(prompt: String)
}
