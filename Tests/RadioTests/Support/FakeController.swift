import Glibc
import Synchronization
import SystemCall

@testable import Radio

/// A controller in memory for driver and radio logic: answers commands through `responder`,
/// records what it was sent, and can inject events or vanish.
final class FakeController: HCITransport {
    enum Response: Sendable {
        /// Command Complete with this status, extra return parameters and credit count.
        case complete(status: UInt8 = 0, parameters: [UInt8] = [], credits: UInt8 = 1)
        /// Command Status (what btvirt sends for unknown commands).
        case status(UInt8, credits: UInt8 = 1)
        /// No answer; the test answers later with `answer(_:_:)`, or never.
        case none
    }

    let device: String
    let ownsController: Bool
    let incoming: EventQueue<TransportEvent>
    private let continuation: EventQueue<TransportEvent>.Sink
    /// Every command as it is written, for tests to await in order.
    let sent: AsyncStream<HCICommand>
    private let sentSink: AsyncStream<HCICommand>.Continuation
    private let state: Mutex<State>

    private struct State {
        /// Every command with when it was written, in order.
        var sent: [(command: HCICommand, at: ContinuousClock.Instant)] = []
        /// When `reportFromAThread` injected each report.
        var reportedAt: [ContinuousClock.Instant] = []
        var closed = false
        var responder: @Sendable (HCICommand) -> Response
    }

    init(
        device: String = "fake", ownsController: Bool = true,
        responder: @escaping @Sendable (HCICommand) -> Response = FakeController.btvirtLike
    ) {
        self.device = device
        self.ownsController = ownsController
        (incoming, continuation) = EventQueue.make(limit: .max)
        (sent, sentSink) = AsyncStream.makeStream()
        state = Mutex(State(responder: responder))
    }

    var log: [HCICommand] { state.withLock { $0.sent.map(\.command) } }
    /// Every command with when it was written, in order.
    var timedLog: [(command: HCICommand, at: ContinuousClock.Instant)] { state.withLock { $0.sent } }
    /// When each report of `reportFromAThread` was injected, in order.
    var reportTimes: [ContinuousClock.Instant] { state.withLock { $0.reportedAt } }

    func setResponder(_ responder: @escaping @Sendable (HCICommand) -> Response) {
        state.withLock { $0.responder = responder }
    }

    func send(_ packet: [UInt8]) throws(RadioError) {
        guard packet.count >= 4, packet[0] == 0x01, Int(packet[3]) == packet.count - 4 else {
            throw RadioError(kind: .protocolViolation, device: device, operation: "send", message: "not a command packet")
        }
        let command = HCICommand(opcode: HCIOpcode(rawValue: UInt16(packet[1]) | UInt16(packet[2]) << 8), parameters: Array(packet[4...]))
        let response = try state.withLock { state throws(RadioError) -> Response in
            guard !state.closed else {
                throw RadioError(kind: .unavailable, device: device, operation: "send", message: "transport is closed")
            }
            state.sent.append((command, .now))
            return state.responder(command)
        }
        sentSink.yield(command)
        answer(command.opcode, response)
    }

