import Synchronization
import SystemCall
import TestSupport
import Testing

@testable import Radio

/// Driver logic against a fake controller: flow control, timeouts, error statuses, a vanishing
/// transport.
@Suite struct HCIControllerTests {
    /// A controller with its pump running for the duration of `body`.
    func withController(
        _ fake: FakeController, timeout: Duration = .seconds(60), _ body: (HCIController) async throws -> Void
    ) async throws {
        let loop = try EventLoop(name: "hci-test")
        defer { loop.shutdown() }
        let controller = HCIController(transport: fake, commandTimeout: timeout, loop: loop)
        // Started on the controller's loop, as the radio's child tasks are: a pump waiting for
        // Swift's pool (busy with the property tests) would let the loop's command timer fire first.
        let pump = Task(executorPreference: controller.loop) { try await controller.run() }
        defer {
            pump.cancel()
            fake.close()
        }
        try await body(controller)
    }

    /// Waits (yielding, with a deadline) until `condition` holds.
    func eventually(_ what: String, within limit: Duration = .seconds(60), _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + limit   // a deadline, not a measurement: loaded machines are slow
        while !(await condition()) {
            guard ContinuousClock.now < deadline else { throw DeadlineExceeded(what: what) }
            await Task.yield()
        }
    }

    @Test func returnParametersComeBackWithTheStatus() async throws {
        let fake = FakeController()
        try await withController(fake) { controller in
            let info = try await controller.send(.readBDAddress, decode: ControllerResponses.bdAddress)
            #expect(info == BDAddress("00:AA:01:02:00:42"))
        }
    }

    @Test func aSecondCommandWaitsForTheControllersCredit() async throws {
        let fake = FakeController { _ in .none }
        try await withController(fake) { controller in
            let first = Task { try await controller.send(.reset) }
            _ = try await FakeControllerWaiting.next(fake.sent)
            let second = Task { try await controller.send(.readLocalVersion) }
            try await eventually("the second command to wait for a credit") { await controller.commandsWaitingForCredit == 1 }
            #expect(fake.log.map(\.opcode) == [.reset])
            // Complete the first but grant no credit: the second must still wait.
            fake.answer(.reset, .complete(credits: 0))
            _ = try await first.value
            #expect(await controller.commandsWaitingForCredit == 1)
            #expect(fake.log.map(\.opcode) == [.reset])
            // A credit-only Command Complete (opcode 0) lets it go.
            fake.inject(FakeController.commandComplete(HCIOpcode(rawValue: 0), credits: 1))
            #expect(try await FakeControllerWaiting.next(fake.sent).opcode == .readLocalVersion)
            fake.answer(.readLocalVersion, .complete(parameters: [9, 0, 0, 9, 0, 0, 0, 0]))
            _ = try await second.value
        }
    }

    @Test func severalCreditsLetSeveralCommandsGo() async throws {
        let fake = FakeController { _ in .none }
        try await withController(fake) { controller in
            let first = Task { try await controller.send(.reset) }
            _ = try await FakeControllerWaiting.next(fake.sent)
            fake.answer(.reset, .complete(credits: 3))
            _ = try await first.value
            let a = Task { try await controller.send(.readLocalVersion) }
            let b = Task { try await controller.send(.readBDAddress) }
            let c = Task { try await controller.send(.leReadLocalSupportedFeatures) }
            for _ in 0..<3 { _ = try await FakeControllerWaiting.next(fake.sent) }
            #expect(await controller.credits == 0)
            fake.answer(.readBDAddress, .complete(parameters: [1, 2, 3, 4, 5, 6], credits: 1))
            fake.answer(.readLocalVersion, .complete(parameters: [9, 0, 0, 9, 0, 0, 0, 0], credits: 1))
            fake.answer(.leReadLocalSupportedFeatures, .complete(parameters: [0, 0, 0, 0, 0, 0, 0, 0], credits: 1))
            for task in [a, b, c] { _ = try await task.value }
        }
    }

