/// A wait that ran past its deadline, naming what never came.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    public var what: String
    public var description: String { "timed out waiting for \(what)" }

    public init(what: String) { self.what = what }
}

/// Races `wait` against `timeout` of real time: its value if it brings one first, else
/// `DeadlineExceeded` naming `what` (worked out only then, so it can show what did arrive).
/// Tests wait on events like this, never by sleeping; the sleep here is the deadline only.
public func withDeadline<T: Sendable>(
    _ timeout: Duration, waitingFor what: () -> String, _ wait: @escaping @Sendable () async -> T?
) async throws -> T {
    let result = await withTaskGroup(of: T?.self) { group in
        group.addTask { await wait() }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
    guard let result else { throw DeadlineExceeded(what: what()) }
    return result
}
