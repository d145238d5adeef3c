import SystemCall

/// Drives one controller over a transport: sends commands under the controller's flow control
/// (Num_HCI_Command_Packets), matches each Command Complete / Command Status to its command,
/// times commands out, turns error statuses into `RadioError`s naming the command, hands the
/// advertising reports of each read to `reports` in one call (when given), and passes every other
/// event on through `events`.
///
/// `run()` pumps the transport and must be running for `send` to get answers; it ends (throwing
/// the cause) when the transport does, failing every command still waiting.
///
/// Its executor is the radio's `EventLoop` (the thread that also reads the transport and fires the
/// command timer), so an answer is matched, and a sequence's next command written, where it is read.
actor HCIController {
    nonisolated let loop: EventLoop
    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.asUnownedSerialExecutor() }
    nonisolated let device: String
    /// False on a shared kernel socket: see `HCITransport.ownsController`.
    nonisolated let ownsController: Bool
    nonisolated let events: EventQueue<HCIEvent>
    private let eventSink: EventQueue<HCIEvent>.Sink
    private let transport: any HCITransport
    private let commandTimeout: Duration
    private let recorder: StatisticsRecorder
    /// Takes the advertising reports of one read, on the loop; nil: they go to `events` like the rest.
    private let reports: (@Sendable ([AdvertisingReports]) -> Void)?

    /// Commands the controller accepts right now. It starts at one (Core Vol 4 Part E 4.4) and is
    /// replaced by the count in every Command Complete / Command Status.
    private(set) var credits = 1
    private var creditWaiters: [Waiter<Void>] = []
    /// Commands waiting for the controller to accept more (for tests of flow control).
    var commandsWaitingForCredit: Int { creditWaiters.count }
    /// Commands written and not answered yet, oldest first; `rest` is what a sequence sends next.
    private var pending: [(opcode: HCIOpcode, waiter: Waiter<ArraySlice<UInt8>>, rest: ArraySlice<HCICommand>)] = []
    private var nextID = 0
    private(set) var finishedCause: RadioError?
    /// One loop timer for every waiter, armed for the earliest deadline while any waits. A task per
    /// command (30 a second while btvirt re-announces) cost a task, a dispatch timer and, once
    /// cancelled, a wake-up at its deadline anyway: most of an idle gateway's wake-ups.
    private var timeoutTimer: EventLoop.TimerID?
    private var armedDeadline: ContinuousClock.Instant?
    /// When the controller last sent anything (an event of any kind).
    private var lastHeard = ContinuousClock.now

    /// Whether the controller sent anything in the last `interval` (the radio's liveness probe
    /// needs no answer from a controller that is reporting).
    func heard(within interval: Duration) -> Bool { ContinuousClock.now - lastHeard < interval }

    private struct Waiter<Value: Sendable> {
        var id: Int
        var name: String
        var continuation: CheckedContinuation<Value, any Error>
        var deadline: ContinuousClock.Instant
        var started = ContinuousClock.now
    }

    /// How long a written command may wait in all while the controller keeps talking (reports,
    /// other answers): `commandTimeout` counts silence, this bounds a controller that reports but
    /// never answers. Generous, because the answer may be queued in the socket behind a backlog of
    /// reports: in the Theengs bench's loaded guest, answers sat behind 7–10 s of reports at 360
    /// adverts/s, and a 10 s bound took the link down, and the socket's whole backlog with it.
    private var longestWait: Duration { commandTimeout * 15 }

    /// Events beyond this wait for the consumer are dropped oldest first (and counted).
    static let bufferedEvents = 4096

    init(
        transport: any HCITransport, commandTimeout: Duration, recorder: StatisticsRecorder = StatisticsRecorder(),
        loop: EventLoop, reports: (@Sendable ([AdvertisingReports]) -> Void)? = nil
    ) {
        self.loop = loop
        self.transport = transport
        self.device = transport.device
        self.ownsController = transport.ownsController
        self.commandTimeout = commandTimeout
        self.recorder = recorder
        self.reports = reports
        (events, eventSink) = EventQueue.make(limit: Self.bufferedEvents)
    }

    /// Pumps packets until the transport ends; throws its cause (returns if it was closed by us or
    /// the task was cancelled).
    func run() async throws {
        // The stream's `next()` is nonisolated: without the loop as the task's executor it would
        // resume on Swift's pool and hop back, a pool wake per packet (and answers late behind
        // the command timer whenever the pool is busy).
        try await withTaskExecutorPreference(loop) { try await pump() }
    }

    private func pump() async throws {
        // A read's packets are handled where they are read, in one call: no task resumption per packet.
        // Packets queued before this (none are handled yet) still come through `incoming` first.
        _ = transport.deliverPackets(on: loop) { [weak self] packets in
            self?.assumeIsolated { $0.receive(packets) }
        }
        for await event in transport.incoming {
            switch event {
            case .packet(let packet):
                receive(CollectionOfOne(packet))
            case .closed(let cause):
                finish(cause ?? closedError)
                if let cause { throw cause }
                return
            }
        }
        finish(closedError)
    }

    /// Sends `command` and returns its return parameters (status byte first), or throws: the
    /// controller's status as `.controller`, no answer within the timeout, the transport ending.
    @discardableResult
    func send(_ command: HCICommand) async throws -> ArraySlice<UInt8> {
        try await send(sequence: [command])
    }

    /// Sends the commands in order, each once the one before has succeeded, and returns the last
    /// one's return parameters (or throws the first failure; the rest are not sent). The next
    /// command is written where the previous one's Command Complete is handled, so the caller is
    /// resumed once per sequence, not once per command: btvirt's rotation step (disable → data →
    /// enable, 30 commands a second) cost an idle gateway a task resumption per command.
    @discardableResult
    func send(sequence commands: [HCICommand]) async throws -> ArraySlice<UInt8> {
        guard let first = commands.first else { return [] }
        if let finishedCause { throw finishedCause }
        try await acquireCredit(for: first)
        return try await withCheckedThrowingContinuation { continuation in
            write(first, then: commands.dropFirst(), continuation)
        }
    }

    /// Writes `command` with a credit already taken; its answer resumes `continuation`, or sends `rest`.
    private func write(
        _ command: HCICommand, then rest: ArraySlice<HCICommand>, _ continuation: CheckedContinuation<ArraySlice<UInt8>, any Error>
    ) {
        let id = nextID
        nextID += 1
        do {
            try transport.send(command.packet)
            recorder.commandSent()
        } catch {
            credits += 1
            continuation.resume(throwing: error)
            return
        }
        let deadline = armTimeout()
        pending.append((command.opcode, Waiter(id: id, name: command.name, continuation: continuation, deadline: deadline), rest))
    }

    /// The rest of a sequence that found no credit when its previous command was answered.
    private func continueSequence(
        _ rest: ArraySlice<HCICommand>, _ continuation: CheckedContinuation<ArraySlice<UInt8>, any Error>
    ) async {
        guard let next = rest.first else { return }
        do {
            if let finishedCause { throw finishedCause }
            try await acquireCredit(for: next)
            write(next, then: rest.dropFirst(), continuation)
        } catch {
            continuation.resume(throwing: error)
        }
    }

    /// Sends and checks the return parameters are long enough to decode.
    func send<T>(_ command: HCICommand, decode: (ArraySlice<UInt8>) -> T?) async throws -> T {
        let result = try await send(command)
        guard let value = decode(result) else {
            throw RadioError(
                kind: .protocolViolation, device: device, operation: command.name,
                message: "return parameters too short (\(result.count) bytes)")
        }
        return value
    }

    private var closedError: RadioError {
        RadioError(kind: .unavailable, device: device, operation: "read", message: "the transport was closed")
    }

    private func acquireCredit(for command: HCICommand) async throws {
        if credits > 0 && creditWaiters.isEmpty {
            credits -= 1
            return
        }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let id = nextID
            nextID += 1
            let deadline = armTimeout()
            creditWaiters.append(Waiter(id: id, name: command.name, continuation: continuation, deadline: deadline))
        }
    }

    /// The deadline of a waiter starting now; the timer is armed unless it already fires earlier
    /// (every deadline is now + the same timeout, so an armed timer is never late for a new one).
    private func armTimeout() -> ContinuousClock.Instant {
        let deadline = ContinuousClock.now + commandTimeout
        arm(deadline)
        return deadline
    }

    private func arm(_ deadline: ContinuousClock.Instant) {
        if timeoutTimer != nil, let armedDeadline, armedDeadline <= deadline { return }
        if let timeoutTimer { loop.cancel(timeoutTimer) }
        armedDeadline = deadline
        // Fires on the loop, which is this actor's executor: no task, no hop.
        timeoutTimer = loop.schedule(at: deadline) { [weak self] in
            self?.assumeIsolated { $0.expireDue() }
        }
    }

    /// The timer fired: fails every waiter past its deadline, re-arms for the earliest left. A
    /// timer armed for commands answered since finds nothing due (one wake-up per timeout).
    private func expireDue() {
        timeoutTimer = nil
        armedDeadline = nil
        let now = ContinuousClock.now
        let heard = heard(within: commandTimeout)
        // A command past its deadline while the controller was heard within the last timeout is
        // late, not lost: a starved box (or a controller answering behind a burst of reports) gets
        // more time, up to `longestWait`; the answer is matched whenever it comes.
        if heard {
            for index in pending.indices where pending[index].waiter.deadline <= now {
                let limit = pending[index].waiter.started + longestWait
                if now < limit { pending[index].waiter.deadline = min(lastHeard + commandTimeout, limit) }
            }
        }
        while let index = pending.firstIndex(where: { $0.waiter.deadline <= now }) {
            let waiter = pending.remove(at: index).waiter
            // The controller may never return this command's credit; lend one so later commands can
            // at least try (the radio treats a timeout as a dead controller anyway).
            credits = max(credits, 1)
            grantCredits()
            waiter.continuation.resume(throwing: RadioError(
                kind: .controller, device: device, operation: waiter.name,
                message: heard ? "no answer within \(longestWait), while the controller kept sending events"
                               : "no answer within \(commandTimeout)"))
        }
        // Then the credit waiters a lent credit did not let go (an expired command lends first, as
        // its deadline came first).
        while let index = creditWaiters.firstIndex(where: { $0.deadline <= now }) {
            let waiter = creditWaiters.remove(at: index)
            waiter.continuation.resume(throwing: RadioError(
                kind: .controller, device: device, operation: waiter.name,
                message: "the controller accepted no command within \(commandTimeout)"))
        }
        let next = (creditWaiters.map(\.deadline) + pending.map(\.waiter.deadline)).min()
        if let next { arm(next) }
    }

    /// One read's packets: commands answered as each comes, the advertising reports handed on together.
    private func receive(_ packets: some Collection<H4Packet>) {
        var batch: [AdvertisingReports] = []
        for packet in packets where packet.type == .event { handle(packet.bytes, reports: &batch) }
        if !batch.isEmpty { reports?(batch) }
    }

    private func handle(_ packet: [UInt8], reports batch: inout [AdvertisingReports]) {
        lastHeard = .now
        guard let event = HCIEvent.parse(packet) else {
            recorder.record { $0.malformedEvents += 1 }
            return
        }
        switch event {
        case .commandComplete(let opcode, let count, let parameters):
            credits = Int(count)
            complete(opcode) { name in
                guard let status = parameters.first else {
                    return .failure(RadioError(
                        kind: .protocolViolation, device: device, operation: name, message: "Command Complete without status"))
                }
                return status == 0 ? .success(parameters) : .failure(statusError(name, status))
            }
            grantCredits()
        case .commandStatus(let opcode, let count, let status):
            credits = Int(count)
            complete(opcode) { name in
                status == .success ? .success([]) : .failure(statusError(name, status.rawValue))
            }
            grantCredits()
        case .advertisingReports(let reports) where self.reports != nil:
            batch.append(reports)
        default:
            if case .dropped = eventSink.yield(event) { recorder.record { $0.overflowed += 1 } }
        }
    }

    private func statusError(_ name: String, _ status: UInt8) -> RadioError {
        let code = HCIStatus(rawValue: status)
        return RadioError(kind: .controller, device: device, operation: name, status: code, message: "controller answered \(code)")
    }

    /// Resolves the oldest command with this opcode; opcode 0 (credits only) and answers nobody
    /// waits for any more (timed out) are ignored.
    /// A sequence's next command goes out at once when a credit is free and nobody queues for one.
    private func complete(_ opcode: HCIOpcode, _ result: (String) -> Result<ArraySlice<UInt8>, RadioError>) {
        guard opcode.rawValue != 0, let index = pending.firstIndex(where: { $0.opcode == opcode }) else { return }
        let (_, waiter, rest) = pending.remove(at: index)
        let outcome = result(waiter.name)
        guard case .success = outcome, let next = rest.first else {
            waiter.continuation.resume(with: outcome.mapError { $0 as any Error })
            return
        }
        if credits > 0 && creditWaiters.isEmpty {
            credits -= 1
            write(next, then: rest.dropFirst(), waiter.continuation)
        } else {
            Task { await self.continueSequence(rest, waiter.continuation) }
        }
    }

    private func grantCredits() {
        while credits > 0 && !creditWaiters.isEmpty {
            credits -= 1
            let waiter = creditWaiters.removeFirst()
            waiter.continuation.resume()
        }
    }

    /// Fails everything still waiting with `cause`; later sends fail at once.
    private func finish(_ cause: RadioError) {
        guard finishedCause == nil else { return }
        finishedCause = cause
        if let timeoutTimer { loop.cancel(timeoutTimer) }
        timeoutTimer = nil
        for waiter in creditWaiters { waiter.continuation.resume(throwing: cause) }
        for (_, waiter, _) in pending { waiter.continuation.resume(throwing: cause) }
        creditWaiters = []
        pending = []
        eventSink.finish()
    }
}
