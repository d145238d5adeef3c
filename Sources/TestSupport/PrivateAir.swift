import Foundation

#if canImport(Glibc)
import Glibc
import SystemCall
#endif

/// A btvirt of our own, so a test can make its controller vanish without touching the shared
/// `/tmp/bt-server-le` everyone else uses.
///
/// btvirt always serves `/tmp/bt-server-*`, so it runs in a private mount namespace with a fresh
/// tmpfs on /tmp, and socat relays a socket in a folder outside /tmp to it. All of it (unshare's
/// shell, btvirt, socat and socat's per-connection children) is one process group that we
/// create, so `stop()` ends exactly these processes, and the namespace with them. (The project's
/// `scripts/private-air` starts btvirt with `setsid`, in a session of its own, so killing that
/// group would leave btvirt orphaned in an unreachable namespace; hence this.)
public final class PrivateAir {
    public let directory: String
    public var socketPath: String { directory + "/air.sock" }
    /// btvirt's output (it starts with a clean one each `start`).
    public var logPath: String { directory + "/btvirt.log" }
    private var pid: pid_t = 0

    /// `label` names the folder under /var/tmp, so a leftover one says which tests made it.
    public init(label: String) throws {
        var template = Array("/var/tmp/nearby-\(label)-air-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in
            Result { () throws(Errno) in try SystemCall.nonNull { mkdtemp(buffer.baseAddress!) } }
        }
        let created: UnsafeMutablePointer<CChar>
        switch made {
        case .success(let pointer): created = pointer
        case .failure(let error): throw PrivateAirError("mkdtemp /var/tmp: \(error)")
        }
        directory = String(cString: created)
    }

    /// Starts btvirt and the relay. The relay socket appears once btvirt accepts; radios pointed at
    /// it simply retry until then, as they would for a late controller.
    public func start() throws {
        let shim = try Self.shimPath(buildingInto: directory)
        let script = """
            set -e
            mount -t tmpfs -o mode=1777 nearby-air /tmp
            ( trap '' PIPE; exec env LD_PRELOAD="$1" btvirt -s -l0 ) </dev/null >"$3" 2>&1 &
            for _ in $(seq 1 200); do
                timeout 1 socat -u OPEN:/dev/null UNIX-CONNECT:/tmp/bt-server-le >/dev/null 2>&1 && break
                sleep 0.025
            done
            exec socat UNIX-LISTEN:"$2",fork,unlink-early UNIX-CONNECT:/tmp/bt-server-le
            """
        let arguments = ["unshare", "-m", "--propagation", "private", "bash", "-c", script, "private-air", shim, socketPath, logPath]
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A new process group led by the child: its pid is the group id we kill later.
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let result = posix_spawnp(&pid, "unshare", nil, &attributes, &argv, environ)
        guard result == 0 else { throw PrivateAirError("posix_spawnp unshare: \(Errno(rawValue: result))") }
    }

    /// Kills btvirt, the relay and every relayed connection at once.
    public func stop() {
        guard pid > 0 else { return }
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        pid = 0
        unlink(socketPath)
    }

    deinit {
        stop()
        unlink(directory + "/afalg-shim.so")
        unlink(logPath)
        rmdir(directory)
    }

    /// The AF_ALG shim btvirt needs here, placed in our folder: the checkout itself may live under
    /// /tmp (CI clones do), which btvirt's namespace hides behind its fresh tmpfs. Copied from what
    /// scripts/setup built (in `$NEARBY_REPO`, else the checkout holding this file), else built from
    /// its source.
    static func shimPath(buildingInto folder: String) throws -> String {
        // Sources/TestSupport/PrivateAir.swift → the checkout.
        let top = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        var candidates = ["\(top)/.cache/afalg-shim.so"]
        if let repo = ProcessInfo.processInfo.environment["NEARBY_REPO"] { candidates.insert("\(repo)/.cache/afalg-shim.so", at: 0) }
        let output = folder + "/afalg-shim.so"
        if let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) {
            try? FileManager.default.removeItem(atPath: output)
            try FileManager.default.copyItem(atPath: found, toPath: output)
            return output
        }
        let source = "\(top)/tools/afalg-shim/afalg_shim.c"
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        compiler.arguments = ["cc", "-shared", "-fPIC", "-O2", "-o", output, source, "-ldl"]
        try compiler.run()
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else { throw PrivateAirError("could not build the AF_ALG shim from \(source)") }
        return output
    }
}

public struct PrivateAirError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
