import TestSupport

@testable import Radio

/// Waits for the first element of `stream` that `match` accepts, or fails after `timeout`: a deadline for
/// an element that comes, generous because a loaded machine can hold the test pool for a minute.
func first<Events: AsyncSequence<Events.Element, Never> & Sendable, T: Sendable>(
    _ what: String, in stream: Events, within timeout: Duration = .seconds(60),
    where match: @escaping @Sendable (Events.Element) -> T?
) async throws -> T {
    try await withDeadline(timeout, waitingFor: { what }) {
        for await element in stream {
            if let value = match(element) { return value }
        }
        return nil
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
