// The leaves the core is built on, each its own module (Package.swift):
// JSON and the ABI's error codes, the Markdown parser, the tool cards'
// readers, the wire's declarations. They depend on nothing of the core.
// Their public types are part of the core's API (an action's JSON, a
// CoreError, a message's markdown blocks, a MessageSpec), so a module that
// imports the core sees them as before.
@_exported import JcodeMobileJSON
@_exported import JcodeMobileMarkdown
@_exported import JcodeMobileToolCards
@_exported import JcodeMobileWire
