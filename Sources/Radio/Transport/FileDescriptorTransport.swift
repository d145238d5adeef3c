import Synchronization
import SystemCall

#if canImport(Glibc)
import Glibc
#endif

/// A transport over a connected file descriptor carrying H4 packets both ways: a UNIX stream
/// socket to btvirt, or a kernel HCI socket (one packet per read, indicator included, which the
/// same deframer handles).
///
/// Reads happen on a `EventLoop`'s thread, never on Swift's shared pool: the loop polls the
/// descriptor (the radio's loop, so a Command Complete is read, matched and answered by the next
/// command on one thread). `close()` wakes the loop, which then closes the descriptor (only the
/// loop does, so a descriptor number is never reused under a concurrent `send`) and ends `incoming`.
/// One wake reads everything waiting (until EAGAIN, at most `maxReadsPerWake` reads: on an HCI
/// socket, one advert each), and on the radio's loop that wake's packets go to the controller in one
/// call (`deliverPackets`) instead of one queued entry each.
///
/// `send` never blocks: it writes with MSG_DONTWAIT what the socket takes and leaves the rest to
/// the loop, which writes it when poll(2) says the socket has room. A controller that stops
/// reading fails `send` once `maxUnsentBytes` are waiting, instead of stalling the caller.
final class FileDescriptorTransport: HCITransport, LoopWatch {
    let device: String
    let ownsController: Bool
    let incoming: EventQueue<TransportEvent>
    private let continuation: EventQueue<TransportEvent>.Sink
    private let state: Mutex<State>
    private let reader = Mutex(Reader())
    private let recorder: StatisticsRecorder
    private let loop: EventLoop

    private struct State {
        var fd: Int32?
        var closeRequested = false
        /// Bytes the socket had no room for yet, oldest first; the loop writes them.
        var unsent: [UInt8] = []
        /// Why writing `unsent` failed: every later `send` fails with it.
        var sendFailure: RadioError?
        /// Takes each read's packets instead of `incoming` (`deliverPackets`); only the loop calls it.
        /// A field, not a `Mutex<Closure?>` of its own: an optional closure in a generic container is
        /// reabstracted on every `inout` access, and each read wrapped it in two more thunks (perf
        /// showed a chain of them growing with every read).
        var receiver: (@Sendable ([H4Packet]) -> Void)?
    }

    /// Only the loop thread reads; the lock is never contended.
    private struct Reader {
        var deframer = H4Deframer()
        var buffer = [UInt8](repeating: 0, count: 16384)
        /// The socket's drop counter when last read, and when that was (read at most once a second).
        var socketDrops: UInt32 = 0
        var socketDropsChecked = ContinuousClock.now
    }

    /// Packets waiting for the consumer; beyond this the oldest are dropped (and counted), so a
    /// stalled consumer cannot grow memory.
    static let bufferedPackets = 4096
    /// Reads in one wake at most: an HCI socket gives one packet a read, so this is 64 adverts a
    /// wake. Bounded so that a descriptor that never empties (a flood) still lets the loop run its
    /// other watches, its timers and the work it was handed between two batches.
    static let maxReadsPerWake = 64
    /// Bytes waiting for a controller that does not read: a few hundred commands' worth.
    static let maxUnsentBytes = 64 * 1024

