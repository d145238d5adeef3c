import Synchronization
import SystemCall

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
///
/// `send` never blocks (it is called from the HCIController actor, on Swift's shared pool): it
/// writes with MSG_DONTWAIT what the socket takes and leaves the rest to the reader thread, which
/// writes it when poll(2) says the socket has room. A controller that stops reading fails `send`
/// once `maxUnsentBytes` are waiting, instead of stalling the caller.
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
        /// Bytes the socket had no room for yet, oldest first; the reader thread writes them.
        var unsent: [UInt8] = []
        /// Why writing `unsent` failed: every later `send` fails with it.
        var sendFailure: RadioError?
    }

    /// Packets waiting for the consumer; beyond this the oldest are dropped (and counted), so a
    /// stalled consumer cannot grow memory.
    static let bufferedPackets = 4096
    /// Bytes waiting for a controller that does not read: a few hundred commands' worth.
    static let maxUnsentBytes = 64 * 1024

    init(
        fd: Int32, device: String, ownsController: Bool = true, recorder: StatisticsRecorder = StatisticsRecorder()
    ) throws(RadioError) {
        var pipeFDs: [Int32] = [-1, -1]
        do throws(RadioError) {
            try syscall("pipe", device: device) { pipe(&pipeFDs) }
            for end in pipeFDs {
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
                _ = fcntl(end, F_SETFL, O_NONBLOCK)   // the reader drains the pipe without blocking
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
            if let failure = state.sendFailure { throw failure }
            if !state.unsent.isEmpty {
                // Behind earlier bytes: queue, keeping the order; the reader is already waiting for room.
                guard state.unsent.count + packet.count <= Self.maxUnsentBytes else {
                    throw RadioError(kind: .unavailable, device: device, operation: "send",
                                     message: "the controller has not read the last \(state.unsent.count) bytes sent to it")
                }
                state.unsent += packet
                return
            }
            let sent = try writeWithoutWaiting(fd, packet[...])
            guard sent < packet.count else { return }
            state.unsent = Array(packet[sent...])
            var byte: UInt8 = 1
            _ = Glibc.write(state.wakeWrite, &byte, 1)   // the reader adds POLLOUT to its poll
        }
    }

    /// Writes what the socket takes now; returns how much that was (EAGAIN: less than all).
    private func writeWithoutWaiting(_ fd: Int32, _ bytes: ArraySlice<UInt8>) throws(RadioError) -> Int {
        let outcome = bytes.withUnsafeBytes { raw in
            Result { () throws(Errno) in
                try SystemCall.writeAll(raw) { Glibc.send(fd, $0, $1, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
            }
        }
        switch outcome {
        case .success(let written): return written
        case .failure(let error): throw RadioError.system("send", device: device, errno: error.rawValue)
        }
    }

    /// Reader thread, POLLOUT: writes what it can of `unsent`; throws the write's failure.
    private func flushUnsent(_ fd: Int32) throws(RadioError) {
        try state.withLock { state throws(RadioError) in
            guard !state.unsent.isEmpty else { return }
            do throws(RadioError) {
                let sent = try writeWithoutWaiting(fd, state.unsent[...])
                state.unsent.removeFirst(sent)
            } catch {
                state.sendFailure = error
                throw error
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
            let writing = state.withLock { !$0.unsent.isEmpty }
            var fds = [pollfd(fd: fd, events: Int16(POLLIN) | (writing ? Int16(POLLOUT) : 0), revents: 0),
                       pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            do throws(Errno) {
                try SystemCall.retrying { poll(&fds, 2, -1) }
            } catch {
                cause = RadioError.system("poll", device: device, errno: error.rawValue)
                break
            }
            if fds[1].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while Glibc.read(wake, &drain, drain.count) > 0 {}
                if state.withLock({ $0.closeRequested }) { break }
            }
            if fds[0].revents & Int16(POLLOUT) != 0 {
                do throws(RadioError) { try flushUnsent(fd) } catch { cause = error; break }
            }
            if fds[0].revents & ~Int16(POLLOUT) == 0 { continue }
            let outcome: SystemCall.IOOutcome
            do throws(Errno) {
                outcome = try SystemCall.nonBlocking { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) } }
            } catch {
                cause = RadioError.system("read", device: device, errno: error.rawValue)
                break
            }
            guard case .done(let count) = outcome else { continue }
            if count == 0 {
                cause = RadioError(
                    kind: .unavailable, device: device, operation: "read", message: "the controller closed the connection")
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
