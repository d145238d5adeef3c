import Broker
import Config
import NearbyProtocol
import Logging

/// `SUBSCRIBE` / `UNSUBSCRIBE`: subscriptions made at run time by a socket or MQTT-command client,
/// like a `[[subscription]]`, ending with their connection (docs/socket-protocol.md).
extension MessageManager {
    static let maxSubscriptionsPerClient = 16
    /// Over all connections: each running subscription is checked for every message heard.
    static let maxRuntimeSubscriptions = 64

    func subscribeFromSocket(_ request: SubscribeRequest, owner: Int) async -> SocketReply {
        // Nearby's rule: discovery needs the user's consent. Accepting it silently would let a UI wait forever.
        guard state.permission == .granted else {
            return .error(.notPermitted, "permission is \(state.permission.rawValue); SET permission granted first")
        }
        guard subscriptions.count(where: { $0.owner == owner }) < Self.maxSubscriptionsPerClient else {
            return .error(.limit, "at most \(Self.maxSubscriptionsPerClient) subscriptions per connection; UNSUBSCRIBE one first")
        }
        guard subscriptions.count(where: { $0.owner != nil }) < Self.maxRuntimeSubscriptions else {
            return .error(.limit, "the gateway holds at most \(Self.maxRuntimeSubscriptions) run-time subscriptions; try again later")
        }
        // A broadcast/both subscription puts a subscriber beacon into the rotation, like a message.
        if request.mode != .scan {
            let beacons = subscriptions.count(where: { $0.owner != nil && $0.mode != .scan })
            guard publicationCount + beacons < settings.airCapacity else {
                return .error(.limit, "\(publicationCount + beacons) messages and subscriber beacons are on the air, as many as stay found by peers within radio.lost_after_s; use mode=scan or UNPUB one first")
            }
        }
        let handle = nextSubscription
        nextSubscription += 1
        let subscription = Subscription(namespace: request.namespace, type: request.type, mediums: request.mediums, mode: request.mode,
                                        background: false, lostAfter: settings.defaultLostAfter, include: [], led: nil,
                                        handle: handle, owner: owner)
        logger.info("subscribing", metadata: ["handle": "s\(handle)", "namespace": "\(request.namespace)", "type": "\(request.type)"])
        await changeSubscriptions { $0.append(subscription) }
        return .ok("s\(handle)")
    }

    /// `GET subscriptions`, one object per `$SYS/subscriptions` line: the configured ones (`handle`
    /// null) in config order, then the run-time ones.
    func subscriptionJSONs() -> [String] {
        subscriptions.map { subscription in
            var json = JSONObjectWriter()
            json.add("handle", subscription.handle.map { "s\($0)" })
            json.add("namespace", subscription.namespace)
            json.add("type", subscription.type)
            json.add("mediums", rawJSON: "[" + subscription.mediums.map(\.rawValue).sorted().map(JSONObjectWriter.quote).joined(separator: ",") + "]")
            json.add("mode", subscription.mode.rawValue)
            json.add("lost_after_s", Int(subscription.lostAfter.components.seconds))
            json.add("origin", subscription.owner == nil ? "config" : "socket")
            return json.string
        }
    }

    /// Every change of the list ends in `apply`, so what the air ingest listens for follows.
    private func changeSubscriptions<T>(_ change: (inout [Subscription]) -> T) async -> T {
        let result = change(&subscriptions)
        await apply()
        return result
    }

    func unsubscribeFromSocket(_ text: String, owner: Int) async -> SocketReply {
        guard text.first == "s", let handle = Int(text.dropFirst()), handle > 0 else {
            return .error(.badArgument, "'\(text)' is not a subscription handle (s<N>)")
        }
        let removed = await changeSubscriptions { list in
            list.firstIndex { $0.handle == handle && $0.owner == owner }.map { list.remove(at: $0) } != nil
        }
        return removed ? .ok(nil) : .error(.notFound, "no subscription \(text) of this connection")
    }
}
