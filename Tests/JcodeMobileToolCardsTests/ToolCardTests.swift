import XCTest
@testable import JcodeMobileJSON
@testable import JcodeMobileToolCards
import JcodeMobileTestSupport

/// Tool cards: the one-line summary of each jcode tool's call and the diffs
/// that edit, multiedit, write, apply_patch and patch describe.
final class ToolCardTests: XCTestCase {
    // MARK: helpers

    private func json(_ object: [String: JSONValue]) -> String {
        JSONValue.object(JSONObject(object.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })).jsonString
    }

    private func context(_ text: String, _ old: Int, _ new: Int) -> DiffLine {
        DiffLine(kind: .context, text: text, oldLine: old, newLine: new)
    }

    private func removed(_ text: String, _ old: Int) -> DiffLine {
        DiffLine(kind: .removed, text: text, oldLine: old, newLine: nil)
    }

    private func added(_ text: String, _ new: Int) -> DiffLine {
        DiffLine(kind: .added, text: text, oldLine: nil, newLine: new)
    }

    private func edit(_ old: String, _ new: String, replaceAll: Bool? = nil) -> [FileDiff]? {
        var args: [String: JSONValue] = ["file_path": "src/lib.rs", "old_string": .string(old), "new_string": .string(new)]
        if let replaceAll { args["replace_all"] = .bool(replaceAll) }
        return ToolDiff.diffs(name: "edit", input: json(args))
    }

    // MARK: summaries

    func testBashShowsTheFirstLineOfItsCommandTrimmedWithAnEllipsisWhenMoreFollows() {
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: #"{"command":"  cargo test --all  ","intent":"Run the tests"}"#),
                       "cargo test --all")
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: #"{"command":"\n\ncd src\r\nmake\n","timeout":60}"#),
                       "cd src …")
    }

    func testAliasesAndNamespacedNamesSummariseLikeTheToolTheyName() {
        XCTAssertEqual(ToolSummary.summary(name: "functions.shell", input: #"{"command":"ls -la"}"#), "ls -la")
        XCTAssertEqual(ToolSummary.summary(name: "Read", input: #"{"file_path":"README.md"}"#), "README.md")
        XCTAssertEqual(ToolSummary.summary(name: "TodoWrite", input: #"{"todos":[{"content":"a","status":"completed"}]}"#), "1 of 1 done")
    }

    func testFileToolsShowTheFilePath() {
        XCTAssertEqual(ToolSummary.summary(name: "read", input: #"{"file_path":"src/main.rs","start_line":10,"end_line":40}"#), "src/main.rs")
        XCTAssertEqual(ToolSummary.summary(name: "write", input: ##"{"file_path":"notes.md","content":"# Notes\n"}"##), "notes.md")
        XCTAssertEqual(ToolSummary.summary(name: "edit", input: #"{"file_path":"a.py","old_string":"x","new_string":"y"}"#), "a.py")
        XCTAssertEqual(ToolSummary.summary(name: "multiedit", input: #"{"file_path":"b.py","edits":[]}"#), "b.py")
    }

    func testSearchesShowThePatternQuotedAndWhereTheyLook() {
        XCTAssertEqual(ToolSummary.summary(name: "agentgrep", input: #"{"mode":"grep","query":"TODO","path":"src/"}"#), #""TODO" in src/"#)
        XCTAssertEqual(ToolSummary.summary(name: "grep", input: #"{"pattern":"fn main","include":"*.rs"}"#), #""fn main""#)
        XCTAssertEqual(ToolSummary.summary(name: "agentgrep", input: #"{"mode":"find","terms":["auth","token"]}"#), #""auth" "token""#)
        XCTAssertEqual(ToolSummary.summary(name: "agentgrep", input: #"{"mode":"outline","file_path":"src/app.rs"}"#), "src/app.rs")
        XCTAssertEqual(ToolSummary.summary(name: "glob", input: #"{"pattern":"**/*.swift","path":"Sources"}"#), "**/*.swift in Sources")
        XCTAssertEqual(ToolSummary.summary(name: "ls", input: #"{"path":"crates","ignore":["target"]}"#), "crates")
    }

    func testWebToolsShowTheURLOrTheQuery() {
        XCTAssertEqual(ToolSummary.summary(name: "webfetch", input: #"{"url":"https://example.com/docs","format":"markdown"}"#),
                       "https://example.com/docs")
        XCTAssertEqual(ToolSummary.summary(name: "websearch", input: #"{"query":"swift typed throws","num_results":5}"#),
                       "swift typed throws")
    }

    func testTodoShowsHowManyItemsAreCompleted() {
        let input = #"{"todos":[{"content":"a","status":"completed","priority":"high","id":"1"},{"content":"b","status":"completed","priority":"low","id":"2"},{"content":"c","status":"in_progress","priority":"low","id":"3"},{"content":"d","status":"pending","priority":"low","id":"4"},{"content":"e","status":"cancelled","priority":"low","id":"5"}]}"#
        XCTAssertEqual(ToolSummary.summary(name: "todo", input: input), "2 of 5 done")
        XCTAssertEqual(ToolSummary.summary(name: "todowrite", input: #"{"todos":[]}"#), "no tasks")
        XCTAssertEqual(ToolSummary.summary(name: "todoread", input: "{}"), "")
    }

    func testPatchesShowTheFilesTheyTouch() {
        let envelope = "*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** Add File: src/b.rs\n+b\n*** Delete File: src/c.rs\n*** Update File: src/a.rs\n*** End Patch"
        XCTAssertEqual(ToolSummary.summary(name: "apply_patch", input: json(["patch_text": .string(envelope)])), "src/a.rs and 2 more")
        let unified = "--- a/lib/x.c\n+++ b/lib/x.c\n@@ -1 +1 @@\n-a\n+b\n--- a/lib/gone.c\n+++ /dev/null\n"
        XCTAssertEqual(ToolSummary.summary(name: "patch", input: json(["patch_text": .string(unified)])), "lib/x.c and 1 more")
    }

    func testPatchMarkersAreReadAsBytesAsJcodeReadsThem() {
        // A combining mark after a marker's last blank does not hide the marker (as Rust's `strip_prefix`).
        let envelope = "*** Begin Patch\n*** Add File: \u{301}odd.txt\n+x\n*** End Patch"
        XCTAssertEqual(ToolSummary.summary(name: "apply_patch", input: json(["patch_text": .string(envelope)])), "\u{301}odd.txt")
        // A header's path ends at a tab, the timestamp after it left out.
        let unified = "--- a/lib/x.c\t2026-11-30 10:00:00\n+++ b/lib/x.c\t2026-11-30 10:05:00\n@@ -1 +1 @@\n-a\n+b\n"
        XCTAssertEqual(ToolSummary.summary(name: "patch", input: json(["patch_text": .string(unified)])), "lib/x.c")
        // A new file's path is the `+++` one; a deleted file's, the `---` one.
        let both = "--- /dev/null\n+++ b/new.c\n@@ -0,0 +1 @@\n+n\n--- a/old.c\t1\n+++ /dev/null\n"
        XCTAssertEqual(ToolSummary.summary(name: "patch", input: json(["patch_text": .string(both)])), "new.c and 1 more")
    }

    func testBatchShowsHowManyCalls() {
        XCTAssertEqual(ToolSummary.summary(name: "batch", input: #"{"tool_calls":[{"tool":"read","file_path":"a"},{"tool":"ls"},{"name":"bash","command":"pwd"}]}"#), "3 calls")
        XCTAssertEqual(ToolSummary.summary(name: "batch", input: #"{"tool_calls":[{"tool":"ls"}]}"#), "1 call")
    }

    func testOtherJcodeToolsShowTheirMainArgument() {
        XCTAssertEqual(ToolSummary.summary(name: "open", input: #"{"target":"https://jcode.dev"}"#), "https://jcode.dev")
        XCTAssertEqual(ToolSummary.summary(name: "session_search", input: #"{"query":"flaky test"}"#), "flaky test")
        XCTAssertEqual(ToolSummary.summary(name: "task", input: #"{"description":"Audit the parser","prompt":"Read…"}"#), "Audit the parser")
    }

    func testAnUnknownToolShowsItsFirstStringArgumentOnOneLine() {
        XCTAssertEqual(ToolSummary.summary(name: "mystery", input: #"{"count":3,"label":"first\tsecond\nthird"}"#), "first second third")
        XCTAssertEqual(ToolSummary.summary(name: "mystery", input: #"{"count":3}"#), "")
    }

    func testASummaryIsCutAt120CharactersWithAnEllipsis() {
        let long = String(repeating: "é", count: 200)
        let summary = ToolSummary.summary(name: "bash", input: json(["command": .string(long)]))
        XCTAssertEqual(summary, String(repeating: "é", count: 119) + "…")
        XCTAssertEqual(summary.count, 120)
        let exact = String(repeating: "x", count: 120)
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: json(["command": .string(exact)])), exact)
    }

    func testMalformedInputsSummariseAsWhatCanBeReadOrNothing() {
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: "not json"), "")
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: ""), "")
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: #"{"command":42}"#), "")
        XCTAssertEqual(ToolSummary.summary(name: "read", input: #"["file_path","a"]"#), "")
        XCTAssertEqual(ToolSummary.summary(name: "batch", input: #"{"tool_calls":"three"}"#), "")
    }

    // MARK: summaries while the input streams

    func testAStreamingBashCallShowsTheCommandSoFar() {
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: #"{"intent":"See history","command":"git log --one"#), "git log --one")
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: #"{"command":"echo \"hi\" \"#), #"echo "hi""#)
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: #"{"command":"caf\u00"#), "caf")
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: #"{"command":"caf\u00e9 \ud83d"#), "café")
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: #"{"command":"smile \ud83d\ude00 ok"#), "smile 😀 ok")
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: #"{"comm"#), "")
        XCTAssertEqual(ToolSummary.summary(name: "bash", input: #"{"timeout":12"#), "")
    }

    func testAStreamingCallSkipsArgumentsThatAreNotStrings() {
        XCTAssertEqual(ToolSummary.summary(name: "read", input: #"{"limit":40,"extra":{"a":[1,"}"]},"file_path":"src/ma"#), "src/ma")
        XCTAssertEqual(ToolSummary.summary(name: "mystery", input: #"{"n":1,"what":"half a sen"#), "half a sen")
    }

    func testAStreamingPatchShowsTheFilesNamedSoFar() {
        let input = #"{"patch_text":"*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n*** Add File: src/n"#
        XCTAssertEqual(ToolSummary.summary(name: "apply_patch", input: input), "src/a.rs and 1 more")
    }

    func testAStreamingListShowsNothingUntilItIsComplete() {
        XCTAssertEqual(ToolSummary.summary(name: "todo", input: #"{"todos":[{"content":"a","status":"completed"}"#), "")
        XCTAssertEqual(ToolSummary.summary(name: "batch", input: #"{"tool_calls":[{"tool":"ls"}"#), "")
    }

    // MARK: inputs read on as they stream

    func testTheMembersReaderReadOnFromWhereItStoppedReadsWhatAWholeReadReads() {
        let inputs = [
            #"{"n":12,"nested":{"a":["}",{"b":"\"]"}]},"command":"caf\u00e9 \ud83d\ude00 \"x\"\\ \/ \t end","next":"more"}"#,
            #"{"bad":"\uZZZZ","command":"never"}"#,
            #"{"k\u0065y":"v\é","other":[1,2],"last":"tail"#,
            #"  {  "a" : "b" , , "c":"d"}trailing"#,
        ]
        for input in inputs {
            var streamed = PartialJSON.Members()
            for prefix in scalarPrefixes(input) {
                streamed.read(prefix)
                var whole = PartialJSON.Members()
                whole.read(prefix)
                XCTAssertEqual(streamed.strings.map(\.key), whole.strings.map(\.key), prefix)
                XCTAssertEqual(streamed.strings.map(\.value), whole.strings.map(\.value), prefix)
                XCTAssertEqual(streamed.strings.map(\.complete), whole.strings.map(\.complete), prefix)
                XCTAssertEqual(streamed.closed, whole.closed, prefix)
            }
        }
        var members = PartialJSON.Members()
        members.read(inputs[0])
        XCTAssertEqual(members.string("command"), "café 😀 \"x\"\\ / \t end")
        XCTAssertEqual(members.strings.map(\.key), ["command", "next"])
        XCTAssertTrue(members.closed)
        members = PartialJSON.Members()
        members.read(inputs[1])
        XCTAssertEqual(members.strings.map(\.value), [""])
        XCTAssertTrue(members.stopped)
        XCTAssertFalse(members.closed)
        members = PartialJSON.Members()
        members.read(inputs[2])
        XCTAssertEqual(members.strings.map(\.key), ["key", "last"])
        XCTAssertEqual(members.string("key"), "vé")
        XCTAssertEqual(members.string("last"), "tail")
        XCTAssertFalse(members.closed)
        members = PartialJSON.Members()
        members.read(inputs[3])
        XCTAssertEqual(members.strings.map(\.value), ["b", "d"])
        XCTAssertTrue(members.closed)
    }

    func testABashCommandStreamedScalarByScalarSummarisesAsItsFirstLineAtEveryStep() {
        let command = "\n  \r\n  cd src &&\u{301} make \u{00A0}\r\n\n  cargo test --all\r\n" + String(repeating: "é", count: 130) + "\n"
        let input = json(["command": .string(command), "intent": "Build"])
        var reading = ToolInputReading(name: "bash")
        var seen: Set<String> = []
        for prefix in scalarPrefixes(input) {
            reading.read(prefix)
            let soFar = PartialJSON.string(forKey: "command", in: prefix) ?? ""
            let expected = ToolSummary.oneLine(ToolSummary.firstLine(soFar))
            XCTAssertEqual(reading.summary(), expected, prefix)
            XCTAssertEqual(ToolSummary.summary(name: "bash", input: prefix), expected, prefix)
            seen.insert(expected)
        }
        XCTAssertEqual(reading.summary(), "cd src &&\u{301} make …")
        XCTAssertTrue(seen.isSuperset(of: ["", "c", "cd src &&\u{301} make", "cd src &&\u{301} make …"]))
        // One long line streaming: the summary is its head, cut.
        var long = ToolInputReading(name: "bash")
        let line = #"{"command":"echo "# + String(repeating: "a", count: 300)
        for prefix in scalarPrefixes(line) { long.read(prefix) }
        XCTAssertEqual(long.summary(), "echo " + String(repeating: "a", count: 114) + "…")
    }

    func testAPatchNamingThreeFilesOverAndOverNamesEachOnce() {
        let envelope = "*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** Update File: b.rs\n@@\n-x\n*** Update File: a.rs\n@@\n+z\n"
            + "*** Delete File: b.rs\n*** Add File: c.rs\n+new\n*** Update File: c.rs\n@@\n-new\n*** End Patch\n"
        XCTAssertEqual(PatchFormat.paths(in: envelope), ["a.rs", "b.rs", "c.rs"])
        XCTAssertEqual(ToolSummary.summary(name: "apply_patch", input: json(["patch_text": .string(envelope)])), "a.rs and 2 more")
        let unified = "--- a/a.rs\n+++ b/a.rs\n@@ -1 +1 @@\n-x\n+y\n--- a/b.rs\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
            + "--- a/a.rs\n+++ b/a.rs\n@@ -5 +5 @@\n-p\n+q\n--- /dev/null\n+++ b/c.rs\n@@ -0,0 +1 @@\n+c\n--- a/c.rs\n+++ b/c.rs\n"
        XCTAssertEqual(PatchFormat.paths(in: unified), ["a.rs", "b.rs", "c.rs"])
        XCTAssertEqual(ToolSummary.summary(name: "patch", input: json(["patch_text": .string(unified)])), "a.rs and 2 more")
        // Streamed: at every step, the files named so far, each once.
        for (tool, text) in [("apply_patch", envelope), ("patch", unified)] {
            let input = json(["patch_text": .string(text)])
            var reading = ToolInputReading(name: tool)
            for prefix in scalarPrefixes(input) {
                reading.read(prefix)
                let paths = PatchFormat.paths(in: PartialJSON.string(forKey: "patch_text", in: prefix) ?? "")
                let expected = paths.isEmpty ? "" : (paths.count == 1 ? paths[0] : "\(paths[0]) and \(paths.count - 1) more")
                XCTAssertEqual(reading.summary(), expected, prefix)
            }
            XCTAssertEqual(reading.summary(), "a.rs and 2 more")
            XCTAssertEqual(reading.diffs()?.map(\.path), ToolDiff.diffs(name: tool, input: input)?.map(\.path))
        }
    }

    // MARK: edit

    func testAnEditIsALineDiffOfOldAgainstNewNumberedWithinTheSnippet() {
        XCTAssertEqual(edit("a\nb\nc\n", "a\nB\nc\n"), [
            FileDiff(path: "src/lib.rs", hunks: [
                DiffHunk(oldStart: 1, newStart: 1, lines: [context("a", 1, 1), removed("b", 2), added("B", 2), context("c", 3, 3)]),
            ], added: 1, removed: 1, relativeLineNumbers: true),
        ])
    }

    func testAnEditKeepsThreeLinesOfContextAroundAChange() {
        let old = (1...10).map(String.init).joined(separator: "\n")
        let new = old.replacingFirstLine("5", with: "five")
        XCTAssertEqual(edit(old, new)?.first?.hunks, [
            DiffHunk(oldStart: 2, newStart: 2, lines: [
                context("2", 2, 2), context("3", 3, 3), context("4", 4, 4), removed("5", 5), added("five", 5),
                context("6", 6, 6), context("7", 7, 7), context("8", 8, 8),
            ]),
        ])
    }

    func testChangesFarApartInOneEditMakeSeparateHunks() {
        let old = (1...20).map(String.init).joined(separator: "\n")
        let new = old.replacingFirstLine("2", with: "two").replacingFirstLine("18", with: "eighteen")
        XCTAssertEqual(edit(old, new)?.first?.hunks, [
            DiffHunk(oldStart: 1, newStart: 1, lines: [
                context("1", 1, 1), removed("2", 2), added("two", 2), context("3", 3, 3), context("4", 4, 4), context("5", 5, 5),
            ]),
            DiffHunk(oldStart: 15, newStart: 15, lines: [
                context("15", 15, 15), context("16", 16, 16), context("17", 17, 17), removed("18", 18), added("eighteen", 18),
                context("19", 19, 19), context("20", 20, 20),
            ]),
        ])
    }

    func testAnEditFindsTheSmallestChangeInsideTheSnippet() {
        XCTAssertEqual(edit("a\nb\nc\nd", "a\nc\nd\ne")?.first?.hunks, [
            DiffHunk(oldStart: 1, newStart: 1, lines: [
                context("a", 1, 1), removed("b", 2), context("c", 3, 2), context("d", 4, 3), added("e", 4),
            ]),
        ])
    }

    func testReplaceAllIsNotedOnTheFileDiff() {
        XCTAssertEqual(edit("foo", "bar", replaceAll: true)?.first?.replaceAll, true)
        XCTAssertEqual(edit("foo", "bar", replaceAll: false)?.first?.replaceAll, false)
        XCTAssertEqual(edit("foo", "bar")?.first?.replaceAll, false)
    }

    func testCRLFLinesAreComparedAndShownWithoutTheirCarriageReturn() {
        XCTAssertEqual(edit("fn a() {\r\n    1\r\n}\r\n", "fn a() {\r\n    2\r\n}\r\n")?.first?.hunks, [
            DiffHunk(oldStart: 1, newStart: 1, lines: [
                context("fn a() {", 1, 1), removed("    1", 2), added("    2", 2), context("}", 3, 3),
            ]),
        ])
    }

    func testALastLineWithoutNewlineIsStillALine() {
        XCTAssertEqual(edit("x\ny", "x\nz")?.first?.hunks, [
            DiffHunk(oldStart: 1, newStart: 1, lines: [context("x", 1, 1), removed("y", 2), added("z", 2)]),
        ])
        XCTAssertEqual(edit("x\ny", "x\ny\n"), [FileDiff(path: "src/lib.rs", relativeLineNumbers: true)])
    }

    func testAnEditFromNothingAddsEveryLine() {
        XCTAssertEqual(edit("", "new\nlines"), [
            FileDiff(path: "src/lib.rs", hunks: [DiffHunk(oldStart: 1, newStart: 1, lines: [added("new", 1), added("lines", 2)])],
                     added: 2, relativeLineNumbers: true),
        ])
    }

    // MARK: multiedit, write

    func testAMultieditGivesTheHunksOfEachEditInTurn() {
        let input = #"{"file_path":"app.py","edits":[{"old_string":"x = 1\ny = 2","new_string":"x = 1\ny = 3"},{"old_string":"def f():\n    pass","new_string":"def f():\n    return 0","replace_all":true}]}"#
        XCTAssertEqual(ToolDiff.diffs(name: "multiedit", input: input), [
            FileDiff(path: "app.py", hunks: [
                DiffHunk(oldStart: 1, newStart: 1, lines: [context("x = 1", 1, 1), removed("y = 2", 2), added("y = 3", 2)]),
                DiffHunk(oldStart: 1, newStart: 1, lines: [context("def f():", 1, 1), removed("    pass", 2), added("    return 0", 2)]),
            ], added: 2, removed: 2, replaceAll: true, relativeLineNumbers: true),
        ])
    }

    func testAWriteAddsEveryLineOfANewFile() {
        let input = json(["file_path": "notes.md", "content": "# Notes\n\nno final newline"])
        XCTAssertEqual(ToolDiff.diffs(name: "write", input: input), [
            FileDiff(path: "notes.md", hunks: [
                DiffHunk(oldStart: 0, newStart: 1, lines: [added("# Notes", 1), added("", 2), added("no final newline", 3)]),
            ], added: 3, isNewFile: true),
        ])
        XCTAssertEqual(ToolDiff.diffs(name: "write", input: #"{"file_path":"empty.txt","content":""}"#),
                       [FileDiff(path: "empty.txt", isNewFile: true)])
    }

    // MARK: apply_patch and patch

    func testApplyPatchReadsTheBeginPatchEnvelope() {
        let patch = """
        *** Begin Patch
        *** Add File: docs/new.md
        +# Title
        +
        +Body
        *** Update File: src/a.rs
        *** Move to: src/b.rs
        @@ fn main() {
             let x = 1;
        -    let y = 2;
        +    let y = 3;
         }
        *** End of File
        *** Delete File: old.txt
        *** End Patch
        """
        XCTAssertEqual(ToolDiff.diffs(name: "apply_patch", input: json(["patch_text": .string(patch)])), [
            FileDiff(path: "docs/new.md", hunks: [
                DiffHunk(oldStart: 0, newStart: 1, lines: [added("# Title", 1), added("", 2), added("Body", 3)]),
            ], added: 3, isNewFile: true),
            FileDiff(path: "src/a.rs", hunks: [
                DiffHunk(oldStart: 1, newStart: 1, lines: [
                    context("    let x = 1;", 1, 1), removed("    let y = 2;", 2), added("    let y = 3;", 2), context("}", 3, 3),
                ], header: "fn main() {"),
            ], added: 1, removed: 1, movedTo: "src/b.rs", relativeLineNumbers: true),
            FileDiff(path: "old.txt", isDeletion: true),
        ])
    }

    func testApplyPatchChunksWithoutAnAtAtLineAndWithCRLFAreRead() {
        let patch = "*** Begin Patch\r\n*** Update File: a.txt\r\n one\r\n-two\r\n+2\r\n@@\r\n-three\r\n*** End Patch\r\n"
        XCTAssertEqual(ToolDiff.diffs(name: "apply_patch", input: json(["patch_text": .string(patch)])), [
            FileDiff(path: "a.txt", hunks: [
                DiffHunk(oldStart: 1, newStart: 1, lines: [context("one", 1, 1), removed("two", 2), added("2", 2)]),
                DiffHunk(oldStart: 1, newStart: 1, lines: [removed("three", 1)]),
            ], added: 1, removed: 2, relativeLineNumbers: true),
        ])
    }

    func testPatchReadsAUnifiedDiffOfSeveralFiles() {
        let patch = """
        diff --git a/src/x.c b/src/x.c
        index 1234567..89abcde 100644
        --- a/src/x.c\t2024-01-01 10:00:00
        +++ b/src/x.c\t2024-01-02 10:00:00
        @@ -10,3 +10,3 @@ int main(void)
         int a = 1;
        -int b = 2;
        +int b = 3;
         return a + b;
        \\ No newline at end of file
        --- /dev/null
        +++ b/src/y.c
        @@ -0,0 +1,2 @@
        +int y;
        +int z;
        --- a/src/old.c
        +++ /dev/null
        """
        XCTAssertEqual(ToolDiff.diffs(name: "patch", input: json(["patch_text": .string(patch)])), [
            FileDiff(path: "src/x.c", hunks: [
                DiffHunk(oldStart: 10, newStart: 10, lines: [
                    context("int a = 1;", 10, 10), removed("int b = 2;", 11), added("int b = 3;", 11), context("return a + b;", 12, 12),
                ], header: "int main(void)"),
            ], added: 1, removed: 1),
            FileDiff(path: "src/y.c", hunks: [
                DiffHunk(oldStart: 0, newStart: 1, lines: [added("int y;", 1), added("int z;", 2)]),
            ], added: 2, isNewFile: true),
            FileDiff(path: "src/old.c", isDeletion: true),
        ])
    }

    func testAHunkHeaderNamingALinePastAnyFileStartsAtLineOneInsteadOfOverflowing() {
        // Int.max, a 20-digit number and a negative start: none can be a line
        // number, so the hunk counts from 1 as a header without numbers does.
        for start in ["9223372036854775807", "99999999999999999999", "-5"] {
            let patch = "--- a/x\n+++ b/x\n@@ -\(start),2 +\(start),2 @@\n keep\n-old\n+new\n"
            XCTAssertEqual(ToolDiff.diffs(name: "patch", input: json(["patch_text": .string(patch)])), [
                FileDiff(path: "x", hunks: [
                    DiffHunk(oldStart: 1, newStart: 1, lines: [context("keep", 1, 1), removed("old", 2), added("new", 2)]),
                ], added: 1, removed: 1),
            ], "start \(start)")
        }
    }

    func testTheLargestLineNumberAHunkMayStartAtIsKeptAndCountedOn() {
        let patch = "--- a/x\n+++ b/x\n@@ -999999999 +0 @@\n-old\n+new\n"
        XCTAssertEqual(ToolDiff.diffs(name: "patch", input: json(["patch_text": .string(patch)])), [
            FileDiff(path: "x", hunks: [
                DiffHunk(oldStart: 999_999_999, newStart: 0, lines: [removed("old", 999_999_999), added("new", 0)]),
            ], added: 1, removed: 1),
        ])
        let past = "--- a/x\n+++ b/x\n@@ -1000000000 +7 @@\n-old\n"
        XCTAssertEqual(ToolDiff.diffs(name: "patch", input: json(["patch_text": .string(past)]))?.first?.hunks.first?.oldStart, 1)
    }

    func testEachPatchToolReadsOnlyItsOwnFormat() {
        let unified = json(["patch_text": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"])
        let envelope = json(["patch_text": "*** Begin Patch\n*** Delete File: x\n*** End Patch\n"])
        XCTAssertNil(ToolDiff.diffs(name: "apply_patch", input: unified))
        XCTAssertNil(ToolDiff.diffs(name: "patch", input: envelope))
    }

    // MARK: malformed and partial inputs

    func testMalformedOrIncompleteInputsMakeNoDiff() {
        XCTAssertNil(ToolDiff.diffs(name: "edit", input: "not json"))
        XCTAssertNil(ToolDiff.diffs(name: "edit", input: #"{"file_path":"a","old_string":"x","new_string":"y""#))
        XCTAssertNil(ToolDiff.diffs(name: "edit", input: #"{"file_path":"a","old_string":"x"}"#))
        XCTAssertNil(ToolDiff.diffs(name: "edit", input: #"{"file_path":"a","old_string":"x","new_string":"y","replace_all":"yes"}"#))
        XCTAssertNil(ToolDiff.diffs(name: "multiedit", input: #"{"file_path":"a","edits":[{"old_string":"x"}]}"#))
        XCTAssertNil(ToolDiff.diffs(name: "multiedit", input: #"{"file_path":"a","edits":"x"}"#))
        XCTAssertNil(ToolDiff.diffs(name: "write", input: #"{"file_path":7,"content":"x"}"#))
        XCTAssertNil(ToolDiff.diffs(name: "apply_patch", input: #"{"patch_text":"just words"}"#))
        XCTAssertNil(ToolDiff.diffs(name: "apply_patch", input: #"{"patch_text":"*** Begin Patch\n*** End Patch"}"#))
        XCTAssertNil(ToolDiff.diffs(name: "patch", input: #"{"patch_text":"@@ -1 +1 @@\n-a\n+b"}"#))
        XCTAssertNil(ToolDiff.diffs(name: "patch", input: #"{"diff":"--- a/x\n+++ b/x\n"}"#))
    }

    func testToolsThatChangeNoFileMakeNoDiff() {
        XCTAssertNil(ToolDiff.diffs(name: "bash", input: #"{"command":"rm -rf build"}"#))
        XCTAssertNil(ToolDiff.diffs(name: "read", input: #"{"file_path":"a"}"#))
    }

    // MARK: size bounds

    func testA100000LineWriteCountsEveryLineButKeepsOnlyTheLimit() throws {
        let content = (0..<100_000).map { "line \($0)" }.joined(separator: "\n")
        let file = try XCTUnwrap(ToolDiff.diffs(name: "write", input: json(["file_path": "big.txt", "content": .string(content)]))?.first)
        XCTAssertEqual(file.added, 100_000)
        XCTAssertEqual(file.hunks.flatMap(\.lines).count, ToolDiff.lineLimit)
        XCTAssertEqual(file.omittedLines, 100_000 - ToolDiff.lineLimit)
        XCTAssertEqual(file.hunks.last?.lines.last, added("line 1999", 2_000))
    }

    func testA100000LineRewriteFallsBackToAllRemovedThenAllAdded() throws {
        let old = (0..<100_000).map { "old \($0)" }.joined(separator: "\n")
        let new = (0..<100_000).map { "new \($0)" }.joined(separator: "\n")
        let file = try XCTUnwrap(edit(old, new)?.first)
        XCTAssertEqual(file.removed, 100_000)
        XCTAssertEqual(file.added, 100_000)
        let kept = file.hunks.flatMap(\.lines)
        XCTAssertEqual(kept.count, ToolDiff.lineLimit)
        XCTAssertEqual(file.omittedLines, 200_000 - ToolDiff.lineLimit)
        XCTAssertTrue(kept.allSatisfy { $0.kind == .removed })
    }

    func testA100000LineEditWithOneChangeShowsJustThatChange() throws {
        let lines = (0..<100_000).map { "line \($0)" }
        var changed = lines
        changed[50_000] = "changed"
        let file = try XCTUnwrap(edit(lines.joined(separator: "\n"), changed.joined(separator: "\n"))?.first)
        XCTAssertEqual(file.hunks, [
            DiffHunk(oldStart: 49_998, newStart: 49_998, lines: [
                context("line 49997", 49_998, 49_998), context("line 49998", 49_999, 49_999), context("line 49999", 50_000, 50_000),
                removed("line 50000", 50_001), added("changed", 50_001),
                context("line 50001", 50_002, 50_002), context("line 50002", 50_003, 50_003), context("line 50003", 50_004, 50_004),
            ]),
        ])
        XCTAssertEqual(file.omittedLines, 0)
    }

    func testAnEditWhoseMiddleDiffersTooMuchIsShownAsRemovedThenAdded() throws {
        let old = (0..<3_000).map { "o\($0)" }.joined(separator: "\n")
        let new = (0..<3_000).map { $0 % 2 == 0 ? "o\($0)" : "n\($0)" }.joined(separator: "\n")
        let file = try XCTUnwrap(edit(old, new)?.first)
        XCTAssertEqual(file.removed, 2_999)
        XCTAssertEqual(file.added, 2_999)
        XCTAssertEqual(file.hunks.first?.lines.first, context("o0", 1, 1))
        XCTAssertEqual(file.hunks.first?.lines.dropFirst().prefix(2).map(\.kind), [.removed, .removed])
    }

    func testTheLineLimitIsSharedByAllFilesOfOneCall() throws {
        let body = (0..<1_500).map { "+l\($0)" }.joined(separator: "\n")
        let patch = "*** Begin Patch\n*** Add File: a\n\(body)\n*** Add File: b\n\(body)\n*** Add File: c\n\(body)\n*** End Patch"
        let files = try XCTUnwrap(ToolDiff.diffs(name: "apply_patch", input: json(["patch_text": .string(patch)])))
        XCTAssertEqual(files.map(\.added), [1_500, 1_500, 1_500])
        XCTAssertEqual(files.map { $0.hunks.flatMap(\.lines).count }, [1_500, 500, 0])
        XCTAssertEqual(files.map(\.omittedLines), [0, 1_000, 1_500])
        XCTAssertEqual(files.map(\.hunks.count), [1, 1, 0])
    }
}

private extension String {
    /// The text with its first line equal to `line` replaced.
    func replacingFirstLine(_ line: String, with replacement: String) -> String {
        var lines = split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if let index = lines.firstIndex(of: line) { lines[index] = replacement }
        return lines.joined(separator: "\n")
    }
}
