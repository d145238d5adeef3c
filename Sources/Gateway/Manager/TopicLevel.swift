import SystemCall

/// Topic levels come from over-the-air content: characters that would change the topic's structure
/// (`/`, `+`, `#`, space, `%`) or its line (every control character: C0, DEL, C1 such as U+0085 NEL,
/// and the line and paragraph separators U+2028/U+2029) are percent-encoded, byte by byte of their
/// UTF-8, so a name can never forge another topic or another line.
enum TopicLevel {
    static func escape(_ level: String) -> String {
        var out = ""
        for scalar in level.unicodeScalars {
            if isEscaped(scalar) {
                for byte in String(scalar).utf8 { out += "%" + Hex.lower([byte]).uppercased() }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func isEscaped(_ scalar: Unicode.Scalar) -> Bool {
        scalar.properties.generalCategory == .control || scalar.value == 0x2028 || scalar.value == 0x2029
            || "/+# %".unicodeScalars.contains(scalar)
    }
}
