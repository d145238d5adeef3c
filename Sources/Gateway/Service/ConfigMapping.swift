import Broker
import Config
import MQTT
import NearbyProtocol
import Radio

/// The config, translated into what each part runs on. One file, so a config change touches one place.
extension ManagerSettings {
    init(config: GatewayConfig, board: Board) throws {
        let codec = FrameCodec(apiKey: config.apiKey, rotateSeconds: config.radio.rotateS)
        let clock = ContinuousClock.now
        self.init(
            codec: codec,
            publications: config.publications.map { publication in
                Publication(id: PublicationID(rawValue: 0), message: publication.message, mediums: Set(publication.mediums),
                            mode: publication.mode, background: publication.background,
                            expiry: publication.ttlS > 0 ? clock + .seconds(publication.ttlS) : nil, owner: nil)
            },
            subscriptions: config.subscriptions.map { subscription in
                Subscription(namespace: subscription.namespace, type: subscription.type, mediums: Set(subscription.mediums),
                             mode: subscription.mode, background: subscription.background, lostAfter: subscription.lostAfter,
                             include: Set(subscription.include), identities: Set(subscription.identities), led: subscription.led)
            },
            identities: config.identities.isEmpty ? nil : try Identities(config.identities),
            logLevel: config.logLevel,
            limits: config.limits,
            airCapacity: Self.airCapacity(intervalMs: config.radio.intervalMs, lostAfterS: config.radio.lostAfterS),
            distance: DistanceModel(ownPowerAt1m: config.radio.txPowerAt1m, exponent: Double(config.radio.pathLossX10) / 10),
            defaultLostAfter: .seconds(config.radio.lostAfterS)
        )
    }
}

extension GatewayConfig {
    /// `[mqtt]` itself needs no mapping: its settings (`MQTTSettings`) are shared by the reader and the
    /// bridge, in NearbyProtocol; the bridge's view of the subscriptions is made here.
    var bridgedSubscriptions: [BridgedSubscription] {
        subscriptions.map { BridgedSubscription(namespace: $0.namespace, type: $0.type, include: $0.include, identities: $0.identities) }
    }

    var socketConfiguration: SocketBrokerConfiguration {
        SocketBrokerConfiguration(path: socket.path, mode: socket.mode, group: socket.group, maxClients: socket.maxClients)
    }

    private var reannouncePolicy: ReannouncePolicy {
        switch radio.reannounce {
        case .automatic: .automatic
        case .everyInterval: .everyInterval
        case .onChange: .onChange
        }
    }

    var radioConfiguration: RadioConfiguration {
        // Scan interval = the advertising interval; the window is the configured duty cycle of it.
        let window = radio.interval * Double(max(1, min(100, radio.scanDuty))) / 100
        return RadioConfiguration(advertisingInterval: radio.interval, scanInterval: radio.interval, scanWindow: window,
                                  reannounce: reannouncePolicy, quietTimeout: radio.quietS > 0 ? .seconds(radio.quietS) : nil)
    }
}
