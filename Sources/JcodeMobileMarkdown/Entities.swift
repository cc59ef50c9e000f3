// Entity and numeric character references. The named table holds the ones
// common in practice, not HTML's full list (an unknown name stays text).

enum Entities {
    private static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}", "copy": "©", "reg": "®",
        "trade": "™", "hellip": "…", "mdash": "—", "ndash": "–", "lsquo": "‘", "rsquo": "’", "ldquo": "“",
        "rdquo": "”", "laquo": "«", "raquo": "»", "bull": "•", "middot": "·", "deg": "°", "plusmn": "±",
        "times": "×", "divide": "÷", "euro": "€", "pound": "£", "yen": "¥", "cent": "¢", "sect": "§",
        "para": "¶", "larr": "←", "rarr": "→", "uarr": "↑", "darr": "↓", "harr": "↔", "rArr": "⇒", "lArr": "⇐",
        "hearts": "♥", "ne": "≠", "le": "≤", "ge": "≥", "infin": "∞", "asymp": "≈", "frac12": "½",
        "frac14": "¼", "frac34": "¾", "auml": "ä", "ouml": "ö", "uuml": "ü", "Auml": "Ä", "Ouml": "Ö",
        "Uuml": "Ü", "szlig": "ß", "eacute": "é", "egrave": "è", "aacute": "á", "agrave": "à", "ccedil": "ç",
        "ntilde": "ñ", "AElig": "Æ", "Dcaron": "Ď", "HilbertSpace": "ℋ", "DifferentialD": "ⅆ",
        "ClockwiseContourIntegral": "∲", "ngE": "≧̸", "shy": "\u{AD}", "ensp": "\u{2002}", "emsp": "\u{2003}",
        "thinsp": "\u{2009}", "zwj": "\u{200D}", "zwnj": "\u{200C}", "check": "✓", "star": "☆", "minus": "−",
    ]

    /// The UTF-8 of a reference at `i` (an "&") and the offset after its ";".
    static func decode(_ s: [UInt8], _ i: Int) -> ([UInt8], Int)? {
        var j = i + 1
        guard j < s.count else { return nil }
        if s[j] == UInt8(ascii: "#") {
            j += 1
            let hex = j < s.count && (s[j] | 0x20) == UInt8(ascii: "x")
            if hex { j += 1 }
            let digitsStart = j
            var value = 0
            while j < s.count && j - digitsStart < (hex ? 6 : 7), let digit = digitValue(s[j], hex: hex) {
                value = value * (hex ? 16 : 10) + digit
                j += 1
            }
            guard j > digitsStart, j < s.count, s[j] == UInt8(ascii: ";") else { return nil }
            let scalar = value == 0 ? nil : Unicode.Scalar(UInt32(value))
            return (Array(String(Character(scalar ?? "\u{FFFD}")).utf8), j + 1)
        }
        while j < s.count && j - i <= 32 && (HTMLScanner.isLetter(s[j]) || isDigit(s[j])) { j += 1 }
        guard j < s.count, s[j] == UInt8(ascii: ";"), j > i + 1,
              let text = named[String(decoding: s[(i + 1)..<j], as: UTF8.self)] else { return nil }
        return (Array(text.utf8), j + 1)
    }

    private static func digitValue(_ c: UInt8, hex: Bool) -> Int? {
        if isDigit(c) { return Int(c - 48) }
        let lower = c | 0x20
        if hex && lower >= 97 && lower <= 102 { return Int(lower - 87) }
        return nil
    }
}
