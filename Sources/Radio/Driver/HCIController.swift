import Synchronization

/// Drives one controller over a transport: sends commands under the controller's flow control
/// (Num_HCI_Command_Packets), matches each Command Complete / Command Status to its command,
/// times commands out, turns error statuses into `RadioError`s naming the command, and passes
/// every other event on through `events`.
///
/// `run()` must be running for `send` to get answers; it ends (throwing the cause) when the
/// transport does, failing every command still waiting. Events are handled where the transport
/// reads them (`HCITransport.handleEvents`: the reader thread of a real transport), so a Command
/// Complete resumes its sender, or writes a sequence's next command, without a hop through Swift's
/// cooperative pool: btvirt's rotation (three commands every 100 ms) cost an idle gateway a pool
/// wake per command. The state below is this type's alone, behind one lock.
final class HCIController: Sendable {
    let device: String
    /// False on a shared kernel socket: see `HCITransport.ownsController`.
    let ownsController: Bool
    let events: AsyncStream<HCIEvent>
    private let eventSink: AsyncStream<HCIEvent>.Continuation
    private let transport: any HCITransport
    private let commandTimeout: Duration
    private let recorder: StatisticsRecorder
    private let state = Mutex(State())

    private struct State {
        /// Commands the controller accepts right now. It starts at one (Core Vol 4 Part E 4.4) and
        /// is replaced by the count in every Command Complete / Command Status.
        var credits = 1
        var creditWaiters: [Waiter<Void>] = []
        /// Commands written and not answered yet, oldest first; `rest` is what a sequence sends next.
        var pending: [(opcode: HCIOpcode, waiter: Waiter<ArraySlice<UInt8>>, rest: ArraySlice<HCICommand>)] = []
        var nextID = 0
        var finishedCause: RadioError?
        /// One timer for every waiter, armed for the earliest deadline while any waits. A task per
        /// command (30 a second while btvirt re-announces) cost a task, a dispatch timer and, once
        /// cancelled, a wake-up at its deadline anyway: most of an idle gateway's wake-ups.
        var timeoutTimer: Task<Void, Never>?
        var armedDeadline: ContinuousClock.Instant?
    }

    private struct Waiter<Value: Sendable>: Sendable {
        var id: Int
        var name: String
        var continuation: CheckedContinuation<Value, any Error>
        var deadline: ContinuousClock.Instant
    }

    /// Continuations to resume once the lock is released (resuming runs no caller code, but keeps
    /// the critical section to the bookkeeping).
    private struct Resumptions {
        var results: [(CheckedContinuation<ArraySlice<UInt8>, any Error>, Result<ArraySlice<UInt8>, any Error>)] = []
        var credits: [(CheckedContinuation<Void, any Error>, Result<Void, any Error>)] = []
        /// Sequences whose next command found no free credit: continued on a task.
        var blocked: [(ArraySlice<HCICommand>, CheckedContinuation<ArraySlice<UInt8>, any Error>)] = []

        func run(_ controller: HCIController) {
            for (continuation, result) in results { continuation.resume(with: result) }
            for (continuation, result) in credits { continuation.resume(with: result) }
            for (rest, continuation) in blocked {
                Task { await controller.continueSequence(rest, continuation) }
            }
        }
    }

    /// Events beyond this wait for the consumer are dropped oldest first (and counted).
    static let bufferedEvents = 4096

    init(
        transport: any HCITransport, commandTimeout: Duration, recorder: StatisticsRecorder = StatisticsRecorder()
    ) {
        self.transport = transport
        self.device = transport.device
        self.ownsController = transport.ownsController
        self.commandTimeout = commandTimeout
        self.recorder = recorder
        (events, eventSink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(Self.bufferedEvents))
    }

    /// Commands the controller accepts right now (for tests of flow control).
    var credits: Int { state.withLock { $0.credits } }
    /// Commands waiting for the controller to accept more (for tests of flow control).
    var commandsWaitingForCredit: Int { state.withLock { $0.creditWaiters.count } }
    var finishedCause: RadioError? { state.withLock { $0.finishedCause } }

