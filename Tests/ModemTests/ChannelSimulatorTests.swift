import Foundation
import ModemTestSupport
import SplitMix
import Testing
@testable import Modem

/// The channel simulator itself: each effect does what its name says, and a seed replays a trial.
@Suite struct ChannelSimulatorTests {
    static func tone(_ hz: Double, seconds: Double) -> [Float] {
        (0..<Int(seconds * 48_000)).map { Float(0.5 * sin(2 * Double.pi * hz * Double($0) / 48_000)) }
    }

    static func power(_ x: some Collection<Float>) -> Double {
        x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)
    }

    /// Frequency of a pure tone from its zero crossings.
    static func frequency(_ x: [Float]) -> Double {
        var crossings: [Double] = []
        for i in 1..<x.count where x[i - 1] < 0 && x[i] >= 0 {
            crossings.append(Double(i - 1) + Double(-x[i - 1] / (x[i] - x[i - 1])))
        }
        return Double(crossings.count - 1) / (crossings.last! - crossings.first!) * 48_000
    }

    @Test func clockOffsetStretchesTimeAndLowersTones() {
        let x = Self.tone(18_000, seconds: 0.3)
        let t = ChannelSimulator.trial(x, channel: Channel(clockPPM: 1000), seed: 7)
        let clean = ChannelSimulator.trial(x, channel: Channel(), seed: 7)
        #expect(abs(Double(t.samples.count) - Double(clean.samples.count) * 1.001) < 2)
        let beacon = Array(t.samples[(t.beaconStart + 1000)..<(t.beaconStart + 13_000)])
        #expect(abs(Self.frequency(beacon) - 18_000 / 1.001) < 0.5)
        #expect(abs(Self.power(beacon) / 0.125 - 1) < 0.01)   // flat at 18 kHz
    }

    @Test func lowPassIsAFourthOrderButterworth() {
        for (cutoff, hz) in [(16_000.0, 19_000.0), (18_000.0, 19_000.0), (16_000.0, 15_000.0)] {
            let t = ChannelSimulator.trial(Self.tone(hz, seconds: 0.3), channel: Channel(lowPassHz: cutoff), seed: 1)
            let measured = 10 * log10(Self.power(t.samples[(t.beaconStart + 2400)..<(t.beaconStart + 12_000)]) / 0.125)
            // |H|² = 1 / (1 + (Ω/Ωc)^8) on the bilinear transform's warped axis Ω = tan(πf/fs): steeper
            // than the analog prototype near Nyquist (−18 dB at 19 kHz for a 16 kHz cut-off).
            let warped = tan(Double.pi * hz / 48_000) / tan(Double.pi * cutoff / 48_000)
            let expected = -10 * log10(1 + pow(warped, 8))
            #expect(abs(measured - expected) < 0.3, "\(cutoff) Hz at \(hz): \(measured) dB, expected \(expected)")
        }
    }

    @Test func tiltFallsByItsSlopeAboveItsStart() {
        let t = ChannelSimulator.trial(Self.tone(19_000, seconds: 0.3), channel: Channel(tiltDBPerKHz: 3), seed: 1)
        let measured = 10 * log10(Self.power(t.samples[(t.beaconStart + 2400)..<(t.beaconStart + 12_000)]) / 0.125)
        #expect(abs(measured - (-12)) < 0.3, "\(measured) dB")
    }

    @Test func roomDecaysByItsRT60() {
        var random = SeededGenerator(seed: 3)
        let h = ChannelSimulator.roomImpulseResponse(rt60: 0.5, reverbToDirectDB: 0, using: &random)
        let tail = h.dropFirst(96)
        #expect(abs(tail.reduce(0) { $0 + $1 * $1 } - 1) < 1e-9)   // as much energy as the direct path
        let early = tail.prefix(2400).reduce(0) { $0 + $1 * $1 }
        let late = tail.dropFirst(21_600 - 96).prefix(2400).reduce(0) { $0 + $1 * $1 }
        // 0.45 s apart: −54 dB of energy at an RT60 of 0.5 s.
        #expect(abs(10 * log10(late / early) + 54) < 3)
    }

    @Test func noiseIsAtTheAskedSNRAndSeedsReplay() {
        let x = Self.tone(17_000, seconds: 0.3)
        let a = ChannelSimulator.trial(x, channel: Channel(snrDB: -10), seed: 11)
        let b = ChannelSimulator.trial(x, channel: Channel(snrDB: -10), seed: 11)
        let c = ChannelSimulator.trial(x, channel: Channel(snrDB: -10), seed: 12)
        #expect(a.samples == b.samples && a.beaconStart == b.beaconStart)
        #expect(a.samples != c.samples)
        let silence = a.samples.prefix(a.beaconStart)
        #expect(abs(10 * log10(0.125 / Self.power(silence)) - (-10)) < 0.3)
    }
}
