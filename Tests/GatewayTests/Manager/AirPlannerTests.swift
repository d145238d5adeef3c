@testable import Gateway
@testable import NearbyProtocol
import Testing

@Suite("Air plan: what is on the air for each state (docs/product.md §1, §4)")
struct AirPlannerTests {
    let planner = AirPlanner(codec: FrameCodec(apiKey: "plan-test-key", rotateSeconds: 600))
    let epoch: UInt32 = 1234

    func publication(_ id: Int, _ type: String, mediums: Set<Medium> = [.ble], mode: DiscoveryMode = .broadcast,
                     background: Bool = false) -> Publication {
        Publication(id: PublicationID(rawValue: id), message: Message(namespace: "home", type: type, content: Array("x".utf8)),
                    mediums: mediums, mode: mode, background: background, expiry: nil, owner: nil)
    }

    func subscription(mode: DiscoveryMode = .scan, mediums: Set<Medium> = [.ble], background: Bool = false) -> Subscription {
        Subscription(namespace: "home", type: "*", mediums: mediums, mode: mode, background: background,
                     lostAfter: .seconds(10), include: [], led: nil)
    }

    func adverts(_ publication: Publication) throws -> [[UInt8]] {
        try planner.codec.bleAdverts(for: publication.message, epoch: epoch)
    }

    @Test func nothingOnTheAirWithoutConsent() throws {
        for permission in [Permission.denied, .undecided] {
            let plan = planner.plan(state: GatewayState(permission: permission),
                                    publications: [publication(1, "a", mediums: [.ble, .audio])],
                                    subscriptions: [subscription(mediums: [.ble, .audio])], openScanWindows: [], epoch: epoch)
            #expect(plan == .silent)
        }
    }

    @Test func activeRunsEverything() throws {
        let pub = publication(1, "a", mediums: [.ble, .audio])
        let plan = planner.plan(state: GatewayState(), publications: [pub], subscriptions: [subscription(mediums: [.ble, .audio])],
                                openScanWindows: [], epoch: epoch)
        #expect(plan.bleAdverts == (try adverts(pub)))
        #expect(plan.audioPayloads == (try planner.codec.audioPayloads(for: pub.message, epoch: epoch)))
        #expect(plan.bleScanning)
        #expect(plan.audioCapture)
    }

    @Test func standbyKeepsOnlyBackgroundEntriesOnBLE() throws {
        let background = publication(1, "bg", mediums: [.ble, .audio], background: true)
        let foreground = publication(2, "fg")
        let state = GatewayState(backgroundMode: true, permission: .granted, power: .standby)
        let plan = planner.plan(state: state, publications: [background, foreground],
                                subscriptions: [subscription(mediums: [.ble, .audio], background: true)],
                                openScanWindows: [], epoch: epoch)
        #expect(plan.bleAdverts == (try adverts(background)))
        #expect(plan.audioPayloads.isEmpty, "the speaker is silent in standby")
        #expect(!plan.audioCapture)
        #expect(plan.bleScanning)
    }

    /// Issue 15 §3, the set-top box of the Nearby sample: audio only, in both directions.
    @Test func audioScanPublicationListensOnTheMicrophoneAndAnswersOnTheSpeaker() throws {
        let box = publication(1, "x-scan", mediums: [.audio], mode: .scan)
        let quiet = planner.plan(state: GatewayState(), publications: [box], subscriptions: [], openScanWindows: [], epoch: epoch)
        #expect(quiet.audioCapture, "an audio scan publication must listen for subscriber beacons")
        #expect(quiet.audioPayloads.isEmpty && quiet.bleAdverts.isEmpty && !quiet.bleScanning)
        let heard = planner.plan(state: GatewayState(), publications: [box], subscriptions: [], openScanWindows: [box.id], epoch: epoch)
        #expect(heard.audioPayloads == (try planner.codec.audioPayloads(for: box.message, epoch: epoch)))
    }

    @Test func audioBroadcastSubscriptionSendsItsBeaconOutOfTheSpeakerAndListens() {
        let phone = subscription(mode: .broadcast, mediums: [.audio])
        let plan = planner.plan(state: GatewayState(), publications: [], subscriptions: [phone, phone], openScanWindows: [], epoch: epoch)
        let id = planner.codec.subscriberBeaconID(namespace: "home", type: "*", epoch: epoch)
        #expect(plan.audioPayloads == [FrameCodec.subscriberBeaconFrame(id)], "one beacon for two equal subscriptions")
        #expect(plan.audioCapture, "every running subscription receives")
        #expect(plan.bleAdverts.isEmpty && !plan.bleScanning)
        let scanOnly = planner.plan(state: GatewayState(), publications: [], subscriptions: [subscription(mode: .scan, mediums: [.audio])],
                                    openScanWindows: [], epoch: epoch)
        #expect(scanOnly.audioPayloads.isEmpty, "a scan-only subscription never transmits")
    }

    @Test func standbyWithBackgroundModeOffIsSilent() {
        let state = GatewayState(backgroundMode: false, permission: .granted, power: .standby)
        let plan = planner.plan(state: state, publications: [publication(1, "bg", background: true)],
                                subscriptions: [subscription(background: true)], openScanWindows: [], epoch: epoch)
        #expect(plan == .silent)
    }

    @Test func scanPublicationTransmitsOnlyInsideItsWindow() throws {
        let pub = publication(7, "offer", mode: .scan)
        let closed = planner.plan(state: GatewayState(), publications: [pub], subscriptions: [], openScanWindows: [], epoch: epoch)
        #expect(closed.bleAdverts.isEmpty)
        #expect(closed.bleScanning, "a scan publication listens for subscriber beacons")
        let open = planner.plan(state: GatewayState(), publications: [pub], subscriptions: [],
                                openScanWindows: [pub.id], epoch: epoch)
        #expect(open.bleAdverts == (try adverts(pub)))
    }

    @Test func broadcastSubscriptionAnnouncesItselfOnce() {
        let plan = planner.plan(state: GatewayState(), publications: [],
                                subscriptions: [subscription(mode: .broadcast), subscription(mode: .both)],
                                openScanWindows: [], epoch: epoch)
        #expect(plan.bleAdverts == [planner.codec.subscriberBeacon(namespace: "home", type: "*", epoch: epoch)])
        #expect(plan.bleScanning)
    }

    @Test func scanSubscriptionTransmitsNothing() {
        let plan = planner.plan(state: GatewayState(), publications: [], subscriptions: [subscription(mode: .scan)],
                                openScanWindows: [], epoch: epoch)
        #expect(plan.bleAdverts.isEmpty)
        #expect(plan.bleScanning)
    }
}

/// The bound `PUB` keeps (issue 15 §1 with the publication limits of issue 13).
@Suite struct AirCapacityTests {
    @Test func capacityFollowsTheRotationsGapBound() {
        // 3·M + 2 adverts at 100 ms within 10 s: M = 32.
        #expect(ManagerSettings.airCapacity(intervalMs: 100, lostAfterS: 10) == 32)
        #expect(ManagerSettings.airCapacity(intervalMs: 100, lostAfterS: 4) == 12)
        #expect(ManagerSettings.airCapacity(intervalMs: 1000, lostAfterS: 1) == 1)
        let m = ManagerSettings.airCapacity(intervalMs: 250, lostAfterS: 60)
        #expect((3 * m + 2) * 250 <= 60_000 && (3 * (m + 1) + 2) * 250 > 60_000)
    }
}
