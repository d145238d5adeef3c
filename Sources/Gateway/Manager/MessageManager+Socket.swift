import Broker
import Config
import Glibc
import Logging
import NearbyProtocol

/// The manager's answers to socket clients (PUB/UNPUB/SET/GET; the broker itself does SUB/UNSUB/PING).
extension MessageManager {
    static let maxPublicationsPerClient = 16

    func handle(_ request: SocketRequest, client: ClientInfo, clients: Int) async -> SocketReply {
        switch request {
        case .publish(let publish):
            return await publishFromSocket(publish, client: client)
        case .unpublish(let handle):
            guard let id = PublicationID(handle) else { return .error(.badArgument, "'\(handle)' is not a handle (p<N>)") }
            return await unpublish(id, owner: Int(client.id.rawValue)) ? .ok(nil)
                : .error(.notFound, "no publication \(handle) of this connection")
        case .set(let setting):
            return await set(setting)
        case .get(.stats):
            return .event(topic: "$SYS/stats", json: statsJSON(clients: clients))
        case .get(.found):
            // One line per entry: the whole set in one line was 1.3 MB at 4,096 entries (issue 28).
            return .list(topic: "$SYS/found", jsons: foundJSONs())
        case .get(.publications):
            // And again: the configured publications and limits.publications run-time ones pass 4,096 bytes.
            return .list(topic: "$SYS/publications", jsons: publicationJSONs())
        case .get(.subscriptions):
            // The same shape: 64 run-time subscriptions and the configured ones exceed 4,096 bytes in one line.
            return .list(topic: "$SYS/subscriptions", jsons: subscriptionJSONs())
        case .get(let key):
            return .ok(get(key, clients: clients))
        case .subscribeMessages(let subscribe):
            return await subscribeFromSocket(subscribe, owner: Int(client.id.rawValue))
        case .unsubscribeMessages(let handle):
            return await unsubscribeFromSocket(handle, owner: Int(client.id.rawValue))
        }
    }

    private func publishFromSocket(_ request: PublishRequest, client: ClientInfo) async -> SocketReply {
        // Nothing goes on the air without consent; accepting it silently would let a UI believe it did.
        guard state.permission == .granted else {
            return .error(.notPermitted, "permission is \(state.permission.rawValue); SET permission granted first")
        }
        for medium in request.mediums {
            do {
                _ = try settings.codec.frames(for: request.message, epoch: epoch, medium: medium)
            } catch {
                return .error(.tooLarge, "\(medium.rawValue): \(error)")
            }
        }
        // Every publication goes on the air; a client can't fill it (or the manager's memory).
        let owner = Int(client.id.rawValue)
        guard publicationCount(owner: owner) < Self.maxPublicationsPerClient else {
            publicationsRefused += 1
            return .error(.limit, "at most \(Self.maxPublicationsPerClient) publications per connection; UNPUB one first")
        }
        // More messages than the rotation keeps on the air within lost_after_s would make peers
        // lose messages that are still being sent: refuse the one that would do that.
        guard publicationCount < settings.airCapacity else {
            publicationsRefused += 1
            return .error(.limit, "\(publicationCount) messages are on the air, as many as stay found by peers within radio.lost_after_s at radio.interval_ms; UNPUB one first")
        }
        // All connections together: local clients can't crowd the configured publications off the air.
        guard runtimePublicationCount < settings.limits.publications else {
            publicationsRefused += 1
            return .error(.limit, "the gateway holds at most \(settings.limits.publications) socket publications (limits.publications); try again later")
        }
        let template = Publication(id: PublicationID(rawValue: 0), message: request.message, mediums: request.mediums,
                                   mode: request.mode, background: false, expiry: nil, owner: nil)
        let id = await publish(template, owner: owner)
        return .ok(id.description)
    }

    private func set(_ setting: SocketSetting) async -> SocketReply {
        do {
            switch setting {
            case .permission(let value): try await update { $0.permission = value }
            case .background(let value): try await update { $0.backgroundMode = value }
            case .power(let value): try await update { $0.power = value }
            case .debug(let on):
                setDebug(on)
                return .ok(nil)
            }
            return .ok(nil)
        } catch {
            logger.error("state not changed: \(error)")
            return .error(.unavailable, "state not saved, nothing changed: \(error)")
        }
    }

    private func get(_ key: SocketGetKey, clients: Int) -> String {
        switch key {
        case .permission: state.permission.rawValue
        case .background: state.backgroundMode ? "on" : "off"
        case .power: state.power.rawValue
        case .debug: isDebug ? "on" : "off"
        case .stats: statsJSON(clients: clients)
        case .errors: "[" + errors.map(\.rawValue).sorted().map(JSONObjectWriter.quote).joined(separator: ",") + "]"
        case .publications: "[" + publicationJSONs().joined(separator: ",") + "]"   // answered by `handle` as a list
        case .found: "[" + foundJSONs().joined(separator: ",") + "]"   // answered by `handle` as a list
        case .subscriptions: "[" + subscriptionJSONs().joined(separator: ",") + "]"   // answered by `handle` as a list
        }
    }
}
