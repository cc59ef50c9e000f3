/// A raw text frame from the gateway: newline-delimited JSON events.
public enum ServerFrame {
    /// Each non-blank line decoded in order. A malformed line is dropped with
    /// a reason and the lines after it still count.
    public static func items(of frame: String) -> [FrameItem] {
        var frame = frame
        return frame.withUTF8 { bytes -> [FrameItem] in
            var items: [FrameItem] = []
            var workspace = JSONParser.Workspace()
            var lineNumber = 0
            var start = 0
            var i = 0
            while i <= bytes.count {
                if i == bytes.count || bytes[i] == UInt8(ascii: "\n") {
                    let line = UnsafeBufferPointer(rebasing: bytes[start..<i])
                    start = i &+ 1
                    lineNumber &+= 1
                    if !line.allSatisfy({ $0 == 0x20 || $0 == 0x0D || $0 == 0x09 }) {
                        items.append(item(line, number: lineNumber, workspace: &workspace))
                    }
                }
                i &+= 1
            }
            return items
        }
    }

    private static func item(_ line: UnsafeBufferPointer<UInt8>, number: Int, workspace: inout JSONParser.Workspace) -> FrameItem {
        do throws(CoreError) {
            return try JSONParser.withTape(line, workspace: &workspace) { (tape) throws(CoreError) -> FrameItem in
                guard tape.kind(at: 0) == .object else { return .dropped("malformed line \(number) dropped: not a JSON object") }
                return FrameItem(Result { () throws(CoreError) in try ServerEvent.wire.decode(tape: tape) })
            }
        } catch {
            return .dropped("malformed line \(number) dropped: \(error.message)")
        }
    }
}
