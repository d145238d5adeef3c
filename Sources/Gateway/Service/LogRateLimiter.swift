/// Keeps a flood of one log line (a client toggling a state 100,000 times, 2,000 refused connections)
/// from flooding the journal: per call site, at most `burst` lines per `window`; the rest are
/// counted, and once the window is over a single line says how many were suppressed. A pure value:
/// the caller passes the time and writes what it returns.
struct LogRateLimiter {
    struct Site: Hashable, Sendable {
        var file: String
        var line: UInt
    }

    /// Lines the caller writes, in order: summaries of ended windows, then (if admitted) its own line.
    struct Decision: Equatable {
        var summaries: [Summary]
        var admitted: Bool
    }

    struct Summary: Equatable {
        var site: Site
        var suppressed: Int
        /// The first suppressed line's message, so a reader knows what was left out.
        var example: String

        var text: String { "\(suppressed) similar lines suppressed (at most \(LogRateLimiter.standardBurst) a second from one place) like: \(example)" }
    }

    private struct Window {
        var start: UInt64
        var written = 0
        var suppressed = 0
        var example = ""
    }

    static let standardBurst = 20
    let burst: Int
    let windowNanoseconds: UInt64
    private var windows: [Site: Window] = [:]

    init(burst: Int = standardBurst, windowNanoseconds: UInt64 = 1_000_000_000) {
        self.burst = burst
        self.windowNanoseconds = windowNanoseconds
    }

    mutating func admit(_ site: Site, message: @autoclosure () -> String, now: UInt64) -> Decision {
        let summaries = endWindows(before: now)
        var window = windows[site] ?? Window(start: now)
        defer { windows[site] = window }
        if window.written < burst {
            window.written += 1
            return Decision(summaries: summaries, admitted: true)
        }
        if window.suppressed == 0 { window.example = message() }
        window.suppressed += 1
        return Decision(summaries: summaries, admitted: false)
    }

    /// Every pending summary, window over or not (at exit).
    mutating func flush() -> [Summary] {
        endWindows(before: .max)
    }

    /// Forgets windows that are over (so the table holds only sites active in the last window) and
    /// returns the summaries of those that suppressed lines.
    private mutating func endWindows(before now: UInt64) -> [Summary] {
        var summaries: [Summary] = []
        for (site, window) in windows where now == .max || now &- window.start >= windowNanoseconds {
            if window.suppressed > 0 { summaries.append(Summary(site: site, suppressed: window.suppressed, example: window.example)) }
            windows[site] = nil
        }
        return summaries.sorted { ($0.site.file, $0.site.line) < ($1.site.file, $1.site.line) }
    }
}
