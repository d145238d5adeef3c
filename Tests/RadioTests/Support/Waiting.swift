@testable import Radio

struct DeadlineExceeded: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Waits for the first element of `stream` that `match` accepts, or fails after `timeout`.
/// Tests wait on events like this, never by sleeping.
func first<Element: Sendable, T: Sendable>(
    _ what: String, in stream: AsyncStream<Element>, within timeout: Duration = .seconds(10),
    where match: @escaping @Sendable (Element) -> T?
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            for await element in stream {
                if let value = match(element) { return value }
            }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let result = try await group.next() ?? nil
        group.cancelAll()
        guard let result else { throw DeadlineExceeded(what: what) }
        return result
    }
}

/// Radio events, in matching shapes.
extension RadioEvent {
    var upInfo: ControllerInfo? {
        if case .up(let info) = self { return info }
        return nil
    }
    var downError: RadioError? {
        if case .down(let error) = self { return error }
        return nil
    }
    var sighting: Sighting? {
        if case .sighting(let sighting) = self { return sighting }
        return nil
    }
}
