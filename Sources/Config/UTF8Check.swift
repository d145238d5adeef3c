/// Where a file stops being UTF-8, for a config problem that names the line.
enum UTF8Check {
    struct Position: Equatable {
        var line: Int
        /// 1-based byte column.
        var column: Int
        var byte: UInt8
    }

    /// The first byte that does not start or continue a valid UTF-8 sequence, or nil.
    static func firstInvalidByte(in bytes: [UInt8]) -> Position? {
        var line = 1, lineStart = 0, offset = 0
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1, encoded.first == 0x0A { line += 1; lineStart = offset + 1 }
                offset += encoded.count
            case .error:
                let index = bytes.index(bytes.startIndex, offsetBy: offset)
                return Position(line: line, column: offset - lineStart + 1, byte: bytes[index])
            case .emptyInput:
                return nil
            }
        }
    }
}
