@_spi(Leaves) import JcodeMobileJSON
import JcodeMobileWire

/// What the person using the app wants (`jcode_mobile_dispatch`), named after
/// intent rather than after the state change it causes.
public enum Action: Equatable, Sendable {
    // Pairing form
    case setHost(String)
    case setPort(String)
    case setPairCode(String)
    case setDeviceName(String)
    /// The pairing form's working directory (no server id) or a saved server's.
    case setWorkingDir(String, serverID: String?)
    case submitPairing
    case scanQR
    case checkServer
    // Composer and chat
    case setDraft(String)
    case sendMessage(text: String?)
    case interrupt
    case queueInterrupt(text: String, urgent: Bool)
    case cancelQueuedInterrupts
    /// Send again an outbox message that failed (`delivery: "failed"`).
    case retryMessage(id: String)
    /// Take a failed outbox message out of the outbox; its text goes back to the draft.
    case discardMessage(id: String)
    case attachImage
    case removeAttachment(id: String)
    case startVoiceInput
    // Servers and connection
    case selectServer(id: String)
    case forgetServer(id: String)
    /// Open the pairing form filled from a saved server (its address and
    /// working directory), to pair it again with a new code.
    case pairAgain(id: String)
    case retryConnection
    case disconnect
    // Session and model
    case resumeSession(id: String)
    case setModel(String)
    case setReasoningEffort(String)
    case compact
    case renameSession(title: String)
    /// The rename field's text (the title `rename_session` will ask for).
    case setRenameDraft(String)
    case clearConversation
    // Requests from the agent
    case respondPermission(requestID: String, approved: Bool, remember: Bool)
    case respondStdin(requestID: String, input: String)
    // Banners and navigation
    case dismissError
    case dismissNotice(id: String)
    /// Close the offer to continue an interrupted turn.
    case dismissInterruptedTurn
    /// Continue the interrupted turn: its continuation goes as a message's
    /// `system_reminder` (through the outbox).
    case continueInterruptedTurn
    /// Ask the server now whether the turn shown still runs (Retry when
    /// jcode is not answering).
    case checkTurn
    /// Load older messages of a compacted conversation.
    case loadOlderMessages
    case navigate(Screen)
    case tapNode(id: String)
    /// Tap whatever is at a point of the viewport (points, origin top-left).
    case tapXY(x: Double, y: Double)
    /// Scroll the message list so `offset` points of its content lie above its top.
    case scrollMessages(offset: Int)
    case scrollScreen(offset: Int)
    /// Scroll the message list so its row `index` is at the list's top.
    case scrollToMessage(index: Int)
    /// Open or close a collapsible node (a tool card, reasoning, a long output or diff).
    case setExpanded(nodeID: String, expanded: Bool)
    /// Copy a node's text (a code block's code, a message): `copy_to_clipboard`.
    case copy(nodeID: String)
    // Whole-app
    case loadScenario(String)
    case reset

    /// Every action, with its fields: decoding, redaction and docs.
    public static let wire = WireUnion<Action>("action", specs)

    private static let value = [FieldSpec("value", .string)]

    /// A keystroke, `{"type":"set_draft","value":…}`, read straight from the
    /// tape (the hot path of typing): what its spec below decodes, with no
    /// field of it secret (`WireSpecTests` holds the two to the same
    /// answers). nil for any other action, and for a `value` that is not a
    /// string (the spec then says why).
    static func keystroke(in tape: JSONTape) -> Action? {
        guard tape.kind(at: 0) == .object else { return nil }
        let (type, value) = tape.members("type", "value", of: 0)
        guard let type, let value, tape.kind(at: type) == .string, tape.kind(at: value) == .string,
              tape.stringEquals(type, "set_draft")
        else { return nil }
        return .setDraft(tape.string(at: value))
    }

