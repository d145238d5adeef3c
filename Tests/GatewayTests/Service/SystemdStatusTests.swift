import Testing
@testable import Gateway

/// Issue 17: `STATUS=` said "running" while the radio was down. The status line names every raised
/// error with its cause.
@Suite struct SystemdStatusTests {
    @Test("No error raised: running")
    func healthy() {
        #expect(SystemdStatus.text(errors: [:]) == "running")
    }

    @Test("A raised error is named with its cause")
    func oneError() {
        let text = SystemdStatus.text(errors: [.bluetoothPower: "hci0: send: Network is down (ENETDOWN)"])
        #expect(text == "running with an error: bluetooth-power (hci0: send: Network is down (ENETDOWN))")
    }

    @Test("Several errors in a stable order, each cause on one line and cut to the limit")
    func severalErrors() {
        let long = String(repeating: "x", count: 500)
        let text = SystemdStatus.text(errors: [
            .state: "state not saved:\n  /var/lib/nearby-gateway/state.json: EACCES",
            .bluetoothPower: long,
        ])
        #expect(text.hasPrefix("running with 2 errors: bluetooth-power ("))
        #expect(text.hasSuffix("; state (state not saved: /var/lib/nearby-gateway/state.json: EACCES)"))
        #expect(!text.contains("\n"))
        let cut = String(repeating: "x", count: SystemdStatus.causeLimit - 1) + "…"
        #expect(text.contains("bluetooth-power (\(cut));"))
    }
}
