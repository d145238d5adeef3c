import Testing
@testable import Modem

/// The benchmark helper must measure a working round trip; the figures themselves are machine-
/// dependent and are reported by the benchmark, never asserted here.
@Suite struct ModemCostTests {
    @Test func measuresARoundTripThatDecodes() throws {
        let figures = try ModemCost.measure(protocol: .ultrasoundFastest, payloadLength: 16, repetitions: 1)
        #expect(figures.decodedAll)
        #expect(figures.encode > 0 && figures.decode > 0)
        #expect(figures.description.hasPrefix("ultrasound-fastest  16 bytes"))
    }
}
