// swift-tools-version:6.0
import PackageDescription

// The core is Swift-standard-library only (no Foundation, no dependencies),
// so the release library links the stdlib statically and loads anywhere.
//
// Platforms: SwiftPM's `platforms:` is package-wide, so it sets the minimum
// for the core library (and the C ABI library) as well as for the Swift
// products. The Swift products need Observation (iOS 17, macOS 14, tvOS 17,
// watchOS 10). The core alone needs little less: its string searches use the
// standard library's string processing (iOS 16, macOS 13) and it builds
// strings with String(unsafeUninitializedCapacity:) (iOS 14, macOS 11); it is
// built and tested on Linux only. So one declaration, the Swift products',
// is the one we can stand behind for every product: a lower one would promise
// an app on iOS 16 a core nobody has built for it, for one OS version.
// Linux is not listed (SwiftPM has no minimum for it): `swift build` there is
// unaffected. docs/SWIFT.md, "Platforms".
let package = Package(
    name: "JcodeMobile",
    platforms: [.iOS(.v17), .macOS(.v14), .tvOS(.v17), .watchOS(.v10)],
    products: [
        // libjcode_mobile.so: the C ABI of include/jcode_mobile.h.
        .library(name: "jcode_mobile", type: .dynamic, targets: ["JcodeMobileFFI"]),
        // Swift hosts that link the core directly (docs/SWIFT.md): an
        // @Observable ViewModel and the PlatformAdapter protocol.
        .library(name: "JcodeMobileSwift", targets: ["JcodeMobileSwift"]),
        // ViewModelTestHarness, for the host's tests.
        .library(name: "JcodeMobileSwiftTesting", targets: ["JcodeMobileSwiftTesting"]),
        // A whole session on Linux over POSIX sockets against a jcode gateway.
        .executable(name: "jcode-mobile-swift-example", targets: ["JcodeMobileExample"]),
    ],
    targets: [
        // The leaves: they depend on nothing of the core, and the compiler keeps it so.
        // JSON (and the ABI's error vocabulary), the Markdown parser, the tool cards' readers.
        .target(name: "JcodeMobileJSON"),
        .target(name: "JcodeMobileMarkdown", dependencies: ["JcodeMobileJSON"]),
        .target(name: "JcodeMobileToolCards", dependencies: ["JcodeMobileJSON"]),
        // The wire's declarations (FieldSpec, MessageSpec, WireUnion) and the FieldReader their decoders run.
        .target(name: "JcodeMobileWire", dependencies: ["JcodeMobileJSON"]),
        .target(name: "JcodeMobileCore", dependencies: ["JcodeMobileJSON", "JcodeMobileMarkdown", "JcodeMobileToolCards", "JcodeMobileWire"]),
        .target(name: "JcodeMobileFFI", dependencies: ["JcodeMobileCore"]),
        .target(name: "JcodeMobileSwift", dependencies: ["JcodeMobileCore"]),
        .target(name: "JcodeMobileSwiftTesting", dependencies: ["JcodeMobileSwift"]),
        .executableTarget(name: "JcodeMobileExample", dependencies: ["JcodeMobileSwift"]),
        // `make bench`: a streamed delta through the ViewModel (built -c release).
        .executableTarget(name: "JcodeMobileSwiftBench", dependencies: ["JcodeMobileSwift"]),
        // `make bench-parse`: Markdown.parse on a 5 MB document (built -c release).
        .executableTarget(name: "JcodeMobileParseBench", dependencies: ["JcodeMobileMarkdown"]),
        // What the test targets share (a seeded generator, the spec examples); no module of ours.
        .target(name: "JcodeMobileTestSupport", path: "Tests/Shared"),
        .testTarget(name: "JcodeMobileJSONTests", dependencies: ["JcodeMobileJSON"]),
        .testTarget(name: "JcodeMobileMarkdownTests", dependencies: ["JcodeMobileMarkdown", "JcodeMobileTestSupport"]),
        .testTarget(name: "JcodeMobileToolCardsTests", dependencies: ["JcodeMobileToolCards", "JcodeMobileTestSupport"]),
        .testTarget(name: "JcodeMobileWireTests", dependencies: ["JcodeMobileWire"]),
        .testTarget(name: "JcodeMobileCoreTests", dependencies: ["JcodeMobileCore", "JcodeMobileTestSupport"]),
        .testTarget(name: "JcodeMobileSwiftTests", dependencies: ["JcodeMobileSwiftTesting"]),
    ]
)
