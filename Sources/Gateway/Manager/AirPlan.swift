import NearbyProtocol
/// What should be on the air right now: the pure answer to "given the state, the publications and the
/// subscriptions, what do the radio and the speaker do?" (docs/product.md §1, §4). No I/O here.
struct AirPlan: Equatable, Sendable {
    var bleAdverts: [[UInt8]] = []
    var bleScanning = false
    var audioPayloads: [[UInt8]] = []
    var audioCapture = false

    static let silent = AirPlan()
}

struct AirPlanner {
    var codec: FrameCodec

    /// Whether an entry runs in the current power state: everything when active; in standby only
    /// background entries, and only while background mode is on.
    static func runs(background: Bool, in state: GatewayState) -> Bool {
        switch state.power {
        case .active: true
        case .standby: state.backgroundMode && background
        }
    }

    /// The mediums an entry may use in the current power state: standby is BLE only, speaker silent.
    static func mediums(_ mediums: Set<Medium>, in state: GatewayState) -> Set<Medium> {
        state.power == .active ? mediums : mediums.intersection([.ble])
    }

    func plan(
        state: GatewayState,
        publications: some Sequence<Publication>,
        subscriptions: some Sequence<Subscription>,
        openScanWindows: Set<PublicationID>,
        epoch: UInt32
    ) -> AirPlan {
        guard state.permission == .granted else { return .silent }
        var plan = AirPlan()
        // Per message (or beacon) first, then one rotation that keeps each of them on the air often.
        var bleUnits: [[[UInt8]]] = [], audioUnits: [[[UInt8]]] = []
        for publication in publications.sorted(by: { $0.id < $1.id })
        where Self.runs(background: publication.background, in: state) {
            let mediums = Self.mediums(publication.mediums, in: state)
            // A scan publication transmits only while a matching subscriber beacon was heard recently,
            // and it has to listen to hear one: on each of its mediums (the set-top box of the
            // Nearby sample listens on the microphone only).
            let transmits = publication.mode.broadcasts || openScanWindows.contains(publication.id)
            if publication.mode == .scan, mediums.contains(.ble) { plan.bleScanning = true }
            if publication.mode == .scan, mediums.contains(.audio) { plan.audioCapture = true }
            guard transmits else { continue }
            if mediums.contains(.ble), let adverts = try? codec.bleAdverts(for: publication.message, epoch: epoch) {
                bleUnits.append(adverts)
            }
            if mediums.contains(.audio), let payloads = try? codec.audioPayloads(for: publication.message, epoch: epoch) {
                audioUnits.append(payloads)
            }
        }
        var beacons = Set<[UInt8]>()
        var audioBeacons = Set<[UInt8]>()
        for subscription in subscriptions where Self.runs(background: subscription.background, in: state) {
            let mediums = Self.mediums(subscription.mediums, in: state)
            // Every running subscription receives; a broadcasting one also announces itself so that
            // scan-mode publications nearby start transmitting.
            if mediums.contains(.ble) {
                plan.bleScanning = true
                if subscription.mode.broadcasts {
                    let beacon = codec.subscriberBeacon(namespace: subscription.namespace, type: subscription.type, epoch: epoch)
                    if beacons.insert(beacon).inserted { bleUnits.append([beacon]) }
                }
            }
            if mediums.contains(.audio) {
                plan.audioCapture = true
                if subscription.mode.broadcasts {
                    let id = codec.subscriberBeaconID(namespace: subscription.namespace, type: subscription.type, epoch: epoch)
                    let beacon = FrameCodec.subscriberBeaconFrame(id)
                    if audioBeacons.insert(beacon).inserted { audioUnits.append([beacon]) }
                }
            }
        }
        plan.bleAdverts = RotationSchedule.rotation(bleUnits)
        plan.audioPayloads = RotationSchedule.rotation(audioUnits)
        return plan
    }
}