    /// A step's commands go as one sequence: each is written when the one before succeeded, and
    /// the first failure ends it, naming its command, with the rest never sent.
    @Test func aSequenceStopsAtItsFirstFailure() async throws {
        let fake = FakeController { command in
            command.opcode == .leSetAdvertisingData ? .complete(status: 0x12) : FakeController.btvirtLike(command)
        }
        try await withController(fake) { controller in
            let last = try await controller.send(sequence: [.readLocalVersion, .readBDAddress])
            #expect(last.count == 7, "the last command's return parameters")
            let error = try await #require(throws: RadioError.self) {
                try await controller.send(sequence: [.leSetAdvertisingEnable(false), try .leSetAdvertisingData([2, 1, 6]), .leSetAdvertisingEnable(true)])
            }
            #expect(error.operation == "LE Set Advertising Data")
            #expect(fake.log.map(\.opcode) == [.readLocalVersion, .readBDAddress, .leSetAdvertisingEnable, .leSetAdvertisingData])
        }
    }

    /// A controller that grants no credit with an answer holds the rest of the sequence until it does.
    @Test func aSequenceWaitsForTheControllersCredit() async throws {
        let fake = FakeController { command in
            command.opcode == .leSetAdvertisingEnable ? .complete(credits: 0) : FakeController.btvirtLike(command)
        }
        try await withController(fake) { controller in
            let sequence = Task { try await controller.send(sequence: [.leSetAdvertisingEnable(false), .reset]) }
            _ = try await FakeControllerWaiting.next(fake.sent)
            try await eventually("the credit to be used up") { await controller.credits == 0 }
            #expect(fake.log.map(\.opcode) == [.leSetAdvertisingEnable])
            fake.inject(FakeController.commandComplete(HCIOpcode(rawValue: 0), credits: 1))
            #expect(try await FakeControllerWaiting.next(fake.sent) == .reset)
            _ = try await sequence.value
        }
    }

    @Test func aCommandWithoutAnswerTimesOutNamingTheCommand() async throws {
        let fake = FakeController { _ in .none }
        try await withController(fake, timeout: .milliseconds(50)) { controller in
            let error = try await #require(throws: RadioError.self) { try await controller.send(.leSetScanEnable(true)) }
            #expect(error.kind == .controller)
            #expect(error.operation == "LE Set Scan Enable")
            #expect(error.device == "fake")
            // A credit is lent after a timeout so the next command can at least be tried.
            fake.setResponder(FakeController.btvirtLike)
            try await controller.send(.reset)
        }
    }

    /// One timer serves every waiter (issue 18): after answered commands it must still fail the
    /// unanswered one and the one waiting behind it for a credit, each naming its own command.
    ///
    /// The scenario needs the second command seen waiting before the first times out. A loaded,
    /// emulated machine can leave a task unscheduled for longer than a fixed timeout (1.5 s, then
    /// 10 s, were not enough under qemu-aarch64 beside the host's guests), so a run in which the
    /// timeout came first is not a result: it is run again with a timeout four times as long.
    @Test func theSharedTimeoutFailsEachUnansweredWaiterAfterAnsweredOnes() async throws {
        for timeout in [Duration.seconds(10), .seconds(40), .seconds(160)] {
            if try await sharedTimeout(timeout) { return }
        }
        Issue.record("the second command was never seen waiting for a credit before the first timed out (160 s)")
    }

    /// False when the first command timed out before the second was seen waiting (no result).
    private func sharedTimeout(_ timeout: Duration) async throws -> Bool {
        let fake = FakeController { $0.opcode == .leSetScanEnable ? .none : FakeController.btvirtLike($0) }
        var waited = false
        try await withController(fake, timeout: timeout) { controller in
            for _ in 0..<5 { try await controller.send(.reset) }
            let timedOut = Mutex(false)
            let unanswered = Task {
                defer { timedOut.withLock { $0 = true } }
                try await controller.send(.leSetScanEnable(true))
            }
            try await eventually("the unanswered command to be sent") { fake.log.last?.opcode == .leSetScanEnable }
            let waiting = Task { try await controller.send(.readLocalVersion) }
            try await eventually("the second command to wait for a credit, or the first to time out", within: timeout + .seconds(60)) {
                if await controller.commandsWaitingForCredit == 1 { waited = true }
                return waited || timedOut.withLock { $0 }
            }
            let noAnswer = try await #require(throws: RadioError.self) { try await unanswered.value }
            // The credit lent after the timeout lets the waiting command go; the fake answers it.
            _ = try await waiting.value
            guard waited else { return }
            #expect(noAnswer.operation == "LE Set Scan Enable")
            #expect(noAnswer.message.hasPrefix("no answer within"))
        }
        return waited
    }

    @Test func errorStatusesBecomeTypedErrors() async throws {
        let fake = FakeController { command in
            command.opcode == .leSetAdvertisingData ? .complete(status: 0x12) : FakeController.btvirtLike(command)
        }
        try await withController(fake) { controller in
            let invalid = try await #require(throws: RadioError.self) { try await controller.send(try .leSetAdvertisingData([2, 1, 6])) }
            #expect(invalid.status == .invalidParameters)
            #expect(invalid.operation == "LE Set Advertising Data")
            #expect(invalid.kind == .controller)
            #expect(invalid.description == "fake: LE Set Advertising Data: controller answered Invalid HCI Command Parameters (0x12)")
            // Command Status with an error, as btvirt answers unknown commands.
            let unknown = try await #require(throws: RadioError.self) { try await controller.send(.leReadMaximumAdvertisingDataLength) }
            #expect(unknown.status == .unknownCommand)
            #expect(unknown.operation == "LE Read Maximum Advertising Data Length")
            // The controller still works after errors.
            try await controller.send(.reset)
        }
    }

    @Test func aVanishingTransportFailsWaitingCommandsWithItsCause() async throws {
        let fake = FakeController { _ in .none }
        let loop = try EventLoop(name: "hci-test")
        defer { loop.shutdown() }
        let controller = HCIController(transport: fake, commandTimeout: .seconds(30), loop: loop)
        // Started on the controller's loop, as the radio's child tasks are: a pump waiting for
        // Swift's pool (busy with the property tests) would let the loop's command timer fire first.
        let pump = Task(executorPreference: controller.loop) { try await controller.run() }
        let waiting = Task { try await controller.send(.reset) }
        _ = try await FakeControllerWaiting.next(fake.sent)
        let cause = RadioError(kind: .unavailable, device: "fake", operation: "read", message: "the controller closed the connection")
        fake.vanish(cause)
        await #expect(throws: cause) { try await waiting.value }
        await #expect(throws: cause) { try await pump.value }
        await #expect(throws: cause) { try await controller.send(.reset) }
    }

    /// The command timeout counts the controller's silence: an answer that comes after the timeout,
    /// while the controller kept reporting (a starved box, a controller busy with reports), is
    /// still taken, and a command dies only after `commandTimeout` of silence or 15 × it in all. (A
    /// slow liveness probe answer used to take the whole link down, and with it seconds of
    /// reports: the Theengs bench's guest lost most of its adverts so.) The reports every 0.05 s
    /// are the stimulus, not a synchronisation: the timeout is 2 s.
    @Test func aLateAnswerCountsWhileTheControllerKeepsReporting() async throws {
        let fake = FakeController { $0.opcode == .readLocalVersion ? .none : FakeController.btvirtLike($0) }
        try await withController(fake, timeout: .seconds(2)) { controller in
            let talking = try fake.reportFromAThread(for: .seconds(3)) {
                fake.answer(.readLocalVersion, .complete(parameters: [0x09, 0x00, 0x00, 0x09, 0xF1, 0x05, 0x00, 0x00]))
            }
            let started = ContinuousClock.now
            let answer = try await controller.send(.readLocalVersion)
            #expect(answer.first == 0)
            #expect(ContinuousClock.now - started >= .seconds(2), "answered after the plain timeout")
            talking.join()
            // Silence: the next unanswered command fails after the plain timeout.
            let silent = try await #require(throws: RadioError.self) { try await controller.send(.readLocalVersion) }
            #expect(silent.message == "no answer within 2.0 seconds")
        }
    }

    @Test func otherEventsArePassedOnAndMalformedOnesCounted() async throws {
        let fake = FakeController()
        let recorder = StatisticsRecorder()
        let loop = try EventLoop(name: "hci-test")
        defer { loop.shutdown() }
        let controller = HCIController(transport: fake, commandTimeout: .seconds(5), recorder: recorder, loop: loop)
        // Started on the controller's loop, as the radio's child tasks are: a pump waiting for
        // Swift's pool (busy with the property tests) would let the loop's command timer fire first.
        let pump = Task(executorPreference: controller.loop) { try await controller.run() }
        defer { pump.cancel() }
        fake.inject([0x0E, 0x09, 0x01])  // lies about its length
        fake.inject([0x10, 0x01, 0x03])
        let event = try await first("hardware error", in: controller.events) { $0 }
        #expect(event == .hardwareError(code: 3))
        #expect(recorder.snapshot.malformedEvents == 1)
        fake.close()
    }
}

enum FakeControllerWaiting {
    static func next(_ stream: AsyncStream<HCICommand>) async throws -> HCICommand {
        try await first("a command", in: stream) { $0 }
    }
}
