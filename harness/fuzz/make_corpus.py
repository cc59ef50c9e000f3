#!/usr/bin/env python3
"""Writes the fuzzers' seed corpus and dictionary from what the project
already knows is valid input: every example of docs/ABI.md (actions, platform
events, server events, options), the scenario names, and a few inputs the
tests use for edge cases. Run it after the ABI grows; commit the result.

    python3 harness/fuzz/make_corpus.py
"""

import hashlib
import json
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
ABI = REPO / "docs" / "ABI.md"
SCENARIOS = REPO / "Sources" / "JcodeMobileCore" / "Scenarios" / "Scenario.swift"


def sections():
    """(section heading, [json examples]) of the generated reference."""
    text = ABI.read_text()
    blocks = re.findall(r"^## (.+?)$|```json\n(.*?)\n```", text, re.M | re.S)
    result, heading = {}, None
    for h, body in blocks:
        if h:
            heading = h.strip()
        elif heading:
            result.setdefault(heading, []).append(body.strip())
    return result


MARKDOWN_SEEDS = [
    "# Plan\n\nI'll do **three** things:\n\n1. read `main.swift`\n2. fix the [bug][b]\n3. test\n\n"
    "```swift\nlet x = 1\n```\n\n> note: *careful* ~~old~~\n\n[b]: https://bugs/1 \"t\"\n",
    "| a | b |\n|:--|--:|\n| 1 \\| x | `2` |\n\n- [x] done\n- [ ] todo\n  - nested\n    > q\n\n---\n"
    "www.example.com <https://a.b> &amp; &#x1F600; ![i](/s.png)\n",
    "Setext\n===\n\n    indented\n\n<div>\nhtml\n</div>\n\n*a **b** c* _d_ ***e*** a\\\nb  \nc\n~~~\nopen",
]


def write(target: str, data: bytes) -> None:
    folder = HERE / "corpus" / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / hashlib.sha1(data).hexdigest()[:16]).write_bytes(data)


def main() -> None:
    for folder in (HERE / "corpus").glob("*"):
        for f in folder.glob("*"):
            f.unlink()
    examples = sections()
    actions = [e for h, es in examples.items() if h.startswith("Actions") for e in es]
    platform = [e for h, es in examples.items() if h.startswith("Platform events") for e in es]
    server = [e for h, es in examples.items() if h.startswith("Server events") for e in es]
    scenarios = re.findall(r'case \w+ = "(\w+)"|case (\w+)$', SCENARIOS.read_text(), re.M)
    names = [a or b for a, b in scenarios if (a or b) not in ("onboarding",)] + ["onboarding"]

    edge = [b"", b"{}", b"[]", b"null", b'{"type":', b'{"type":"set_host","value":"\\ud83d\\ude00"}',
            b'{"type":"set_host","value":42}', b'"\\u0000"', b"1e999", b"-0", b"[[[[[[[[[[]]]]]]]]]]",
            b'{"a":1,"a":2}', b'\xff\xfe', b'{"type":"tap_node","node_id":"pair.submit"}']
    for e in actions + edge:
        write("dispatch", e.encode() if isinstance(e, str) else e)
    for e in platform + edge:
        write("platform_event", b"\x00" + (e.encode() if isinstance(e, str) else e))
    for e in server:
        write("platform_event", b"\x01" + e.encode())
        write("platform_event", b"\x02" + e.encode())
    write("platform_event", b"\x01" + "\n".join(server[:6]).encode())
    for e in actions + platform + server + [x.decode("latin-1") for x in edge]:
        write("json", e.encode("utf-8", "surrogatepass") if isinstance(e, str) else e)
    for name in names:
        write("app_new", json.dumps({"scenario": name}).encode())
    for opts in ['{"log_capacity":3,"viewport":{"width":320,"height":640}}', '{"device_id":"d","device_name":"n"}',
                 '{"snapshot":{}}', '{"scenario":"nope"}', "", "{}"]:
        write("app_new", opts.encode())
    # Sessions: (call byte, length byte, body) steps; see FuzzTargets.swift.
    def step(op, body=b""):
        return bytes([op, len(body)]) + body
    write("session", step(4, b"hello") + step(3, b"Hi ") + step(3, b"there") + step(7))
    write("session", step(4, b"go") + step(8, b"call_1") + step(20, b"call_1") + step(32, b"call_1") + step(7))
    write("session", step(4, b"go") + step(9, b"also") + step(3, b"x") + step(7 + 12, b"") + step(10, b"\x01"))
    write("session", step(5, b"draft") + step(6, b"chat.send") + step(11) + step(0, b'{"type":"reset"}'))
    for s in server[:12]:
        write("session", step(2, s.encode()[:255]))
    # Markdown replies: the first byte also sets the streaming chunk size.
    for md in MARKDOWN_SEEDS:
        write("markdown", md.encode())
    # The dictionary: every type name and field name of the ABI.
    tokens = set()
    for e in actions + platform + server:
        obj = json.loads(e)
        tokens.add(json.dumps(obj.get("type")))
        tokens.update(json.dumps(k) for k in obj)
    (HERE / "jcode.dict").write_text("".join(f'"{t.replace(chr(92), chr(92) * 2).replace(chr(34), chr(92) + chr(34))}"\n' for t in sorted(tokens)))
    print(f"corpus: {sum(1 for _ in (HERE / 'corpus').rglob('*') if _.is_file())} files; dictionary: {len(tokens)} tokens")


if __name__ == "__main__":
    main()
