// swift-tools-version:6.0
import PackageDescription

// The core is Swift-standard-library only (no Foundation, no dependencies),
// so the release library links the stdlib statically and loads anywhere.
let package = Package(
    name: "JcodeMobile",
    products: [
        // libjcode_mobile.so: the C ABI of include/jcode_mobile.h.
        .library(name: "jcode_mobile", type: .dynamic, targets: ["JcodeMobileFFI"]),
    ],
    targets: [
        .target(name: "JcodeMobileCore"),
        .target(name: "JcodeMobileFFI", dependencies: ["JcodeMobileCore"]),
        .testTarget(name: "JcodeMobileCoreTests", dependencies: ["JcodeMobileCore"]),
    ]
)
