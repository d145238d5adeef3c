import Glibc
import SystemCall

/// Small blocking helpers on raw UNIX stream sockets for the fan-out benchmark's clients and MQTT
/// publisher (the same code talks to our broker and to Mosquitto).
enum BenchSocket {
    static func connect(path: String) throws -> Int32 {
        let address: UnixAddress
        do throws(UnixAddress.Problem) { address = try UnixAddress(path: path) } catch { throw BenchError("\(path): \(error)") }
        do throws(FailedCall) { return try address.connectStream() } catch { throw BenchError("\(error.call) \(path): \(error.errno)") }
    }

    /// Every socket here is blocking while it is written (the clients turn non-blocking only to
    /// receive), so `SystemCall.writeAll` returns only when all is sent.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        do {
            _ = try bytes.withUnsafeBytes { raw in
                Result { () throws(Errno) in try SystemCall.writeAll(raw) { send(fd, $0, $1, Int32(MSG_NOSIGNAL)) } }
            }.get()
        } catch {
            throw BenchError("send: \(error)")
        }
    }

    /// Reads until `done` says the bytes so far hold what we wait for (blocking, with a deadline).
    static func readUntil(_ fd: Int32, seconds: Double, _ done: ([UInt8]) -> Bool) throws -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = SystemCall.monotonicNanoseconds() + UInt64(seconds * 1e9)
        while !done(received) {
            let now = SystemCall.monotonicNanoseconds()
            guard now < deadline else { throw BenchError("no answer within \(seconds) s") }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&p, 1, Int32((deadline - now) / 1_000_000) + 1)
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { throw BenchError("connection closed") }
            if n > 0 { received += buffer[0..<n] }
        }
        return received
    }

    static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }
}
