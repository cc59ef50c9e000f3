import JcodeMobileJSON

/// A raw text frame from the gateway: newline-delimited JSON events.
public enum ServerFrame {
    /// Each non-blank line decoded in order. A malformed line is dropped with
    /// a reason and the lines after it still count. A line whose tokens do
    /// not fit in memory is not malformed: the whole frame is refused with
    /// `out_of_memory` (nothing of it applies), so no event is lost unsaid.
    public static func items(of frame: String) throws(CoreError) -> [FrameItem] {
        var frame = frame
        let result = frame.withUTF8 { bytes -> Result<[FrameItem], CoreError> in
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
                        do throws(CoreError) {
                            items.append(try item(line, number: lineNumber, workspace: &workspace))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                i &+= 1
            }
            return .success(items)
        }
        return try result.get()
    }

    private static func item(
        _ line: UnsafeBufferPointer<UInt8>, number: Int, workspace: inout JSONParser.Workspace
    ) throws(CoreError) -> FrameItem {
        do throws(CoreError) {
            return try JSONParser.withTape(line, workspace: &workspace) { (tape) throws(CoreError) -> FrameItem in
                guard tape.kind(at: 0) == .object else { return .dropped("malformed line \(number) dropped: not a JSON object") }
                return FrameItem(Result { () throws(CoreError) in try ServerEvent.wire.decode(tape: tape) })
            }
        } catch where error.code == .outOfMemory {
            throw error
        } catch {
            return .dropped("malformed line \(number) dropped: \(error.message)")
        }
    }
}