    init(
        fd: Int32, device: String, ownsController: Bool = true, recorder: StatisticsRecorder = StatisticsRecorder(),
        loop: EventLoop
    ) throws(RadioError) {
        self.device = device
        self.ownsController = ownsController
        self.recorder = recorder
        self.loop = loop
        (incoming, continuation) = EventQueue.make(limit: Self.bufferedPackets)
        state = Mutex(State(fd: fd))
        do throws(Errno) {
            // `ready` reads until EAGAIN: on a blocking descriptor its last read would block the loop.
            try SystemCall.retrying { Descriptor.setNonBlocking(fd) }
        } catch {
            let failure = RadioError.system("fcntl(O_NONBLOCK)", device: device, errno: error)
            finish(cause: failure)
            throw failure
        }
        loop.watch(self)
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
            loop.wake()   // it adds POLLOUT to its poll
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
        case .failure(let error): throw RadioError.system("send", device: device, errno: error)
        }
    }

    /// The loop, POLLOUT: writes what it can of `unsent`; throws the write's failure.
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

    func deliverPackets(on loop: EventLoop, to receiver: @escaping @Sendable ([H4Packet]) -> Void) -> Bool {
        guard loop === self.loop else { return false }
        state.withLock { $0.receiver = receiver }
        return true
    }

    func close() {
        let wake = state.withLock { state in
            guard state.fd != nil, !state.closeRequested else { return false }
            state.closeRequested = true
            return true
        }
        if wake { loop.wake() }
    }

    // MARK: LoopWatch (on the loop's thread)

    func interest() -> (fd: Int32, events: Int16)? {
        let (fd, closing, writing) = state.withLock { ($0.fd, $0.closeRequested, !$0.unsent.isEmpty) }
        guard let fd else { return nil }
        if closing {
            finish(cause: nil)
            return nil
        }
        return (fd, Int16(POLLIN) | (writing ? Int16(POLLOUT) : 0))
    }

    func pollFailed(_ error: Errno) {
        finish(cause: RadioError.system("poll", device: device, errno: error))
    }

    func ready(_ revents: Int16) {
        let (fd, receiver) = state.withLock { ($0.fd, $0.receiver) }
        guard let fd else { return }
        if revents & Int16(POLLOUT) != 0 {
            do throws(RadioError) { try flushUnsent(fd) } catch { return finish(cause: error) }
        }
        if revents & ~Int16(POLLOUT) == 0 { return }
        let (packets, failure) = reader.withLock { readWaiting(fd, &$0) }
        if !packets.isEmpty {
            if let receiver {
                receiver(packets)
            } else {
                for packet in packets {
                    if case .dropped = continuation.yield(.packet(packet)) { recorder.record { $0.overflowed += 1 } }
                }
            }
        }
        // The packets read before a failure (or the peer's end) are delivered first.
        if let failure { finish(cause: failure) }
    }

    /// Reads until the socket is empty (EAGAIN) or `maxReadsPerWake` reads, and deframes it all:
    /// one wake's packets, and the failure that ended the reading, if one did.
    private func readWaiting(_ fd: Int32, _ reader: inout Reader) -> ([H4Packet], RadioError?) {
        var packets: [H4Packet] = []
        var failure: RadioError?
        let (bytesBefore, packetsBefore) = (reader.deframer.droppedBytes, reader.deframer.droppedPackets)
        reading: for _ in 0..<Self.maxReadsPerWake {
            let outcome: SystemCall.IOOutcome
            do throws(Errno) {
                outcome = try SystemCall.nonBlocking {
                    reader.buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
                }
            } catch {
                failure = RadioError.system("read", device: device, errno: error)
                break
            }
            switch outcome {
            case .wouldBlock:
                break reading
            case .done(0):
                failure = RadioError(
                    kind: .unavailable, device: device, operation: "read", message: "the controller closed the connection")
                break reading
            case .done(let count):
                reader.deframer.feed(reader.buffer[0..<count]) { packets.append($0) }
            }
        }
        // Counters first, then the packets: whoever sees a packet also sees the drops before it.
        let (bytesAfter, packetsAfter) = (reader.deframer.droppedBytes, reader.deframer.droppedPackets)
        // Drops happen while the reader is busy, so reading the counter during reads finds them.
        if ContinuousClock.now - reader.socketDropsChecked >= .seconds(1) { recordSocketDrops(fd, &reader) }
        if bytesAfter != bytesBefore || packetsAfter != packetsBefore {
            recorder.record {
                $0.droppedStreamBytes += bytesAfter - bytesBefore
                $0.droppedStreamPackets += packetsAfter - packetsBefore
            }
        }
        return (packets, failure)
    }

    /// Adds the packets the kernel dropped for want of room in this socket's receive queue since
    /// the last look (SO_MEMINFO, SK_MEMINFO_DROPS: sk_drops, which an HCI socket counts).
    private func recordSocketDrops(_ fd: Int32, _ reader: inout Reader) {
        reader.socketDropsChecked = .now
        var info = [UInt32](repeating: 0, count: 9)   // SK_MEMINFO_VARS
        var length = socklen_t(info.count * MemoryLayout<UInt32>.size)
        let soMeminfo: Int32 = 55   // <asm-generic/socket.h>; Glibc's module does not export it
        let result = try? SystemCall.retrying {
            info.withUnsafeMutableBytes { getsockopt(fd, SOL_SOCKET, soMeminfo, $0.baseAddress, &length) }
        }
        guard result == 0, length >= socklen_t(9 * MemoryLayout<UInt32>.size) else { return }
        let drops = info[8]   // SK_MEMINFO_DROPS
        guard drops != reader.socketDrops else { return }
        let added = Int(drops &- reader.socketDrops)
        reader.socketDrops = drops
        recorder.record { $0.socketDrops += added }
    }

    /// Closes everything exactly once and ends `incoming` with the cause (none if we asked).
    private func finish(cause: RadioError?) {
        if let fd = state.withLock({ $0.fd }) { reader.withLock { recordSocketDrops(fd, &$0) } }
        let requested = state.withLock { state in
            if let fd = state.fd {
                Glibc.close(fd)
                state.fd = nil
            }
            return state.closeRequested
        }
        state.withLock { $0.receiver = nil }
        continuation.yield(.closed(requested ? nil : cause))
        continuation.finish()
    }
}
