import CGPIOD
import Synchronization
import SystemCall
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Every libgpiod call of the project lives in this file, so that the move to libgpiod v2 rewrites
// only this file (docs/leds.md lists what changes). libgpiod v1 reports failure as -1 or NULL with
// errno set; `gpiodCall` is the one place that reads errno.

/// A raw libgpiod object. libgpiod v1 objects are not thread-safe: each wrapper below touches its
/// pointer only under its own Mutex, which is what makes moving the pointer between threads sound.
struct GPIOPointer: @unchecked Sendable {
    let raw: OpaquePointer
}

/// An open GPIO chip (`/dev/gpiochipN`), found by its label (`pinctrl-bcm2711`) or path.
///
/// Lines keep their chip alive and the chip is closed when the last reference goes, because in
/// libgpiod v1 a line object is owned by its chip and dies with `gpiod_chip_close`.
public final class GPIOChip: Sendable {
    /// The consumer name the kernel shows in `gpioinfo` for our lines.
    public static let consumer = "nearby-gateway"

    /// The label or path the chip was opened with; every error names it.
    public let name: String
    /// The kernel's label for the chip (`pinctrl-bcm2711`), whatever it was opened with.
    public let label: String
    public let lineCount: UInt32
    private let chip: Mutex<GPIOPointer>

    private init(name: String, pointer: OpaquePointer) {
        self.name = name
        self.label = gpiod_chip_label(pointer).map { String(cString: $0) } ?? name
        self.lineCount = gpiod_chip_num_lines(pointer)
        self.chip = Mutex(GPIOPointer(raw: pointer))
    }

    deinit {
        chip.withLock { gpiod_chip_close($0.raw) }
    }

    /// Opens the chip whose label is `label` (`gpiodetect` shows labels in brackets).
    public static func open(label: String) throws(GPIOError) -> GPIOChip {
        let pointer = try gpiodPointer("gpiod_chip_open_by_label", chip: label, classify: openKind) {
            gpiod_chip_open_by_label(label)
        }
        return GPIOChip(name: label, pointer: pointer)
    }

    /// Opens the chip at a device path such as `/dev/gpiochip0`.
    public static func open(path: String) throws(GPIOError) -> GPIOChip {
        let pointer = try gpiodPointer("gpiod_chip_open", chip: path, classify: openKind) {
            gpiod_chip_open(path)
        }
        return GPIOChip(name: path, pointer: pointer)
    }

    /// Requests `offset` as an output driven by us; `activeLow` inverts it in the kernel so `true`
    /// always means "LED lit".
    public func requestOutput(offset: UInt32, initial: Bool, activeLow: Bool = false) throws(GPIOError) -> GPIOOutputLine {
        let flags = activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
        let line = try requestLine(offset: offset, call: "gpiod_line_request_output_flags") { line in
            gpiod_line_request_output_flags(line, GPIOChip.consumer, flags, initial ? 1 : 0)
        }
        return GPIOOutputLine(chip: self, offset: offset, pointer: line)
    }

    /// Requests `offset` as an input reporting both edges, read through `GPIOEdgeLine`.
    public func requestEdgeEvents(offset: UInt32, activeLow: Bool, bias: InputBias) throws(GPIOError) -> GPIOEdgeLine {
        var flags: Int32 = activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
        switch bias {
        case .asIs: break
        case .disabled: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_DISABLE)
        case .pullUp: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_UP)
        case .pullDown: flags |= Int32(GPIOD_LINE_REQUEST_FLAG_BIAS_PULL_DOWN)
        }
        let line = try requestLine(offset: offset, call: "gpiod_line_request_both_edges_events_flags") { line in
            gpiod_line_request_both_edges_events_flags(line, GPIOChip.consumer, flags)
        }
        return GPIOEdgeLine(chip: self, offset: offset, pointer: line)
    }

    private func requestLine(
        offset: UInt32, call: String, _ request: (OpaquePointer) -> Int32
    ) throws(GPIOError) -> GPIOPointer {
        guard offset < lineCount else {
            throw GPIOError(kind: .noSuchLine, chip: name, line: offset, call: "gpiod_chip_get_line", errno: EINVAL,
                            detail: "the chip has \(lineCount) lines (0...\(Int(lineCount) - 1))")
        }
        // get_line and request both update the chip's line table, hence the chip lock.
        return try chip.withLock { (chip) throws(GPIOError) -> GPIOPointer in
            let line = try gpiodPointer("gpiod_chip_get_line", chip: name, line: offset, classify: lineKind) {
                gpiod_chip_get_line(chip.raw, offset)
            }
            _ = try gpiodCall(call, chip: name, line: offset, classify: requestKind) { request(line) }
            return GPIOPointer(raw: line)
        }
    }
}

/// An output line we hold; `set` drives it, `release` hands it back to the kernel.
public final class GPIOOutputLine: LEDLine {
    public let chip: GPIOChip
    public let offset: UInt32
    private let line: Mutex<GPIOPointer?>

    fileprivate init(chip: GPIOChip, offset: UInt32, pointer: GPIOPointer) {
        self.chip = chip
        self.offset = offset
        self.line = Mutex(pointer)
    }

