#if canImport(Glibc)
import Glibc
#endif

/// A UNIX-domain socket address (`sockaddr_un`), built in one place for every socket of the project:
/// the broker's path, btvirt's, systemd's `$NOTIFY_SOCKET` and the benchmark's clients.
public struct UnixAddress: Sendable {
    /// Why a string is no socket address.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        case empty
        /// `bytes` long, where `sun_path` holds at most `capacity` (with its NUL after them).
        case tooLong(bytes: Int, capacity: Int)
        case containsNUL

        public var description: String {
            switch self {
            case .empty: "socket path is empty"
            case .tooLong(let bytes, let capacity): "socket path is \(bytes) bytes, at most \(capacity) fit"
            case .containsNUL: "socket path contains a NUL byte"
            }
        }
    }

    /// The most bytes a path may have: `sun_path` less its terminating NUL (107 on Linux).
    public static let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

    public let path: String
    private let address: sockaddr_un
    private let length: socklen_t

    /// A path in the file system, or with `abstract` and a leading `@` a name in the abstract namespace
    /// (systemd's `$NOTIFY_SOCKET` convention: the `@` becomes the NUL that marks it).
    public init(path: String, abstract: Bool = false) throws(Problem) {
        var bytes = Array(path.utf8)
        guard !bytes.isEmpty else { throw .empty }
        guard bytes.count <= Self.capacity else { throw .tooLong(bytes: bytes.count, capacity: Self.capacity) }
        let isAbstract = abstract && bytes[0] == UInt8(ascii: "@")
        if isAbstract { bytes[0] = 0 }
        guard !bytes.dropFirst(isAbstract ? 1 : 0).contains(0) else { throw .containsNUL }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }   // the rest stays NUL
        self.path = path
        self.address = address
        // An abstract name is exactly its bytes; a path is the whole structure, NUL-terminated.
        self.length = isAbstract ? socklen_t(MemoryLayout<sa_family_t>.size + bytes.count) : socklen_t(MemoryLayout<sockaddr_un>.size)
    }

    /// `body` with the address as the socket calls take it.
    public func withSockaddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }

    /// connect(2) of `fd` to this address: its result (-1 sets errno), for `SystemCall.retrying`.
    public func connect(_ fd: Int32) -> Int32 { withSockaddr { Glibc.connect(fd, $0, $1) } }

    /// bind(2) of `fd` to this address: its result (-1 sets errno).
    public func bind(_ fd: Int32) -> Int32 { withSockaddr { Glibc.bind(fd, $0, $1) } }

    /// sendto(2) of `bytes` on `fd` to this address: its result (-1 sets errno).
    public func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, flags: Int32) -> Int {
        withSockaddr { sendto(fd, bytes.baseAddress, bytes.count, flags, $0, $1) }
    }
}