    static let specs: [MessageSpec<Action>] = [
        MessageSpec("set_host", doc: "Edit the server host field.", fields: value) { r throws(CoreError) in
            .setHost(try r.string("value"))
        },
        MessageSpec(
            "set_port", doc: "Edit the port field (empty means 7643).", fields: [FieldSpec("value", .stringOrInteger(.port))]
        ) { r throws(CoreError) in
            .setPort(try r.stringOrInteger("value"))
        },
        MessageSpec(
            "set_pair_code", doc: "Edit the 6-digit pairing code field.",
            fields: [FieldSpec("value", .stringOrInteger(IntegerRange(0...999_999)), secret: true)]
        ) { r throws(CoreError) in
            .setPairCode(try r.stringOrInteger("value"))
        },
        MessageSpec("set_device_name", doc: "Edit the device name sent when pairing.", fields: value) {
            r throws(CoreError) in
            .setDeviceName(try r.string("value"))
        },
        MessageSpec(
            "set_working_dir",
            doc: "Edit the absolute path on the server where sessions run: the pairing form's, or a saved server's (server_id; reconnects when it is the one in use).",
            fields: [FieldSpec("value", .string), .optional("server_id", .string)]
        ) { r throws(CoreError) in
            .setWorkingDir(try r.string("value"), serverID: try r.optionalString("server_id"))
        },
        MessageSpec("submit_pairing", doc: "Pair with the server in the form.") { _ throws(CoreError) in .submitPairing },
        MessageSpec("scan_qr", doc: "Open the camera to scan a pairing QR code.") { _ throws(CoreError) in .scanQR },
        MessageSpec("check_server", doc: "Check whether a jcode gateway answers at the host and port in the form.") {
            _ throws(CoreError) in .checkServer
        },
        MessageSpec("set_draft", doc: "Edit the message being composed.", fields: value) { r throws(CoreError) in
            .setDraft(try r.string("value"))
        },
        MessageSpec(
            "send_message", doc: "Send text (default: the draft) with the attachments; queued in the outbox while offline.",
            fields: [.optional("text", .string)]
        ) { r throws(CoreError) in
            .sendMessage(text: try r.optionalString("text"))
        },
        MessageSpec("interrupt", doc: "Cancel the running turn.") { _ throws(CoreError) in .interrupt },
        MessageSpec(
            "queue_interrupt", doc: "Tell the agent something while a turn runs (a soft interrupt).",
            fields: [FieldSpec("text", .string), .optional("urgent", .boolean)]
        ) { r throws(CoreError) in
            .queueInterrupt(text: try r.string("text"), urgent: try r.bool("urgent", default: false))
        },
        MessageSpec("cancel_queued_interrupts", doc: "Withdraw the soft interrupts not yet delivered.") {
            _ throws(CoreError) in .cancelQueuedInterrupts
        },
        MessageSpec(
            "retry_message", doc: "Send again a message of the outbox that failed to be delivered.",
            fields: [FieldSpec("message_id", .string)]
        ) { r throws(CoreError) in
            .retryMessage(id: try r.string("message_id"))
        },
        MessageSpec(
            "discard_message",
            doc: "Give up a message of the outbox that failed to be delivered: it leaves the outbox, its text goes back to the draft (after what is there), its images go with it, and the messages behind it go on.",
            fields: [FieldSpec("message_id", .string)]
        ) { r throws(CoreError) in
            .discardMessage(id: try r.string("message_id"))
        },
        MessageSpec("attach_image", doc: "Pick an image to attach.") { _ throws(CoreError) in .attachImage },
        MessageSpec(
            "remove_attachment", doc: "Remove an attachment from the composer.",
            fields: [FieldSpec("attachment_id", .string)]
        ) { r throws(CoreError) in
            .removeAttachment(id: try r.string("attachment_id"))
        },
        MessageSpec("start_voice_input", doc: "Dictate into the draft.") { _ throws(CoreError) in .startVoiceInput },
        MessageSpec(
            "select_server", doc: "Connect to a saved server.", fields: [FieldSpec("server_id", .string)]
        ) { r throws(CoreError) in
            .selectServer(id: try r.string("server_id"))
        },
        MessageSpec(
            "forget_server", doc: "Forget a saved server and delete its token.", fields: [FieldSpec("server_id", .string)]
        ) { r throws(CoreError) in
            .forgetServer(id: try r.string("server_id"))
        },
        MessageSpec(
            "pair_again", doc: "Open the pairing form filled from a saved server (host, port, working directory): only a new code is missing.",
            fields: [FieldSpec("server_id", .string)]
        ) { r throws(CoreError) in
            .pairAgain(id: try r.string("server_id"))
        },
        MessageSpec("retry_connection", doc: "Reconnect now.") { _ throws(CoreError) in .retryConnection },
        MessageSpec("disconnect", doc: "Close the connection and stay disconnected.") { _ throws(CoreError) in .disconnect },
        MessageSpec(
            "resume_session", doc: "Switch to another session of the server.", fields: [FieldSpec("session_id", .string)]
        ) { r throws(CoreError) in
            .resumeSession(id: try r.string("session_id"))
        },
        MessageSpec("set_model", doc: "Switch the session's model.", fields: [FieldSpec("model", .string)]) {
            r throws(CoreError) in
            .setModel(try r.string("model"))
        },
        MessageSpec(
            "set_reasoning_effort", doc: "Change the model's reasoning effort.", fields: [FieldSpec("effort", .string)]
        ) { r throws(CoreError) in
            .setReasoningEffort(try r.string("effort"))
        },
        MessageSpec("compact", doc: "Compact the session's context.") { _ throws(CoreError) in .compact },
        MessageSpec("rename_session", doc: "Rename the current session.", fields: [FieldSpec("title", .string)]) {
            r throws(CoreError) in
            .renameSession(title: try r.string("title"))
        },
        MessageSpec("set_rename_draft", doc: "Edit the rename field of the current session.", fields: value) {
            r throws(CoreError) in
            .setRenameDraft(try r.string("value"))
        },
        MessageSpec(
            "clear_conversation", doc: "Clear the conversation: it empties when the server accepts (a fresh session)."
        ) { _ throws(CoreError) in
            .clearConversation
        },
        MessageSpec(
            "respond_permission", doc: "Approve or deny a tool permission request.",
            fields: [FieldSpec("request_id", .string), FieldSpec("approved", .boolean), .optional("remember", .boolean)]
        ) { r throws(CoreError) in
            .respondPermission(
                requestID: try r.string("request_id"), approved: try r.bool("approved"),
                remember: try r.bool("remember", default: false))
        },
        MessageSpec(
            "respond_stdin", doc: "Answer a tool's input prompt.",
            fields: [FieldSpec("request_id", .string), FieldSpec("input", .string, secret: true)]
        ) { r throws(CoreError) in
            .respondStdin(requestID: try r.string("request_id"), input: try r.string("input"))
        },
        MessageSpec("dismiss_error", doc: "Close the error banner.") { _ throws(CoreError) in .dismissError },
        MessageSpec("dismiss_notice", doc: "Close a notice.", fields: [FieldSpec("notice_id", .string)]) {
            r throws(CoreError) in
            .dismissNotice(id: try r.string("notice_id"))
        },
        MessageSpec("dismiss_interrupted_turn", doc: "Close the offer to continue a turn the server stopped.") {
            _ throws(CoreError) in .dismissInterruptedTurn
        },
        MessageSpec(
            "continue_interrupted_turn",
            doc: "Continue a turn the server stopped: its continuation goes as a message with an empty content and the continuation as system_reminder (through the outbox, once)."
        ) { _ throws(CoreError) in .continueInterruptedTurn },
        MessageSpec(
            "check_turn",
            doc: "Ask the server now whether the turn shown still runs (get_history; its activity says): Retry when jcode is not answering."
        ) { _ throws(CoreError) in .checkTurn },
        MessageSpec("load_older_messages", doc: "Load older messages of a compacted conversation (get_compacted_history).") {
            _ throws(CoreError) in .loadOlderMessages
        },
        MessageSpec(
            "navigate", doc: "Show a screen.", fields: [FieldSpec("screen", .enumeration(Screen.allCases.map(\.rawValue)))]
        ) { r throws(CoreError) in
            .navigate(try r.enumeration("screen", as: Screen.self))
        },
        MessageSpec("tap_node", doc: "Tap a node of the semantic tree.", fields: [FieldSpec("node_id", .string)]) {
            r throws(CoreError) in
            .tapNode(id: try r.string("node_id"))
        },
        MessageSpec(
            "tap_xy",
            doc: "Tap the point (x, y) of the viewport, in points from its top-left corner: the deepest tappable node there, as hit_test finds it (scrolling included). A coordinate that is not a finite number (`1e400`) is refused as hit_test refuses it: `invalid_field`, naming the number as written.",
            fields: [FieldSpec("x", .number), FieldSpec("y", .number)]
        ) { r throws(CoreError) in
            .tapXY(x: try r.coordinate("x"), y: try r.coordinate("y"))
        },
        MessageSpec(
            "scroll_messages",
            doc: "Scroll the chat's message list: offset is how many points of the conversation lie above the list's top (0 shows the first message). An offset at or past the end shows the end and keeps following new messages.",
            fields: [FieldSpec("offset", .integer(.count))]
        ) { r throws(CoreError) in
            .scrollMessages(offset: try r.int("offset"))
        },
        MessageSpec(
            "scroll_screen",
            doc: "Scroll a screen taller than the viewport (onboarding, settings, the sessions list, the model picker on a small phone or on its side): offset is how many points of it lie above the viewport's top (0 shows its top; one past the end shows its end). The screen's root then carries `scroll`. The chat scrolls its message list instead (scroll_messages); on a screen that fits, nothing changes (a note in the logs).",
            fields: [FieldSpec("offset", .integer(.count))]
        ) { r throws(CoreError) in
            .scrollScreen(offset: try r.int("offset"))
        },
        MessageSpec(
            "scroll_to_message",
            doc: "Scroll the chat's message list so its row index (0 …, as the list's window counts them: window.total rows) is at the list's top; the last rows show the end and keep following new messages. An index past the last row shows the end.",
            fields: [FieldSpec("index", .integer(.count))]
        ) { r throws(CoreError) in
            .scrollToMessage(index: try r.int("index"))
        },
        MessageSpec(
            "set_expanded",
            doc: "Open (expanded true) or close a collapsible node of the transcript: a tool card, reasoning, a long output or diff (nodes with an expanded field; tapping one toggles it).",
            fields: [FieldSpec("node_id", .string), FieldSpec("expanded", .boolean)]
        ) { r throws(CoreError) in
            .setExpanded(nodeID: try r.string("node_id"), expanded: try r.bool("expanded"))
        },
        MessageSpec(
            "copy",
            doc: "Copy a node's text to the clipboard (nodes whose supported_actions has copy: a code block gives its code, a message its text): the core answers with copy_to_clipboard.",
            fields: [FieldSpec("node_id", .string)]
        ) { r throws(CoreError) in
            .copy(nodeID: try r.string("node_id"))
        },
        MessageSpec(
            "load_scenario", doc: "Replace the whole state with a named fixture.",
            fields: [FieldSpec("scenario", .enumeration(Scenario.allCases.map(\.rawValue)))]
        ) { r throws(CoreError) in
            let name = try r.string("scenario")
            guard Scenario(rawValue: name) != nil else {
                throw CoreError(.invalidScenario, "unknown scenario \"\(name)\"", field: r.fieldPath("scenario"))
            }
            return .loadScenario(name)
        },
        MessageSpec("reset", doc: "Return to the first-launch onboarding state.") { _ throws(CoreError) in .reset },
    ]
}
