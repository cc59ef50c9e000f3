"""Writes the ~5 MB markdown document `make bench-parse` parses (not committed).

What agents write, repeated with varying words and numbers: headings,
paragraphs with emphasis, code spans and links, bullet, numbered and task
lists, nested lists holding fenced code, tables, block quotes, fenced code,
strikethrough and autolinks; then the CommonMark and GFM spec examples once
each when ../shared/commonmark is there. Deterministic: same bytes every run.

usage: python3 markdown_doc.py OUT [MEGABYTES]
"""
import json
import os
import random
import sys

WORDS = ("the parser reads each line once and keeps the open blocks on a stack "
         "so a reply streamed token by token costs time linear in what arrives "
         "while the view updates rows that changed and leaves the rest alone").split()


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def section(rng, i):
    w = lambda n: words(rng, n)
    return f"""## {i}. Step {i}: {w(4)}

I looked at `Sources/Core/File{i}.swift` and found that **{w(3)}** is {w(8)}. The fix is
*{w(2)}*: see [the issue](https://github.com/example/repo/issues/{i}) and ~~{w(2)}~~ {w(10)},
then run `make test-{i % 7}` again. More at https://example.com/docs/{i} or <mailto:dev{i}@example.com>.

1. First, {w(9)} (`--flag-{i}`).
2. Then **{w(3)}** and *{w(4)}*.
3. Finally {w(12)}.

- [x] {w(5)}
- [ ] {w(6)} `code_{i}()`
- [ ] {w(4)}

- Top level item {i} with {w(6)}
  - nested with `inline` and **bold** {w(5)}
    ```swift
    func step{i}(_ x: Int) -> Int {{
        let y = x * {i} + 1
        return y // {w(3)}
    }}
    ```
  - another {w(7)}
- Last item {w(5)}

| File | Lines | Status |
|:-----|------:|:------:|
| `a{i}.swift` | {i * 3} | **ok** |
| `b{i}.swift` | {i * 7} | *changed* |
| `c{i}.py` | {i % 100} | ~~removed~~ |

> **Note:** {w(14)}
> {w(10)} [link](https://example.org/{i} "title {i}").

```python
def handler_{i}(event):
    # {w(5)}
    for item in event.items:
        if item.size > {i}:
            yield item.name
```

{w(20)}
{w(18)} _{w(2)}_ and __{w(2)}__ with a hard break  
{w(9)}.

"""


def main():
    out = sys.argv[1]
    megabytes = float(sys.argv[2]) if len(sys.argv) > 2 else 5
    rng = random.Random(36)
    parts, size, i = [], 0, 1
    spec_dir = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "commonmark")
    spec = []
    for name in ("commonmark-0.31.2.json", "gfm-0.29-spec.json"):
        path = os.path.join(spec_dir, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                spec += [e["markdown"] for e in json.load(f)]
    tail = "\n\n".join(spec)
    target = int(megabytes * 1_000_000) - len(tail.encode())
    while size < target:
        s = section(rng, i)
        parts.append(s)
        size += len(s.encode())
        i += 1
    with open(out, "w", encoding="utf-8") as f:
        f.write("# Benchmark document\n\n" + "".join(parts) + tail)


if __name__ == "__main__":
    main()
