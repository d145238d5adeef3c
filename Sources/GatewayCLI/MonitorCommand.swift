import ArgumentParser
import Broker
import LineClient
import FoundationEssentials
import SystemCall
#if canImport(Glibc)
import Glibc
#endif

struct MonitorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "monitor",
        abstract: "Watch a running gateway through its socket.",
        discussion: """
            Connects to the gateway's UNIX socket, subscribes to FILTER (MQTT wildcards: + one level, \
            # the rest; default: '#' and '$SYS/#') and shows what is found: a live table on a terminal, \
            one line per event otherwise, or the raw event lines with --json. Ctrl-C ends it.
            Exits 1 when the gateway cannot be reached (not running, wrong path, no permission).
            """
    )

    @Option(name: .long, help: ArgumentHelp("The gateway's socket.", valueName: "path"))
    var socket = SocketBrokerConfiguration.defaultPath

    @Flag(name: .long, help: "Print each event line exactly as the gateway sends it (for scripts).")
    var json = false

    @Argument(help: ArgumentHelp("Topic filters to subscribe to.", valueName: "filter"))
    var filters: [String] = []

    /// What `monitor` subscribes to without filters. A stored constant, not an array literal in `run`:
    /// Swift 6.2.3's optimizer (Debian's swiftlang, the arm64 package's compiler) stack-promoted that
    /// literal inside `filters.isEmpty ? [...] : filters` and dropped its element stores, so the arm64
    /// `monitor` read garbage as a string and died allocating 365 GB (docs/install.md, "For a Pi").
    static let defaultFilters = ["#", "$SYS/#"]

    func validate() throws {
        for filter in filters {
            do { _ = try TopicFilter(parsing: filter) } catch { throw ValidationError("bad filter '\(filter)': \(error)") }
        }
    }

    func run() throws {
        let client: SocketLineClient
        do {
            client = try SocketLineClient(path: socket)
        } catch {
            fail("\(error)")
        }
        do {
            for filter in filters.isEmpty ? Self.defaultFilters : filters { try client.send(line: "SUB \(filter)") }
        } catch {
            // A full gateway answers `ERR too-many-clients …` and closes: say that, not EPIPE.
            if let reply = try? client.readLine(timeout: .seconds(2)), reply.hasPrefix("ERR ") { fail("the gateway refused: \(reply)") }
            fail("\(error)")
        }
        let terminal = !json && isatty(STDOUT_FILENO) == 1
        var table = MonitorTable()
        var lastDraw = Date.distantPast
        var lastRefresh = Date.distantPast
        while true {
            let line: String?
            do {
                line = try client.readLine(timeout: terminal ? .seconds(1) : nil)
            } catch {
                fail(error.isEndOfStream ? "the gateway closed the connection (stopped?)" : "\(error)")
            }
            if let line {
                if line.hasPrefix("ERR ") { fail("the gateway refused: \(line)") }
                if line.hasPrefix(MonitorTable.foundListPrefix) {
                    table.refresh(line)   // `GET found`'s entries; its closing `OK <count>` is ignored below
                } else if json {
                    if MonitorTable.event(line) != nil { Self.write(line + "\n") }
                } else if terminal {
                    table.ingest(line, now: Date())
                } else if let plain = MonitorTable.plainLine(line) {
                    Self.write(plain + "\n")
                }
            }
            // Redraw at most 10 times a second under load, and every second for the ages.
            if terminal, line == nil || Date().timeIntervalSince(lastDraw) >= 0.1 {
                lastDraw = Date()
                let header = "nearby-gateway monitor · \(socket) · \(table.rows.count) found · \(Self.clock(lastDraw))"
                let screen = table.render(now: lastDraw, width: Self.terminalWidth(), header: header)
                Self.write("\u{1B}[H\u{1B}[2J" + screen.joined(separator: "\n") + "\n")
            }
            // Ages count from the last sighting: once a second, ask for the found set's current last_seen.
            if terminal, !table.rows.isEmpty, Date().timeIntervalSince(lastRefresh) >= 1 {
                lastRefresh = Date()
                try? client.send(line: "GET found")
            }
        }
    }

    /// 21:30:05, local time.
    private static func clock(_ date: Date) -> String {
        TimeText.format(date.timeIntervalSince1970, "%H:%M:%S", utc: false)
    }

    /// Unbuffered, so a script reading the pipe sees each event as it arrives.
    private static func write(_ text: String) {
        Console.out(text)
    }

    private func fail(_ message: String) -> Never {
        Console.err("nearby-gateway monitor: \(message)\n")
        Glibc.exit(1)
    }

    private static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 20 { return Int(size.ws_col) }
        return 100
    }
}
