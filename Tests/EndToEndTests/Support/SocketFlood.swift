import Foundation
import LineClient
import Synchronization

/// Heavy socket load from clients on threads of their own (blocking sends must not sit on Swift's
/// two cooperative threads): each keeps writing batches of commands until the gateway goes away.
/// Readers drain their replies; the others never read, like stuck clients, so the gateway's queues
/// for them fill up and overflow.
final class SocketFlood: Sendable {
    private let linesSent = Atomic<Int>(0)
    private let running = Atomic<Int>(0)
    private let stopped = Atomic<Bool>(false)

    /// Lines written so far, by every client together.
    var sent: Int { linesSent.load(ordering: .relaxed) }
    var activeClients: Int { running.load(ordering: .relaxed) }

    init(path: String, readers: Int, stuck: Int) throws {
        let batch = Array((0..<50).map { i in
            ["PING", "GET stats", "SUB found/#", "UNSUB found/#", "SUB $SYS/#", "GET found", "BOGUS \(i)", "GET publications"][i % 8] + "\n"
        }.joined().utf8)
        for index in 0..<(readers + stuck) {
            let client = try SocketLineClient(path: path)
            let reads = index < readers
            running.add(1, ordering: .relaxed)
            let thread = Thread { [self] in
                defer { running.subtract(1, ordering: .relaxed) }
                if reads {
                    let drain = Thread { while (try? client.readLine(timeout: .seconds(30))) != nil {} }
                    drain.start()
                }
                while !stopped.load(ordering: .relaxed) {
                    do { try client.send(batch) } catch { return }   // EPIPE/ECONNRESET: the gateway is gone
                    linesSent.add(50, ordering: .relaxed)
                }
                client.close()
            }
            thread.start()
        }
    }

    func stop() { stopped.store(true, ordering: .relaxed) }

    deinit { stop() }
}
