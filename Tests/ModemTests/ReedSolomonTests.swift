import Testing
@testable import Modem

@Suite struct ReedSolomonTests {
    @Test func lengthBlockMatchesGGWaveLayout() {
        // The length block is RS(1 data byte, 2 check bytes); with roots α⁰, α¹ its check bytes for
        // length L are L·(α⁰+α¹) = 3L and L·α⁰·α¹ = 2L in GF(256).
        let rs = ReedSolomon(messageLength: 1, eccLength: 2)
        #expect(rs.encode([5]) == [5, GF256.mul(5, 3), GF256.mul(5, 2)])
        #expect(rs.encode([140]) == [140, GF256.mul(140, 3), GF256.mul(140, 2)])
    }

    @Test func codewordsHaveZeroSyndromes() {
        var random = TestRandom(seed: 1)
        for length in [1, 3, 4, 16, 64, 140] {
            let ecc = GGWave.eccBytes(length: length)
            let rs = ReedSolomon(messageLength: length, eccLength: ecc)
            let message = random.bytes(length)
            let decoded = rs.decode(rs.encode(message))
            #expect(decoded == .init(message: message, corrected: 0))
        }
    }

    @Test func correctsUpToHalfTheCheckBytesOfErrors() {
        var random = TestRandom(seed: 2)
        for length in [1, 2, 5, 16, 64, 140] {
            let ecc = GGWave.eccBytes(length: length)
            let rs = ReedSolomon(messageLength: length, eccLength: ecc)
            for trial in 0..<40 {
                let message = random.bytes(length)
                var word = rs.encode(message)
                let errors = trial % (ecc / 2 + 1)
                let positions = Array((0..<word.count).shuffled(using: &random).prefix(errors))
                for p in positions { word[p] ^= UInt8.random(in: 1...255, using: &random) }
                let decoded = rs.decode(word)
                #expect(decoded?.message == message, "length \(length), \(errors) errors")
                #expect(decoded?.corrected == errors)
            }
        }
    }

    @Test func correctsErrorsAndErasuresTogether() {
        var random = TestRandom(seed: 3)
        for length in [16, 64, 140] {
            let ecc = GGWave.eccBytes(length: length)
            let rs = ReedSolomon(messageLength: length, eccLength: ecc)
            for trial in 0..<40 {
                let message = random.bytes(length)
                var word = rs.encode(message)
                let erasures = trial % (ecc + 1)
                let errors = (ecc - erasures) / 2
                let positions = Array((0..<word.count).shuffled(using: &random).prefix(erasures + errors))
                for p in positions { word[p] ^= UInt8.random(in: 1...255, using: &random) }
                let decoded = rs.decode(word, erasures: Array(positions.prefix(erasures)))
                #expect(decoded?.message == message, "length \(length): \(erasures) erasures + \(errors) errors")
            }
        }
    }

    @Test func refusesWordsBeyondReach() {
        var random = TestRandom(seed: 4)
        let rs = ReedSolomon(messageLength: 64, eccLength: GGWave.eccBytes(length: 64))
        var refused = 0
        for _ in 0..<50 {
            var word = rs.encode(random.bytes(64))
            for p in (0..<word.count).shuffled(using: &random).prefix(20) { word[p] ^= 0x5a }
            if rs.decode(word) == nil { refused += 1 }
        }
        // 20 errors against 26 check bytes: far beyond 13; a miscorrection is possible but rare.
        #expect(refused >= 48)
    }
}
