import FoundationEssentials
import NearbyProtocol
import SystemCall
#if canImport(Glibc)
import Glibc
#endif

/// The persisted `GatewayState` (docs/product.md §7): JSON with `background_mode`, `permission`, `power`.
///
/// Loading never fails the gateway: a missing file means defaults, an unusable one is kept aside as
/// `<path>.corrupt-<UTC time>` and reported, and consent is then withheld (`consentWithheld`): the
/// file may have said "denied", so the gateway must not go on the air on a default of "granted". Saving is atomic — a temporary file in the same folder,
/// fsync, rename over the old one, fsync of the folder — so a crash or power cut leaves either the old
/// or the new state, never a torn file.
public struct StateFile: Sendable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public var directory: String {
        let parent = PathText.parent(path)
        return parent.isEmpty ? "." : parent
    }

    /// Creates the state folder and any missing parent as 0750 (owner and group only: the file says
    /// whether the user consented), whatever the umask: each folder made here gets its mode set
    /// explicitly. Folders that exist are left as they are.
    public func createDirectory() throws(StateFileError) {
        var current = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            current += "/" + component
            do throws(Errno) {
                try SystemCall.retrying { mkdir(current, 0o750) }
            } catch where error == .exists {
                continue
            } catch {
                throw StateFileError(path: current, operation: "mkdir", errno: error)
            }
            try stateSyscall("chmod", path: current) { Int(chmod(current, 0o750)) }
        }
    }

    /// The state, and what was wrong if the file could not be used (then the defaults with consent
    /// withheld). Keys missing from an otherwise valid file take their defaults (files from older versions).
    public func load(defaults: GatewayState, now: Date = Date()) -> (GatewayState, StateFileProblem?) {
        let (state, problem) = loadFile(defaults: defaults, now: now)
        return (problem == nil ? state : Self.consentWithheld(state), problem)
    }

    /// What a lost state file leaves: nothing on the air until someone decides again. A "denied"
    /// default stays denied; anything else becomes "undecided", which asks the box's UI.
    static func consentWithheld(_ state: GatewayState) -> GatewayState {
        var safe = state
        if safe.permission != .denied { safe.permission = .undecided }
        return safe
    }

    private func loadFile(defaults: GatewayState, now: Date) -> (GatewayState, StateFileProblem?) {
        removeTemporariesOfDeadWriters()
        let bytes: [UInt8]
        do throws(StateFileError) {
            bytes = try readAll()
        } catch {
            if error.errno.rawValue == ENOENT { return (defaults, nil) }
            return (defaults, StateFileProblem(path: path, reason: "\(error.operation) failed: \(error.errno)", movedTo: nil))
        }
        switch Self.decode(bytes, defaults: defaults) {
        case .success(let state):
            return (state, nil)
        case .failure(let reason):
            let aside = keepAside(now: now)
            switch aside {
            case .success(let movedTo):
                return (defaults, StateFileProblem(path: path, reason: reason.text, movedTo: movedTo))
            case .failure(let error):
                return (defaults, StateFileProblem(path: path, reason: "\(reason.text) (could not keep it aside: \(error))", movedTo: nil))
            }
        }
    }

    /// `save` on a thread of its own (it fsyncs twice), for callers on Swift's shared pool.
    public func persist(_ state: GatewayState) async throws(StateFileError) {
        try await OwnThread.run("state-save") { () throws(StateFileError) in try save(state) }
    }

    /// Blocks until the state is on disk: never call it from an actor or task (use `persist`).
    public func save(_ state: GatewayState) throws(StateFileError) {
        let data = Self.encode(state)
        let temporary = "\(directory)/.\(PathText.lastComponent(path)).tmp-\(getpid())"
        do throws(StateFileError) {
            let fd = Int32(try stateSyscall("open", path: temporary) { Int(Descriptor.open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)) })
            defer { close(fd) }
            let outcome = data.withUnsafeBytes { raw in Result { () throws(Errno) in try SystemCall.writeAll(raw) { write(fd, $0, $1) } } }
            if case .failure(let error) = outcome { throw StateFileError(path: temporary, operation: "write", errno: error) }
            try stateSyscall("fsync", path: temporary) { Int(fsync(fd)) }
            try stateSyscall("rename", path: path) { Int(rename(temporary, path)) }
        } catch {
            unlink(temporary)
            throw error
        }
        // Without this the rename itself may not survive a power cut.
        let dir = directory
        let dirFD = Int32(try stateSyscall("open", path: dir) { Int(Descriptor.open(dir, O_RDONLY | O_DIRECTORY)) })
        defer { close(dirFD) }
        try stateSyscall("fsync", path: dir) { Int(fsync(dirFD)) }
    }

    static func encode(_ state: GatewayState) -> [UInt8] {
        Array("""
        {"background_mode": \(state.backgroundMode), "permission": "\(state.permission.rawValue)", "power": "\(state.power.rawValue)"}

        """.utf8)
    }

    struct Reason: Error { var text: String }

    static func decode(_ bytes: [UInt8], defaults: GatewayState) -> Result<GatewayState, Reason> {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return .failure(Reason(text: "empty")) }
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(bytes))
        } catch DecodingError.typeMismatch(_, let context) where !context.codingPath.isEmpty {
            return .failure(Reason(text: "\(context.codingPath.map(\.stringValue).joined(separator: ".")): wrong type"))
        } catch DecodingError.typeMismatch(_, _) {
            return .failure(Reason(text: "not a JSON object"))
        } catch {
            return .failure(Reason(text: "not JSON (truncated or damaged)"))
        }
        var state = defaults
        if let flag = fields.background_mode { state.backgroundMode = flag }
        if let text = fields.permission {
            guard let permission = Permission(rawValue: text) else {
                return .failure(Reason(text: "permission: expected \"granted\", \"denied\" or \"undecided\", not \"\(text)\""))
            }
            state.permission = permission
        }
        if let text = fields.power {
            guard let power = PowerState(rawValue: text) else {
                return .failure(Reason(text: "power: expected \"active\" or \"standby\", not \"\(text)\""))
            }
            state.power = power
        }
        return .success(state)
    }

    /// The file's fields, each optional (missing or null = default); JSONDecoder is strict about types
    /// (1 is not a boolean, "true" is not either).
    private struct Fields: Decodable {
        var background_mode: Bool?
        var permission: String?
        var power: String?
    }

    private func readAll() throws(StateFileError) -> [UInt8] {
        let fd = Int32(try stateSyscall("open", path: path) { Int(Descriptor.open(path, O_RDONLY)) })
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = try buffer.withUnsafeMutableBytes { raw in
                Result { () throws(StateFileError) in try stateSyscall("read", path: path) { read(fd, raw.baseAddress, raw.count) } }
            }.get()
            if n == 0 { return bytes }
            bytes.append(contentsOf: buffer[0..<n])
            // A state file is under 100 bytes; anything this large is not one of ours.
            if bytes.count > 1 << 20 { return bytes }
        }
    }

    /// A writer killed between creating its temporary file and the rename leaves `.<name>.tmp-<pid>`
    /// behind; one per crash would pile up for ever. Only files of processes that are gone are removed:
    /// a live writer's file is its own business.
    private func removeTemporariesOfDeadWriters() {
        let prefix = ".\(PathText.lastComponent(path)).tmp-"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid > 0, pid != getpid() else { continue }
            do throws(Errno) {
                try SystemCall.retrying { kill(pid, 0) }
            } catch where error.rawValue == ESRCH {
                unlink("\(directory)/\(name)")
            } catch {}   // alive, or not ours to signal (EPERM): its file stays

        }
    }

    /// 20261124T213005Z: the time in UTC, ISO 8601's basic format.
    static func compactUTC(_ date: Date) -> String {
        TimeText.format(date.timeIntervalSince1970, "%Y%m%dT%H%M%SZ", utc: true)
    }

    private func keepAside(now: Date) -> Result<String, StateFileError> {
        let base = "\(path).corrupt-\(Self.compactUTC(now))"
        var target = base
        var n = 1
        while access(target, F_OK) == 0 {
            target = "\(base)-\(n)"
            n += 1
        }
        do throws(StateFileError) {
            try stateSyscall("rename", path: path) { Int(rename(path, target)) }
            return .success(target)
        } catch {
            return .failure(error)
        }
    }
}
