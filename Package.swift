// swift-tools-version:6.0
import PackageDescription

// The core is Swift-standard-library only (no Foundation, no dependencies),
// so the release library links the stdlib statically and loads anywhere.
let package = Package(
    name: "JcodeMobile",
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
        .target(name: "JcodeMobileCore"),
        .target(name: "JcodeMobileFFI", dependencies: ["JcodeMobileCore"]),
        .target(name: "JcodeMobileSwift", dependencies: ["JcodeMobileCore"]),
        .target(name: "JcodeMobileSwiftTesting", dependencies: ["JcodeMobileSwift"]),
        .executableTarget(name: "JcodeMobileExample", dependencies: ["JcodeMobileSwift"]),
        .testTarget(name: "JcodeMobileCoreTests", dependencies: ["JcodeMobileCore"]),
        .testTarget(name: "JcodeMobileSwiftTests", dependencies: ["JcodeMobileSwiftTesting"]),
    ]
)
