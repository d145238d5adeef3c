/// An MQTT topic filter (MQTT 3.1.1 §4.7, MQTT 5 §4.7), checked once and matched many times.
///
/// The rules, as the specification and Mosquitto's `util_topic.c` apply them:
/// - levels are separated by `/`; empty levels are levels (`a//b` has three, `/a` has two);
/// - `+` matches exactly one level, which may be empty, and must be the whole level (`a+` is refused);
/// - `#` matches the parent level and any number of child levels, and must be the whole last level
///   (`a/#/b` and `a#` are refused);
/// - a filter whose first level is a wildcard never matches a topic starting with `$` (`#` does not
///   see `$SYS/...`, `$SYS/#` does);
/// - a filter is at least one character and never contains NUL.
public struct TopicFilter: Hashable, Sendable, CustomStringConvertible {
    enum Level: Hashable, Sendable {
        case literal(String)
        case single   // +
        case multi    // #
    }

    public let text: String
    let levels: [Level]

    /// Longest filter accepted; a line is at most 4096 bytes anyway, this keeps the bound explicit.
    public static let maxBytes = 1024

    public init(parsing text: String) throws(TopicFilterError) {
        if text.isEmpty { throw .empty }
        if text.utf8.count > Self.maxBytes { throw .tooLong }
        if text.utf8.contains(0) { throw .containsNUL }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        var levels: [Level] = []
        levels.reserveCapacity(parts.count)
        for (index, part) in parts.enumerated() {
            switch part {
            case "+":
                levels.append(.single)
            case "#":
                guard index == parts.count - 1 else { throw .multiLevelNotLast }
                levels.append(.multi)
            default:
                if part.contains("#") { throw .wildcardInsideLevel }
                if part.contains("+") { throw .wildcardInsideLevel }
                levels.append(.literal(String(part)))
            }
        }
        self.text = text
        self.levels = levels
    }

    public var description: String { text }

    /// True when the filter has `+` or `#`.
    public var hasWildcards: Bool {
        levels.contains { if case .literal = $0 { false } else { true } }
    }

    /// Whether `topic` (a topic name, no wildcards) is matched by this filter. Allocation-free: the
    /// broker calls this for every event and every subscription.
    public func matches(_ topic: String) -> Bool {
        let bytes = topic.utf8
        // MQTT §4.7.2: a filter starting with a wildcard never matches a `$` topic.
        if bytes.first == UInt8(ascii: "$"), case .literal = levels[0] {} else if bytes.first == UInt8(ascii: "$") {
            return false
        }
        var cursor: String.UTF8View.Index? = bytes.startIndex   // nil once the last level was taken
        for level in levels {
            if case .multi = level { return true }   // this level and below, also the parent alone (`a/#` ~ `a`)
            guard let start = cursor else { return false }
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
            if case .literal(let literal) = level, !literal.utf8.elementsEqual(bytes[start..<end]) { return false }
            cursor = end == bytes.endIndex ? nil : bytes.index(after: end)
        }
        return cursor == nil
    }
}

public enum TopicFilterError: Error, Equatable, Sendable, CustomStringConvertible {
    case empty
    case tooLong
    case containsNUL
    case multiLevelNotLast
    case wildcardInsideLevel

    public var description: String {
        switch self {
        case .empty: "a filter is at least one character"
        case .tooLong: "a filter is at most \(TopicFilter.maxBytes) bytes"
        case .containsNUL: "a filter never contains NUL"
        case .multiLevelNotLast: "'#' is allowed only as the last level"
        case .wildcardInsideLevel: "'+' and '#' must fill a whole level"
        }
    }
}

/// Topic names (what events are published under): no wildcards, no NUL, at least one character.
public enum TopicName {
    public static func isValid(_ topic: String) -> Bool {
        !topic.isEmpty && !topic.utf8.contains { $0 == 0 || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }
    }
}
