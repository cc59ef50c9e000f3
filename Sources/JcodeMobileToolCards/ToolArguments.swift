import JcodeMobileJSON

/// The arguments of one tool call, read from its input JSON, whether the
/// input is complete or still streaming.
///
/// Which argument a card shows for which jcode tool (from the tools'
/// parameter schemas in jcode's `crates/jcode-app-core/src/tool/`):
///
/// | tool (and the aliases jcode resolves to it)  | arguments the cards read                          |
/// |----------------------------------------------|---------------------------------------------------|
/// | bash (shell, shell_exec, Bash)               | `command`                                         |
/// | read (read_file, file_read, Read)            | `file_path` (also takes start_line/end_line/offset/limit) |
/// | write (write_file, file_write, Write)        | `file_path`, `content`                            |
/// | edit (edit_file, file_edit, Edit)            | `file_path`, `old_string`, `new_string`, `replace_all` |
/// | multiedit                                    | `file_path`, `edits: [{old_string, new_string, replace_all}]` |
/// | agentgrep (grep, file_grep, Grep)            | `query` (alias `pattern`), `terms`, `path`, `file` (alias `file_path`) |
/// | glob (no jcode tool; other agents' name)     | `pattern`, `path`                                 |
/// | ls                                           | `path`                                            |
/// | webfetch                                     | `url`                                             |
/// | websearch, session_search, integration_tools | `query`                                           |
/// | todo (todoread, todowrite, todo_read, …)     | `todos: [{content, status, …}]`; status `completed` counts as done |
/// | apply_patch                                  | `patch_text` (the `*** Begin Patch` envelope)     |
/// | patch                                        | `patch_text` (a unified diff with `---`/`+++`)    |
/// | batch                                        | `tool_calls: [{tool, …}]`                         |
/// | open (launch)                                | `target`                                          |
/// | debug_socket                                 | `command`                                         |
/// | subagent (task, task_runner, Agent)          | `description`, else `prompt`                      |
/// | maintainer_feedback                          | `summary`                                         |
/// | anything else                                | its first string argument                         |
struct ToolArguments {
    /// The input parsed, when it is one complete JSON object.
    let object: JSONObject?
    /// The input's top-level string members as far as they have arrived.
    let members: PartialJSON.Members

    init(_ text: String) {
        var members = PartialJSON.Members()
        members.read(text)
        self.init(object: Self.object(text, members), members: members)
    }

    init(object: JSONObject?, members: PartialJSON.Members) {
        self.object = object
        self.members = members
    }

    /// `text` parsed, when `members` (read from it) found the object's
    /// closing brace: an input that has not closed its object is no JSON
    /// object yet, and is not parsed whole in vain.
    static func object(_ text: String, _ members: PartialJSON.Members) -> JSONObject? {
        guard members.closed else { return nil }
        return (try? JSONParser.parse(text))?.objectValue
    }

    /// A top-level string argument: from the parsed object, or while the
    /// input streams, as much of it as has arrived.
    func string(_ key: String) -> String? {
        if let object { return object[key]?.stringValue }
        return members.string(key)
    }

    /// The first top-level argument whose value is a string.
    func firstString() -> String? {
        if let object {
            return object.entries.lazy.compactMap { $0.value.stringValue }.first
        }
        return members.firstString
    }

    /// A top-level argument of any type; only once the input is complete.
    subscript(key: String) -> JSONValue? { object?[key] }
}

/// jcode's own names for tools that models call by other names (jcode
/// resolves the same aliases before running a call), lower-cased so that
/// the PascalCase names of other agents (`MultiEdit`, `WebFetch`) match too.
package enum ToolName {
    package static func canonical(_ name: String) -> String {
        var name = Substring(name)
        if name.hasPrefix("functions.") { name = name.dropFirst("functions.".count) }
        let lower = name.lowercased()
        return aliases[lower] ?? lower
    }

    private static let aliases: [String: String] = [
        "shell": "bash", "shell_exec": "bash",
        "read_file": "read", "file_read": "read",
        "write_file": "write", "file_write": "write",
        "edit_file": "edit", "file_edit": "edit", "multi_edit": "multiedit",
        "grep": "agentgrep", "file_grep": "agentgrep",
        "todoread": "todo", "todowrite": "todo", "todo_read": "todo", "todo_write": "todo", "todos": "todo",
        "communicate": "swarm", "launch": "open",
        "task": "subagent", "task_runner": "subagent", "agent": "subagent",
        "skill": "skill_manage", "discover_tools": "integration_tools",
    ]
}
