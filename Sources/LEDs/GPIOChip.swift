import CGPIOD
import Synchronization
import SystemCall
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Every GPIO call of the project lives in this file. It goes through the CGPIOD shim
// (Sources/CGPIOD), which gives libgpiod 1.6 and 2.x one small API; like libgpiod, the shim reports
// failure as -1 or NULL with errno set, and `gpioCall` / `gpioPointer` are the one place that reads errno.

/// A raw shim object. libgpiod objects are not thread-safe: each wrapper below touches its pointer
/// only under its own Mutex, which is what makes moving the pointer between threads sound.
struct GPIOPointer: @unchecked Sendable {
    let raw: OpaquePointer
}

/// An open GPIO chip (`/dev/gpiochipN`), found by its label (`pinctrl-bcm2711`) or path.
///
/// Lines keep their chip alive and the chip is closed when the last reference goes, because in
/// libgpiod 1.6 a line object is owned by its chip and dies with it.
public final class GPIOChip: Sendable {
    /// The consumer name the kernel shows in `gpioinfo` for our lines.
    public static let consumer = "nearby-gateway"
    /// The libgpiod this binary runs with ("1.6.3", "2.2.1"), for the log.
    public static var libraryVersion: String { String(cString: nearby_gpio_library_version()) }

    /// The label or path the chip was opened with; every error names it.
    public let name: String
    /// The kernel's label for the chip (`pinctrl-bcm2711`), whatever it was opened with.
    public let label: String
    public let lineCount: UInt32
    private let chip: Mutex<GPIOPointer>

    private init(name: String, pointer: OpaquePointer) {
        self.name = name
        self.label = String(cString: nearby_gpio_chip_label(pointer))
        self.lineCount = nearby_gpio_chip_num_lines(pointer)
        self.chip = Mutex(GPIOPointer(raw: pointer))
    }

    deinit {
        chip.withLock { nearby_gpio_chip_close($0.raw) }
    }

    /// Opens the first chip whose label is `label` (`gpiodetect` shows labels in brackets).
    public static func open(label: String) throws(GPIOError) -> GPIOChip {
        let pointer = try gpioPointer("nearby_gpio_chip_open_by_label", chip: label, classify: openKind) {
            nearby_gpio_chip_open_by_label(label)
        }
        return GPIOChip(name: label, pointer: pointer)
    }

    /// Opens the chip at a device path such as `/dev/gpiochip0`.
    public static func open(path: String) throws(GPIOError) -> GPIOChip {
        let pointer = try gpioPointer("nearby_gpio_chip_open", chip: path, classify: openKind) {
            nearby_gpio_chip_open(path)
        }
        return GPIOChip(name: path, pointer: pointer)
    }

    /// Requests `offset` as an output driven by us; `activeLow` inverts it in the kernel so `true`
    /// always means "LED lit".
    public func requestOutput(offset: UInt32, initial: Bool, activeLow: Bool = false) throws(GPIOError) -> GPIOOutputLine {
        let line = try requestLine(offset: offset, call: "nearby_gpio_request_output") { chip in
            nearby_gpio_request_output(chip, offset, GPIOChip.consumer, activeLow ? 1 : 0, initial ? 1 : 0)
        }
        return GPIOOutputLine(chip: self, offset: offset, pointer: line)
    }

    /// Requests `offset` as an input reporting both edges, read through `GPIOEdgeLine`.
    public func requestEdgeEvents(offset: UInt32, activeLow: Bool, bias: InputBias) throws(GPIOError) -> GPIOEdgeLine {
        let mapped = switch bias {
        case .asIs: NEARBY_GPIO_BIAS_AS_IS
        case .disabled: NEARBY_GPIO_BIAS_DISABLED
        case .pullUp: NEARBY_GPIO_BIAS_PULL_UP
        case .pullDown: NEARBY_GPIO_BIAS_PULL_DOWN
        }
        let line = try requestLine(offset: offset, call: "nearby_gpio_request_edges") { chip in
            nearby_gpio_request_edges(chip, offset, GPIOChip.consumer, activeLow ? 1 : 0, mapped)
        }
        return GPIOEdgeLine(chip: self, offset: offset, pointer: line)
    }