    func answer(_ opcode: HCIOpcode, _ response: Response) {
        switch response {
        case .complete(let status, let parameters, let credits):
            inject(Self.commandComplete(opcode, status: status, parameters: parameters, credits: credits))
        case .status(let status, let credits):
            inject([0x0F, 4, status, credits, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8)])
        case .none:
            break
        }
    }

    /// An event packet (without the H4 indicator).
    func inject(_ event: [UInt8]) {
        continuation.yield(.packet(H4Packet(type: .event, bytes: event)))
    }

    /// The controller disappears, as when btvirt dies.
    func vanish(_ cause: RadioError) {
        state.withLock { $0.closed = true }
        continuation.yield(.closed(cause))
        continuation.finish()
    }

    func close() {
        let first = state.withLock { state in
            defer { state.closed = true }
            return !state.closed
        }
        if first {
            continuation.yield(.closed(nil))
            continuation.finish()
        }
    }

    static func commandComplete(_ opcode: HCIOpcode, status: UInt8 = 0, parameters: [UInt8] = [], credits: UInt8 = 1) -> [UInt8] {
        [0x0E, UInt8(4 + parameters.count), credits, UInt8(opcode.rawValue & 0xFF), UInt8(opcode.rawValue >> 8), status]
            + parameters
    }

    /// Answers like btvirt's LE controller: version 5.0, LE features without extended advertising,
    /// "Unknown HCI Command" (as Command Status) for the extended commands.
    @Sendable static func btvirtLike(_ command: HCICommand) -> Response {
        switch command.opcode {
        case .readLocalVersion: .complete(parameters: [0x09, 0x00, 0x00, 0x09, 0xF1, 0x05, 0x00, 0x00])
        case .leReadLocalSupportedFeatures: .complete(parameters: [0x0B, 0, 0, 0, 0, 0, 0, 0])
        case .readBDAddress: .complete(parameters: [0x42, 0x00, 0x02, 0x01, 0xAA, 0x00])
        case .leReadMaximumAdvertisingDataLength, .leSetExtendedAdvertisingParameters, .leSetExtendedAdvertisingData,
            .leSetExtendedAdvertisingEnable, .leSetExtendedScanParameters, .leSetExtendedScanEnable,
            .leSetAdvertisingSetRandomAddress, .leReadNumberOfSupportedAdvertisingSets, .leRemoveAdvertisingSet,
            .leClearAdvertisingSets:
            .status(HCIStatus.unknownCommand.rawValue)
        default: .complete()
        }
    }

    /// A 5.x controller with extended advertising and one advertising set.
    @Sendable static func extendedCapable(_ command: HCICommand) -> Response {
        extended(sets: 1)(command)
    }

    /// A 5.x controller with extended advertising and `sets` advertising sets (nil: it does not
    /// know LE Read Number of Supported Advertising Sets).
    static func extended(sets: UInt8?) -> @Sendable (HCICommand) -> Response {
        { command in
            switch command.opcode {
            case .leReadNumberOfSupportedAdvertisingSets:
                sets.map { .complete(parameters: [$0]) } ?? .status(HCIStatus.unknownCommand.rawValue)
            case .leRemoveAdvertisingSet, .leClearAdvertisingSets: .complete()
            // A Broadcom 5.0 controller: not BlueZ's emulator, so it advertises periodically.
            case .readLocalVersion: .complete(parameters: [0x09, 0x00, 0x01, 0x09, 0x0F, 0x00, 0x23, 0x61])
            default: extendedCommands(command)
            }
        }
    }

    @Sendable private static func extendedCommands(_ command: HCICommand) -> Response {
        switch command.opcode {
        case .leReadLocalSupportedFeatures: .complete(parameters: [0x0B, 0x10, 0, 0, 0, 0, 0, 0])  // bit 12
        case .leReadMaximumAdvertisingDataLength: .complete(parameters: [0xF2, 0x00])
        case .leSetExtendedAdvertisingParameters: .complete(parameters: [0x00])  // selected TX power
        case .leSetExtendedAdvertisingData, .leSetExtendedAdvertisingEnable, .leSetExtendedScanParameters,
            .leSetExtendedScanEnable, .leSetAdvertisingSetRandomAddress:
            .complete()
        default: btvirtLike(command)
        }
    }
}

extension FakeController {
    /// One LE Advertising Report event (a legacy report, no data).
    static let emptyReport: [UInt8] = [0x3E, 0x0C, 0x02, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5, 6, 0x00, 0xC5]

    /// Reports every 50 ms for `duration` from a thread of its own, then `then`. A stimulus, not a
    /// synchronisation; not a pool task, whose sleep a pool busy with other suites once left unserved
    /// for over 2 s (the controller then looked silent).
    func reportFromAThread(for duration: Duration, then: @escaping @Sendable () -> Void = {}) throws -> OSThread.Joinable {
        try OSThread.spawn(name: "fake-reports") {
            let start = ContinuousClock.now
            while ContinuousClock.now - start < duration {
                self.state.withLock { $0.reportedAt.append(.now) }
                self.inject(Self.emptyReport)
                usleep(50_000)
            }
            then()
        }
    }
}
