/// The folder on the server in which this device's sessions run. Today's
/// jcode requires it in the first `subscribe` of every connection, as an
/// absolute path (`client_lifecycle.rs`, `required_subscribe_working_dir`).
public enum WorkingDirectory {
    /// The trimmed path, or why it cannot be used. Absolute means rooted:
    /// `/…` on the Unix servers jcode runs on, or a drive path (`C:\…`,
    /// `C:/…`) on Windows.
    public static func validate(_ raw: String) -> Result<String, FieldMessage> {
        let path = raw.trimmingSpaces()
        if path.isEmpty { return .failure(.workingDirMissing) }
        if path.hasPrefix("/") { return .success(path) }
        let head = Array(path.unicodeScalars.prefix(3))
        if head.count == 3, ("A"..."Z").contains(head[0]) || ("a"..."z").contains(head[0]), head[1] == ":",
           head[2] == "\\" || head[2] == "/"
        {
            return .success(path)
        }
        return .failure(.workingDirNotAbsolute)
    }
}