    private func requestLine(
        offset: UInt32, call: String, _ request: (OpaquePointer) -> OpaquePointer?
    ) throws(GPIOError) -> GPIOPointer {
        guard offset < lineCount else {
            throw GPIOError(kind: .noSuchLine, chip: name, line: offset, call: call, errno: Errno(rawValue: EINVAL),
                            detail: "the chip has \(lineCount) lines (0...\(Int(lineCount) - 1))")
        }
        // A request updates the chip's line table (libgpiod 1.6), hence the chip lock.
        return try chip.withLock { (chip) throws(GPIOError) -> GPIOPointer in
            GPIOPointer(raw: try gpioPointer(call, chip: name, line: offset, classify: requestKind) { request(chip.raw) })
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
            guard let line else { throw released("nearby_gpio_line_set") }
            _ = try gpioCall("nearby_gpio_line_set", chip: chip.name, line: offset, classify: runtimeKind) {
                nearby_gpio_line_set(line.raw, on ? 1 : 0)
            }
        }
    }

    /// Idempotent: the kernel keeps the last value; callers switch the LED off first.
    public func release() {
        line.withLock { line in
            if let held = line { nearby_gpio_line_release(held.raw) }
            line = nil
        }
    }

    private func released(_ call: String) -> GPIOError {
        GPIOError(kind: .released, chip: chip.name, line: offset, call: call, errno: Errno(rawValue: 0))
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

    /// Waits for edges and consumes every pending one: the debouncer reads the settled level, not
    /// the edge directions.
    public func waitForEdge(timeout: Duration) throws(GPIOError) -> Bool {
        try line.withLock { (line) throws(GPIOError) -> Bool in
            guard let line else { throw released("nearby_gpio_line_wait_edges") }
            let (seconds, attoseconds) = timeout.components
            let nanoseconds = seconds * 1_000_000_000 + attoseconds / 1_000_000_000
            let ready = try gpioCall("nearby_gpio_line_wait_edges", chip: chip.name, line: offset, classify: runtimeKind) {
                nearby_gpio_line_wait_edges(line.raw, nanoseconds)
            }
            return ready == 1
        }
    }

    public func level() throws(GPIOError) -> Bool {
        try line.withLock { (line) throws(GPIOError) -> Bool in
            guard let line else { throw released("nearby_gpio_line_get") }
            let value = try gpioCall("nearby_gpio_line_get", chip: chip.name, line: offset, classify: runtimeKind) {
                nearby_gpio_line_get(line.raw)
            }
            return value == 1
        }
    }

    public func release() {
        line.withLock { line in
            if let held = line { nearby_gpio_line_release(held.raw) }
            line = nil
        }
    }

    private func released(_ call: String) -> GPIOError {
        GPIOError(kind: .released, chip: chip.name, line: offset, call: call, errno: Errno(rawValue: 0))
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

private func requestKind(_ code: Int32) -> GPIOError.Kind {
    switch code {
    case EBUSY: .lineBusy
    case EINVAL: .noSuchLine
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

/// Runs an int-returning shim call: -1 becomes a `GPIOError` naming the call, chip, line and
/// errno; EINTR (a signal arriving during a wait) is retried.
private func gpioCall(
    _ call: String, chip: String, line: UInt32? = nil,
    classify: (Int32) -> GPIOError.Kind, _ body: () -> Int32
) throws(GPIOError) -> Int32 {
    do {
        // errno cleared first by the helper: libgpiod v1 may return -1 from a path that does not set it.
        return try SystemCall.retrying(body)
    } catch {
        throw GPIOError(kind: classify(error.rawValue), chip: chip, line: line, call: call, errno: error)
    }
}

/// Runs a pointer-returning shim call: NULL becomes a `GPIOError`.
private func gpioPointer(
    _ call: String, chip: String, line: UInt32? = nil,
    classify: (Int32) -> GPIOError.Kind, _ body: () -> OpaquePointer?
) throws(GPIOError) -> OpaquePointer {
    do {
        return try SystemCall.nonNull(body)
    } catch {
        throw GPIOError(kind: classify(error.rawValue), chip: chip, line: line, call: call, errno: error)
    }
}
