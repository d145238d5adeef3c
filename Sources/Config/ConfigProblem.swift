/// One thing wrong with a configuration (or board) file.
public struct ConfigProblem: Sendable, Equatable, CustomStringConvertible {
    public var file: String
    /// 1-based; nil when the problem is the file as a whole or a key that is missing from the top level.
    public var line: Int?
    /// Dotted key, with 1-based indexes for arrays of tables: "radio.interval_ms", "publication[2].type".
    public var key: String
    public var message: String

    public init(file: String, line: Int?, key: String, message: String) {
        self.file = file
        self.line = line
        self.key = key
        self.message = message
    }

    /// `FILE:LINE: key: message`, the way compilers print, so editors can jump to it.
    public var description: String {
        let location = line.map { "\(file):\($0):" } ?? "\(file):"
        return key.isEmpty ? "\(location) \(message)" : "\(location) \(key): \(message)"
    }
}

/// Every problem of a configuration: `run` and `check-config` print them all and start nothing.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var problems: [ConfigProblem]

    public init(problems: [ConfigProblem]) {
        self.problems = problems
    }

    public var description: String { problems.map(\.description).joined(separator: "\n") }
}
