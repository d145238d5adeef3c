/// Text from outside (message content from the air, names, config values) made safe to show a
/// person: every control character (C0, DEL, C1) and the line and paragraph separators (U+2028,
/// U+2029: some terminals and most viewers break the line there) are written as a visible escape, so a
/// message cannot retitle, clear or move the cursor of the terminal that shows it, nor fake a line
/// of its own (docs/socket-protocol.md, "nearby-gateway monitor"). `\n`, `\r`, `\t` as those two
/// characters, the separators as `\u2028` and `\u2029`, the rest as `\xHH`. Everything else,
/// including a backslash, is left as it is.
public enum TerminalText {
    public static func escape(_ text: String) -> String {
        // Most text has no control character: a byte scan finds that without building a new string.
        // C1 controls (U+0080–U+009F) are encoded in UTF-8 as C2 80…C2 9F; U+2028/U+2029 as E2 80 A8/A9.
        let utf8 = text.utf8
        var previous: UInt8 = 0, beforePrevious: UInt8 = 0
        let clean = utf8.allSatisfy { byte in
            defer { (beforePrevious, previous) = (previous, byte) }
            let c1 = previous == 0xC2 && byte >= 0x80 && byte <= 0x9F
            let separator = beforePrevious == 0xE2 && previous == 0x80 && (byte == 0xA8 || byte == 0xA9)
            return byte >= 0x20 && byte != 0x7F && !c1 && !separator
        }
        if clean { return text }
        var out = ""
        out.reserveCapacity(utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x2028, 0x2029: out += "\\u" + String(scalar.value, radix: 16)
            case 0x00..<0x20, 0x7F, 0x80...0x9F:
                let hex = String(scalar.value, radix: 16)
                out += "\\x" + (hex.count == 1 ? "0" : "") + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
