import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A transport over a connected file descriptor carrying H4 packets both ways: a UNIX stream
/// socket to btvirt, or a kernel HCI socket (one packet per read, indicator included, which the
/// same deframer handles).
///
/// Reads run on a dedicated thread blocked in `poll(2)` on the descriptor and a wake-up pipe;
/// `close()` writes to the pipe, so the reader returns at once, closes the descriptor (it is the
/// only one that does, so a descriptor number is never reused under a concurrent `send`) and ends
/// `incoming`.
final class FileDescriptorTransport: HCITransport {
    let device: String
    let ownsController: Bool
    let incoming: AsyncStream<TransportEvent>
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let state: Mutex<State>
    private let recorder: StatisticsRecorder

    private struct State {
        var fd: Int32?
        var wakeRead: Int32
        var wakeWrite: Int32
        var closeRequested = false
    }

    /// Packets waiting for the consumer; beyond this the oldest are dropped (and counted), so a
    /// stalled consumer cannot grow memory.
    static let bufferedPackets = 4096
    static let sendTimeout = timeval(tv_sec: 2, tv_usec: 0)

    init(
        fd: Int32, device: String, ownsController: Bool = true, recorder: StatisticsRecorder = StatisticsRecorder()
    ) throws(RadioError) {
        var pipeFDs: [Int32] = [-1, -1]
        do throws(RadioError) {
            try syscall("pipe", device: device) { pipe(&pipeFDs) }
            for end in pipeFDs { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
            _ = fcntl(pipeFDs[1], F_SETFL, O_NONBLOCK)
            // A controller that stops reading must not block `send` (and with it `close`) forever.
            var timeout = Self.sendTimeout
            try syscall("setsockopt(SO_SNDTIMEO)", device: device) {
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            }
        } catch {
            Glibc.close(fd)
            if pipeFDs[0] >= 0 { Glibc.close(pipeFDs[0]); Glibc.close(pipeFDs[1]) }
            throw error
        }
        self.device = device
        self.ownsController = ownsController
        self.recorder = recorder
        (incoming, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferedPackets))
        let wakeRead = pipeFDs[0]
        state = Mutex(State(fd: fd, wakeRead: wakeRead, wakeWrite: pipeFDs[1]))
        do throws(RadioError) {
            try DedicatedThread.start(device: device) { [self] in readLoop(fd: fd, wake: wakeRead) }
        } catch {
            finish(cause: error)
            throw error
        }
    }

    func send(_ packet: [UInt8]) throws(RadioError) {
        try state.withLock { state throws(RadioError) in
            guard let fd = state.fd, !state.closeRequested else {
                throw RadioError(kind: .unavailable, device: device, operation: "send", message: "transport is closed")
            }
            var offset = 0
            while offset < packet.count {
                let sent = try syscall("send", device: device) {
                    packet.withUnsafeBytes { buffer in
                        Glibc.send(fd, buffer.baseAddress! + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                    }
                }
                offset += sent
            }
        }
    }

    func close() {
        state.withLock { state in
            guard state.fd != nil, !state.closeRequested else { return }
            state.closeRequested = true
            var byte: UInt8 = 1
            _ = Glibc.write(state.wakeWrite, &byte, 1)
        }
    }

    private func readLoop(fd: Int32, wake: Int32) {
        var deframer = H4Deframer()
        var buffer = [UInt8](repeating: 0, count: 16384)
        var cause: RadioError?
        loop: while true {
            var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                cause = RadioError.system("poll", device: device, errno: errno)
                break
            }
            if fds[1].revents != 0 { break }
            if fds[0].revents == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if count == 0 {
                cause = RadioError(
                    kind: .unavailable, device: device, operation: "read", message: "the controller closed the connection")
                break
            }
            if count < 0 {
                let code = errno
                if code == EINTR || code == EAGAIN { continue }
                cause = RadioError.system("read", device: device, errno: code)
                break
            }
            // Counters first, then the packets: whoever sees a packet also sees the drops before it.
            var packets: [H4Packet] = []
            let (bytesBefore, packetsBefore) = (deframer.droppedBytes, deframer.droppedPackets)
            deframer.feed(buffer[0..<count]) { packets.append($0) }
            if deframer.droppedBytes != bytesBefore || deframer.droppedPackets != packetsBefore {
                recorder.record {
                    $0.droppedStreamBytes += deframer.droppedBytes - bytesBefore
                    $0.droppedStreamPackets += deframer.droppedPackets - packetsBefore
                }
            }
            for packet in packets {
                if case .dropped = continuation.yield(.packet(packet)) { recorder.record { $0.overflowed += 1 } }
            }
        }
        finish(cause: cause)
    }

    /// Closes everything exactly once and ends `incoming` with the cause (none if we asked).
    private func finish(cause: RadioError?) {
        let requested = state.withLock { state in
            if let fd = state.fd {
                Glibc.close(fd)
                Glibc.close(state.wakeRead)
                Glibc.close(state.wakeWrite)
                state.fd = nil
            }
            return state.closeRequested
        }
        continuation.yield(.closed(requested ? nil : cause))
        continuation.finish()
    }
}