    public func set(_ on: Bool) throws(GPIOError) {
        try line.withLock { (line) throws(GPIOError) in
            guard let line else { throw released("gpiod_line_set_value") }
            _ = try gpiodCall("gpiod_line_set_value", chip: chip.name, line: offset, classify: runtimeKind) {
                gpiod_line_set_value(line.raw, on ? 1 : 0)
            }
        }
    }

    /// Idempotent: the kernel keeps the last value; callers switch the LED off first.
    public func release() {
        line.withLock { line in
            if let held = line { gpiod_line_release(held.raw) }
            line = nil
        }
    }

    private func released(_ call: String) -> GPIOError {
        GPIOError(kind: .released, chip: chip.name, line: offset, call: call, errno: 0)
    }
}

/// An input line reporting edges. Used by one thread at a time (an `InputWatcher`); the lock only
/// keeps `release` from racing a wait.
public final class GPIOEdgeLine: GPIOEventSource {
    public let chip: GPIOChip
    public let offset: UInt32
    private let line: Mutex<GPIOPointer?>

    fileprivate init(chip: GPIOChip, offset: UInt32, pointer: GPIOPointer) {
        self.chip = chip
        self.offset = offset
        self.line = Mutex(pointer)
    }

    public var description: String { "gpiochip '\(chip.name)' line \(offset)" }

    public func waitForEdge(timeout: Duration) throws(GPIOError) -> Bool {
        try line.withLock { (line) throws(GPIOError) -> Bool in
            guard let line else { throw released("gpiod_line_event_wait") }
            let (seconds, attoseconds) = timeout.components
            var wait = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
            let ready = try gpiodCall("gpiod_line_event_wait", chip: chip.name, line: offset, classify: runtimeKind) {
                gpiod_line_event_wait(line.raw, &wait)
            }
            guard ready == 1 else { return false }
            // Consume the event so the next wait blocks again; its type is not needed because the
            // debouncer reads the settled level, not the edge direction.
            var event = gpiod_line_event()
            _ = try gpiodCall("gpiod_line_event_read", chip: chip.name, line: offset, classify: runtimeKind) {
                gpiod_line_event_read(line.raw, &event)
            }
            return true
        }
    }

    public func level() throws(GPIOError) -> Bool {
        try line.withLock { (line) throws(GPIOError) -> Bool in
            guard let line else { throw released("gpiod_line_get_value") }
            let value = try gpiodCall("gpiod_line_get_value", chip: chip.name, line: offset, classify: runtimeKind) {
                gpiod_line_get_value(line.raw)
            }
            return value == 1
        }
    }

    public func release() {
        line.withLock { line in
            if let held = line { gpiod_line_release(held.raw) }
            line = nil
        }
    }

    private func released(_ call: String) -> GPIOError {
        GPIOError(kind: .released, chip: chip.name, line: offset, call: call, errno: 0)
    }
}

// MARK: - errno → GPIOError

private func openKind(_ code: Int32) -> GPIOError.Kind {
    switch code {
    case ENOENT: .chipMissing
    case ENOTTY, ENODEV: .notAChip
    case EACCES, EPERM: .permission
    default: .other
    }
}

private func lineKind(_ code: Int32) -> GPIOError.Kind {
    switch code {
    case EINVAL: .noSuchLine
    case ENODEV, ENXIO, EIO: .chipGone
    default: .other
    }
}

private func requestKind(_ code: Int32) -> GPIOError.Kind {
    switch code {
    case EBUSY: .lineBusy
    case EACCES, EPERM: .permission
    case ENODEV, ENXIO, EIO: .chipGone
    default: .other
    }
}

private func runtimeKind(_ code: Int32) -> GPIOError.Kind {
    switch code {
    case ENODEV, ENXIO, EIO: .chipGone
    case EPERM: .released
    default: .other
    }
}

/// Runs an int-returning libgpiod call: -1 becomes a `GPIOError` naming the call, chip, line and
/// errno; EINTR (a signal arriving during a wait) is retried.
private func gpiodCall(
    _ call: String, chip: String, line: UInt32? = nil,
    classify: (Int32) -> GPIOError.Kind, _ body: () -> Int32
) throws(GPIOError) -> Int32 {
    do {
        // errno cleared first: libgpiod v1 may return -1 from a path that does not set it.
        return try SystemCall.retrying { () -> Int32 in
            errno = 0
            return body()
        }
    } catch {
        throw GPIOError(kind: classify(error.rawValue), chip: chip, line: line, call: call, errno: error.rawValue)
    }
}

/// Runs a pointer-returning libgpiod call: NULL becomes a `GPIOError`.
private func gpiodPointer(
    _ call: String, chip: String, line: UInt32? = nil,
    classify: (Int32) -> GPIOError.Kind, _ body: () -> OpaquePointer?
) throws(GPIOError) -> OpaquePointer {
    errno = 0
    guard let pointer = body() else {
        let code = errno
        throw GPIOError(kind: classify(code), chip: chip, line: line, call: call, errno: code)
    }
    return pointer
}
