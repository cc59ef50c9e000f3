// What the test targets share: a seeded generator, a stream's prefixes, the
// repository's root and the spec examples. It depends on no module of the package.
import Foundation

/// A small deterministic generator for reproducible sessions.
public struct SplitMix {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    public mutating func next(upTo n: Int) -> Int { Int(next() % UInt64(n)) }
}

/// Every prefix of `text` a stream can leave (cut between Unicode scalars).
public func scalarPrefixes(_ text: String) -> [String] {
    var out: [String] = []
    var scalars = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        scalars.append(scalar)
        out.append(String(scalars))
    }
    return out
}

public enum URLPath {
    /// The repository root, found from this file's path.
    public static var repositoryRoot: String {
        var parts = "\(#filePath)".split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/Shared/TestSupport.swift
        return parts.joined(separator: "/")
    }
}

/// The official CommonMark 0.31.2 and GFM 0.29 examples in ../shared/commonmark, as data.
public enum SpecExamples {
    public struct Example {
        public var number: Int
        public var section: String
        public var markdown: String
        public var html: String
        public var extensions: [String]
    }

    public static let specFolder: String? = {
        var root = URLPath.repositoryRoot
        for _ in 0..<4 {
            let candidate = root + "/../shared/commonmark"
            if FileManager.default.fileExists(atPath: candidate + "/commonmark-0.31.2.json") { return candidate }
            root += "/.."
        }
        return nil
    }()

    public static func examples(_ file: String) -> [Example]? {
        guard let folder = specFolder, let data = FileManager.default.contents(atPath: folder + "/" + file),
              let list = try? JSONSerialization.jsonObject(with: data) as? [[String: Any]] else { return nil }
        return list.map {
            Example(number: $0["example"] as! Int, section: $0["section"] as! String, markdown: $0["markdown"] as! String,
                    html: $0["html"] as! String, extensions: $0["extensions"] as? [String] ?? [])
        }
    }
}