    /// Takes the transport's packets until it ends; throws its cause (returns if it was closed by
    /// us or the task was cancelled). Event packets go to `handle` where they are read; what a
    /// transport does not hand over that way arrives here.
    func run() async throws {
        transport.handleEvents { [weak self] bytes in self?.handle(bytes) }
        for await event in transport.incoming {
            switch event {
            case .packet(let packet):
                if packet.type == .event { handle(packet.bytes) }
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
    /// resumed once per sequence, not once per command.
    @discardableResult
    func send(sequence commands: [HCICommand]) async throws -> ArraySlice<UInt8> {
        guard let first = commands.first else { return [] }
        try await acquireCredit(for: first)
        return try await withCheckedThrowingContinuation { continuation in
            let failure = state.withLock { write(first, then: commands.dropFirst(), continuation, &$0) }
            if let failure { continuation.resume(throwing: failure) }
        }
    }

    /// Writes `command` with a credit already taken and records it as pending, under the lock: its
    /// answer may be read on another thread the moment it is written. Returns why it was not sent.
    private func write(
        _ command: HCICommand, then rest: ArraySlice<HCICommand>,
        _ continuation: CheckedContinuation<ArraySlice<UInt8>, any Error>, _ state: inout State
    ) -> RadioError? {
        if let cause = state.finishedCause { return cause }
        let id = state.nextID
        state.nextID += 1
        do {
            try transport.send(command.packet)
        } catch {
            state.credits += 1
            return error
        }
        recorder.commandSent()
        let deadline = armTimeout(&state)
        state.pending.append((command.opcode, Waiter(id: id, name: command.name, continuation: continuation, deadline: deadline), rest))
        return nil
    }

    /// The rest of a sequence that found no credit when its previous command was answered.
    fileprivate func continueSequence(
        _ rest: ArraySlice<HCICommand>, _ continuation: CheckedContinuation<ArraySlice<UInt8>, any Error>
    ) async {
        guard let next = rest.first else { return }
        do {
            try await acquireCredit(for: next)
            let failure = state.withLock { write(next, then: rest.dropFirst(), continuation, &$0) }
            if let failure { continuation.resume(throwing: failure) }
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
        let taken = try state.withLock { state throws(RadioError) -> Bool in
            if let cause = state.finishedCause { throw cause }
            guard state.credits > 0 && state.creditWaiters.isEmpty else { return false }
            state.credits -= 1
            return true
        }
        if taken { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            // Checked again: the credit may have come back since.
            let outcome = state.withLock { state -> Result<Bool, RadioError> in
                if let cause = state.finishedCause { return .failure(cause) }
                if state.credits > 0 && state.creditWaiters.isEmpty {
                    state.credits -= 1
                    return .success(true)
                }
                let id = state.nextID
                state.nextID += 1
                let deadline = armTimeout(&state)
                state.creditWaiters.append(Waiter(id: id, name: command.name, continuation: continuation, deadline: deadline))
                return .success(false)
            }
            switch outcome {
            case .failure(let cause): continuation.resume(throwing: cause)
            case .success(true): continuation.resume()
            case .success(false): break
            }
        }
    }

    /// The deadline of a waiter starting now; the timer is armed unless it already fires earlier
    /// (every deadline is now + the same timeout, so an armed timer is never late for a new one).
    private func armTimeout(_ state: inout State) -> ContinuousClock.Instant {
        let deadline = ContinuousClock.now + commandTimeout
        arm(deadline, &state)
        return deadline
    }

    private func arm(_ deadline: ContinuousClock.Instant, _ state: inout State) {
        if state.timeoutTimer != nil, let armed = state.armedDeadline, armed <= deadline { return }
        state.timeoutTimer?.cancel()
        state.armedDeadline = deadline
        state.timeoutTimer = Task { [weak self] in
            do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
            self?.expireDue()
        }
    }

    /// The timer fired: fails every waiter past its deadline, re-arms for the earliest left. A
    /// timer armed for commands answered since finds nothing due (one wake-up per timeout).
    private func expireDue() {
        let resumptions = state.withLock { state -> Resumptions in
            var out = Resumptions()
            state.timeoutTimer = nil
            state.armedDeadline = nil
            let now = ContinuousClock.now
            while let index = state.pending.firstIndex(where: { $0.waiter.deadline <= now }) {
                let waiter = state.pending.remove(at: index).waiter
                // The controller may never return this command's credit; lend one so later commands
                // can at least try (the radio treats a timeout as a dead controller anyway).
                state.credits = max(state.credits, 1)
                grantCredits(&state, &out)
                out.results.append((waiter.continuation, .failure(RadioError(
                    kind: .controller, device: device, operation: waiter.name,
                    message: "no answer within \(commandTimeout)"))))
            }
            // Then the credit waiters a lent credit did not let go (an expired command lends first,
            // as its deadline came first).
            while let index = state.creditWaiters.firstIndex(where: { $0.deadline <= now }) {
                let waiter = state.creditWaiters.remove(at: index)
                out.credits.append((waiter.continuation, .failure(RadioError(
                    kind: .controller, device: device, operation: waiter.name,
                    message: "the controller accepted no command within \(commandTimeout)"))))
            }
            let next = (state.creditWaiters.map(\.deadline) + state.pending.map(\.waiter.deadline)).min()
            if let next { arm(next, &state) }
            return out
        }
        resumptions.run(self)
    }

    /// One event packet, on whatever thread the transport read it (see the type's comment).
    private func handle(_ packet: [UInt8]) {
        guard let event = HCIEvent.parse(packet) else {
            recorder.record { $0.malformedEvents += 1 }
            return
        }
        let resumptions: Resumptions
        switch event {
        case .commandComplete(let opcode, let count, let parameters):
            resumptions = state.withLock { state in
                var out = Resumptions()
                state.credits = Int(count)
                complete(opcode, &state, &out) { name in
                    guard let status = parameters.first else {
                        return .failure(RadioError(
                            kind: .protocolViolation, device: device, operation: name, message: "Command Complete without status"))
                    }
                    return status == 0 ? .success(parameters) : .failure(statusError(name, status))
                }
                grantCredits(&state, &out)
                return out
            }
        case .commandStatus(let opcode, let count, let status):
            resumptions = state.withLock { state in
                var out = Resumptions()
                state.credits = Int(count)
                complete(opcode, &state, &out) { name in
                    status == .success ? .success([]) : .failure(statusError(name, status.rawValue))
                }
                grantCredits(&state, &out)
                return out
            }
        default:
            if case .dropped = eventSink.yield(event) { recorder.record { $0.overflowed += 1 } }
            return
        }
        resumptions.run(self)
    }

    private func statusError(_ name: String, _ status: UInt8) -> RadioError {
        let code = HCIStatus(rawValue: status)
        return RadioError(kind: .controller, device: device, operation: name, status: code, message: "controller answered \(code)")
    }

    /// Resolves the oldest command with this opcode; opcode 0 (credits only) and answers nobody
    /// waits for any more (timed out) are ignored.
    /// A sequence's next command goes out at once when a credit is free and nobody queues for one.
    private func complete(
        _ opcode: HCIOpcode, _ state: inout State, _ out: inout Resumptions,
        _ result: (String) -> Result<ArraySlice<UInt8>, RadioError>
    ) {
        guard opcode.rawValue != 0, let index = state.pending.firstIndex(where: { $0.opcode == opcode }) else { return }
        let (_, waiter, rest) = state.pending.remove(at: index)
        let outcome = result(waiter.name)
        guard case .success = outcome, let next = rest.first else {
            out.results.append((waiter.continuation, outcome.mapError { $0 as any Error }))
            return
        }
        if state.credits > 0 && state.creditWaiters.isEmpty {
            state.credits -= 1
            if let failure = write(next, then: rest.dropFirst(), waiter.continuation, &state) {
                out.results.append((waiter.continuation, .failure(failure)))
            }
        } else {
            out.blocked.append((rest, waiter.continuation))
        }
    }

    private func grantCredits(_ state: inout State, _ out: inout Resumptions) {
        while state.credits > 0 && !state.creditWaiters.isEmpty {
            state.credits -= 1
            out.credits.append((state.creditWaiters.removeFirst().continuation, .success(())))
        }
    }

    /// Fails everything still waiting with `cause`; later sends fail at once.
    private func finish(_ cause: RadioError) {
        let resumptions = state.withLock { state -> Resumptions? in
            guard state.finishedCause == nil else { return nil }
            state.finishedCause = cause
            state.timeoutTimer?.cancel()
            state.timeoutTimer = nil
            var out = Resumptions()
            for waiter in state.creditWaiters { out.credits.append((waiter.continuation, .failure(cause))) }
            for (_, waiter, _) in state.pending { out.results.append((waiter.continuation, .failure(cause))) }
            state.creditWaiters = []
            state.pending = []
            return out
        }
        guard let resumptions else { return }
        eventSink.finish()
        resumptions.run(self)
    }
}
