import Testing
@testable import NearbyProtocol

/// Issue 29 item 5: the room decision of a fleet (docs/behaviour.md, "Rooms across gateways"), on an
/// injected clock: hysteresis (margin and dwell), audio over BLE, expiry, the settle time, bounds.
@Suite struct RoomDeciderTests {
    let start = ContinuousClock.now
    func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    /// A decider past its settle time at t = 0 (listening since t = -settle).
    func decider(_ rule: RoomRule = RoomRule()) -> RoomDecider<String> {
        var decider = RoomDecider<String>(rule: rule)
        decider.listen(now: start - rule.settle)
        return decider
    }

    func ble(_ room: String, _ rssi: Double?) -> RoomEvidence { RoomEvidence(room: room, rssi: rssi, audio: false) }

    @Test("the first evidence decides at once; the strongest room wins; equal RSSI goes to the first name")
    func firstDecision() {
        var d = decider()
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -70), now: at(0))
        d.record("m", gateway: "gw-b", evidence: ble("hall", -60), now: at(0))
        #expect(d.decide(now: at(0)).map { $0.room } == ["hall"])
        #expect(d.decide(now: at(0.5)).isEmpty, "a decision is reported once")

        var tie = decider()
        tie.record("m", gateway: "gw-b", evidence: ble("kitchen", -60), now: at(0))
        tie.record("m", gateway: "gw-a", evidence: ble("hall", -60), now: at(0))
        #expect(tie.decide(now: at(0)).map { $0.room } == ["hall"])
    }

    @Test("equal or nearly equal RSSI never moves the decision, however long and however it wobbles")
    func equalNeverFlaps() {
        var d = decider()
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -60), now: at(0))
        #expect(d.decide(now: at(0)).map { $0.room } == ["kitchen"])
        var changes = 0
        for step in 1...600 {
            let t = Double(step) * 0.5
            // The two rooms take turns being up to 5.5 dB ahead: under the 6 dB margin.
            let wobble = step % 2 == 0 ? 5.5 : -5.5
            d.record("m", gateway: "gw-a", evidence: ble("kitchen", -60), now: at(t))
            d.record("m", gateway: "gw-b", evidence: ble("hall", -60 + wobble), now: at(t))
            changes += d.decide(now: at(t)).count
        }
        #expect(changes == 0)
        #expect(d.room("m") == "kitchen")
    }

    @Test("a challenger takes the message after beating the current room by the margin for the dwell time, not before")
    func marginAndDwell() {
        var d = decider()
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -50), now: at(0))
        d.record("m", gateway: "gw-b", evidence: ble("hall", -80), now: at(0))
        #expect(d.decide(now: at(0)).map { $0.room } == ["kitchen"])
        // The message moves: the hall is 10 dB ahead from t = 1.
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -70), now: at(1))
        d.record("m", gateway: "gw-b", evidence: ble("hall", -60), now: at(1))
        #expect(d.decide(now: at(1)).isEmpty)
        #expect(d.nextDeadline() == at(6), "the dwell ends 5 s after the challenger first led")
        #expect(d.decide(now: at(5.9)).isEmpty)
        #expect(d.decide(now: at(6)).map { $0.room } == ["hall"])
    }

    @Test("a challenger that falls back under the margin during the dwell starts over")
    func dwellRestarts() {
        var d = decider()
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -60), now: at(0))
        #expect(d.decide(now: at(0)).count == 1)
        d.record("m", gateway: "gw-b", evidence: ble("hall", -50), now: at(1))
        #expect(d.decide(now: at(1)).isEmpty)
        d.record("m", gateway: "gw-b", evidence: ble("hall", -55), now: at(4))
        #expect(d.decide(now: at(4)).isEmpty)   // 5 dB ahead: the challenge ends
        d.record("m", gateway: "gw-b", evidence: ble("hall", -50), now: at(5))
        #expect(d.decide(now: at(5)).isEmpty)
        #expect(d.decide(now: at(8)).isEmpty, "the dwell counts from t = 5, not t = 1")
        #expect(d.decide(now: at(10)).map { $0.room } == ["hall"])
    }

    @Test("audio beats BLE at once, whatever the RSSI; BLE never beats audio")
    func audioBeatsBLE() {
        var d = decider()
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -40), now: at(0))
        #expect(d.decide(now: at(0)).map { $0.room } == ["kitchen"])
        d.record("m", gateway: "gw-b", evidence: RoomEvidence(room: "hall", rssi: nil, audio: true), now: at(1))
        #expect(d.decide(now: at(1)).map { $0.room } == ["hall"])
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -20), now: at(2))
        #expect(d.decide(now: at(3)).isEmpty, "20 dB stronger over BLE does not take it back")
        #expect(d.room("m") == "hall")
        var e = decider()
        e.record("m", gateway: "gw-b", evidence: RoomEvidence(room: "hall", rssi: -90, audio: true), now: at(0))
        e.record("m", gateway: "gw-a", evidence: ble("kitchen", -20), now: at(0))
        #expect(e.decide(now: at(0)).map { $0.room } == ["hall"])
        for t in 1...20 {
            e.record("m", gateway: "gw-b", evidence: RoomEvidence(room: "hall", rssi: -90, audio: true), now: at(Double(t)))
            e.record("m", gateway: "gw-a", evidence: ble("kitchen", -20), now: at(Double(t)))
            #expect(e.decide(now: at(Double(t))).isEmpty)
        }
    }

    @Test("a dead gateway's evidence expires: the decision moves to the best remaining room, then to none")
    func expiry() {
        var d = decider()
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -50), now: at(0))
        d.record("m", gateway: "gw-b", evidence: ble("hall", -75), now: at(0))
        d.record("m", gateway: "gw-c", evidence: ble("attic", -85), now: at(0))
        #expect(d.decide(now: at(0)).map { $0.room } == ["kitchen"])
        // gw-a dies at t = 0; the others refresh every 5 s.
        for t in stride(from: 5.0, through: 15, by: 5) {
            d.record("m", gateway: "gw-b", evidence: ble("hall", -75), now: at(t))
            d.record("m", gateway: "gw-c", evidence: ble("attic", -85), now: at(t))
            #expect(d.decide(now: at(t)).isEmpty)
        }
        #expect(d.nextDeadline() == at(20))
        #expect(d.decide(now: at(19.9)).isEmpty)
        #expect(d.decide(now: at(20)).map { $0.room } == ["hall"], "the current room's evidence is gone: no dwell")
        #expect(d.decide(now: at(35)).map { $0.room } == [nil], "everyone's evidence expired")
        #expect(d.count == 0, "a message with no evidence and no room is forgotten")
    }

    @Test("a withdrawn message (lost) stops counting at once")
    func withdraw() {
        var d = decider()
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -50), now: at(0))
        d.record("m", gateway: "gw-b", evidence: ble("hall", -75), now: at(0))
        #expect(d.decide(now: at(0)).map { $0.room } == ["kitchen"])
        d.withdraw("m", gateway: "gw-a")
        #expect(d.decide(now: at(1)).map { $0.room } == ["hall"])
    }

    @Test("the fleet's published decision is the current room: adopting it is not a change, and the rule starts from it")
    func adopt() {
        var d = decider()
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -60), now: at(0))
        d.record("m", gateway: "gw-b", evidence: ble("hall", -56), now: at(0))
        d.adopt("m", room: "kitchen")   // another gateway decided while the hall was weaker
        #expect(d.decide(now: at(0)).isEmpty, "4 dB is under the margin: kitchen stays")
        #expect(d.room("m") == "kitchen")
        d.adopt("m", room: "attic")     // a room no gateway has evidence for (e.g. forged, or long gone)
        #expect(d.decide(now: at(1)).map { $0.room } == ["hall"])
    }

    @Test("no decision before the settle time after listening; then one from all the evidence heard meanwhile")
    func settle() {
        var d = RoomDecider<String>()
        d.listen(now: at(0))
        d.adopt("m", room: "kitchen")
        d.record("m", gateway: "gw-b", evidence: ble("hall", -70), now: at(0.1))
        #expect(d.decide(now: at(0.2)).isEmpty, "the kitchen's gateway may not have been heard yet")
        d.record("m", gateway: "gw-a", evidence: ble("kitchen", -72), now: at(1))
        #expect(d.decide(now: at(6)).isEmpty, "kitchen has evidence and hall is not 6 dB ahead")
        #expect(d.room("m") == "kitchen")
    }

    @Test("bounded: messages and gateways per message beyond the limits are refused")
    func bounds() {
        var d = RoomDecider<String>(maxKeys: 3, maxGateways: 2)
        d.listen(now: at(0))
        for k in 0..<10 { d.record("m\(k)", gateway: "g", evidence: ble("r", -50), now: at(0)) }
        #expect(d.count == 3)
        let second = d.record("m0", gateway: "g2", evidence: ble("r", -50), now: at(0))
        let third = d.record("m0", gateway: "g3", evidence: ble("r", -50), now: at(0))
        let renewed = d.record("m0", gateway: "g", evidence: ble("r2", -40), now: at(0))
        #expect(second && !third)
        #expect(renewed, "a known gateway may always renew")
        d.adopt("other", room: "x")
        #expect(d.count == 3)
    }
}
