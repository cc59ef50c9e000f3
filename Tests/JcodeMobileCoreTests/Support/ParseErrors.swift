@testable import JcodeMobileCore
@testable import JcodeMobileJSON

/// The error a parser of call options refuses `text` with (nil: it parsed),
/// e.g. `parseError(of: #"{"capacity":0}"#, SubscribeOptions.parse)`.
func parseError<Parsed>(
    of text: String, _ parse: (UnsafeBufferPointer<UInt8>?) throws(CoreError) -> Parsed
) -> CoreError? {
    var text = text
    return text.withUTF8 { bytes in
        do throws(CoreError) {
            _ = try parse(bytes)
            return nil
        } catch {
            return error
        }
    }
}
