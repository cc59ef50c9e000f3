// jcode-mobile-parse-bench: `make bench-parse`, the core's half. Parses a
// whole markdown document with `Markdown.parse` (blocks with inline spans,
// no semantic tree) and prints the median MB/s of REPS parses. cmark-gfm's
// half is harness/c/parse_cmark.c, run on the same file in the same make run.
//
// usage: jcode-mobile-parse-bench FILE [REPS]

import JcodeMobileMarkdown

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@main
struct JcodeMobileParseBench {
    static func main() {
        let args = CommandLine.arguments
        guard args.count >= 2, let file = fopen(args[1], "rb") else {
            print("usage: jcode-mobile-parse-bench FILE [REPS]")
            exit(2)
        }
        let reps = args.count > 2 ? Int(args[2]) ?? 9 : 9
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        fclose(file)
        let text = String(decoding: bytes, as: UTF8.self)
        var rates: [Double] = []
        var blocks = 0
        for _ in 0..<reps {
            let clock = ContinuousClock()
            var parsed: [MarkdownBlock] = []
            let elapsed = clock.measure { parsed = Markdown.parse(text) }
            blocks = parsed.count
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            rates.append(Double(bytes.count) / 1e6 / seconds)
        }
        rates.sort()
        precondition(blocks > 0)
        print((rates[reps / 2] * 10).rounded() / 10)
    }
}
