import SystemCall
#if canImport(Glibc)
import Glibc
#endif

/// A state file operation that failed, with the file and the errno (EACCES for a read-only folder,
/// ENOSPC for a full disk, ...).
public struct StateFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file or folder the call was about.
    public var path: String
    /// The system call: "open", "write", "fsync", "rename", ...
    public var operation: String
    public var errno: Errno

    public init(path: String, operation: String, errno: Errno) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    public var description: String {
        "\(path): \(operation) failed: \(errno)"
    }
}

/// What was wrong with the state file at boot. The gateway continues with the defaults, consent
/// withheld (permission "undecided", or "denied" if that is the default).
public struct StateFileProblem: Sendable, Equatable, CustomStringConvertible {
    public var path: String
    /// Why it could not be used: "empty", "not JSON: ...", "permission: expected granted, denied or undecided", ...
    public var reason: String
    /// Where the corrupt file was kept aside (nil if it could not be read or moved).
    public var movedTo: String?

    public var description: String {
        let kept = movedTo.map { "; kept aside as \($0)" } ?? ""
        return "\(path): \(reason); using defaults with consent withheld\(kept)"
    }
}

/// Runs one system call (`SystemCall.retrying`: EINTR retried), turning -1 into a `StateFileError`
/// naming `path`.
@discardableResult
func stateSyscall(_ operation: String, path: String, _ call: () -> Int) throws(StateFileError) -> Int {
    do {
        return try SystemCall.retrying(call)
    } catch {
        throw StateFileError(path: path, operation: operation, errno: error)
    }
}
