/// Systematic Reed–Solomon code over GF(2⁸) as ggwave uses it: the codeword is the message followed
/// by `eccLength` check bytes; the generator polynomial has the roots α⁰ … α^(eccLength−1); the first
/// byte is the coefficient of the highest power. Decoding corrects e errors and f erasures while
/// 2e + f ≤ eccLength (Berlekamp–Massey, Chien search, Forney).
struct ReedSolomon: Sendable {
    let messageLength: Int
    let eccLength: Int
    /// g(x) = Π (x − αⁱ), highest power first, monic.
    private let generator: [UInt8]

    init(messageLength: Int, eccLength: Int) {
        precondition(messageLength > 0 && eccLength > 0 && messageLength + eccLength < 256)
        self.messageLength = messageLength
        self.eccLength = eccLength
        var g: [UInt8] = [1]
        for i in 0..<eccLength {
            // g · (x + αⁱ)
            let root = GF256.alphaPow(i)
            var next = [UInt8](repeating: 0, count: g.count + 1)
            for (j, c) in g.enumerated() {
                next[j] ^= c
                next[j + 1] ^= GF256.mul(c, root)
            }
            g = next
        }
        generator = g
    }

    /// The check bytes for `message` (exactly `messageLength` bytes).
    func checkBytes(_ message: some Collection<UInt8>) -> [UInt8] {
        precondition(message.count == messageLength)
        var work = Array(message) + [UInt8](repeating: 0, count: eccLength)
        for i in 0..<messageLength {
            let coef = work[i]
            if coef == 0 { continue }
            for j in 1..<generator.count {
                work[i + j] ^= GF256.mul(generator[j], coef)
            }
        }
        return Array(work[messageLength...])
    }

    /// Message followed by its check bytes.
    func encode(_ message: some Collection<UInt8>) -> [UInt8] {
        Array(message) + checkBytes(message)
    }

    struct Decoded: Equatable {
        var message: [UInt8]
        /// Symbols that were wrong and got corrected (erasures included when they were wrong).
        var corrected: Int
        /// Positions changed that were not given as erasures.
        var errorsOutsideErasures: Int = 0
    }

    /// Decodes a received codeword of `messageLength + eccLength` bytes; `erasures` are indices of
    /// bytes known to be unreliable. Returns nil when the word is not within reach of a codeword.
    func decode(_ received: [UInt8], erasures: [Int] = []) -> Decoded? {
        let n = messageLength + eccLength
        guard received.count == n, erasures.count <= eccLength else { return nil }
        var word = received
        for e in erasures {
            guard e >= 0 && e < n else { return nil }
            word[e] = 0
        }
        let syndromes = self.syndromes(word)
        if syndromes.allSatisfy({ $0 == 0 }) {
            return Decoded(message: Array(word[0..<messageLength]), corrected: 0)
        }
        // Locator of a position i (coefficient of x^(n−1−i)) is X = α^(n−1−i).
        let erasureLocators = erasures.map { GF256.alphaPow(n - 1 - $0) }
        guard let locator = berlekampMassey(syndromes: syndromes, erasureLocators: erasureLocators) else {
            return nil
        }
        let degree = locator.count - 1
        guard 2 * (degree - erasures.count) + erasures.count <= eccLength else { return nil }

        // Chien search: positions whose X⁻¹ is a root of Λ.
        var positions: [Int] = []
        for i in 0..<n {
            let xInv = GF256.alphaPow(-(n - 1 - i))
            if evaluateLow(locator, at: xInv) == 0 { positions.append(i) }
        }
        guard positions.count == degree else { return nil }

        // Ω(x) = S(x)·Λ(x) mod x^eccLength, coefficients lowest power first.
        var omega = [UInt8](repeating: 0, count: eccLength)
        for i in 0..<eccLength {
            var acc: UInt8 = 0
            for j in 0...min(i, degree) { acc ^= GF256.mul(locator[j], syndromes[i - j]) }
            omega[i] = acc
        }
        // Λ'(x): in characteristic 2 only odd powers survive.
        var derivative = [UInt8](repeating: 0, count: max(degree, 1))
        for j in stride(from: 1, through: degree, by: 2) { derivative[j - 1] = locator[j] }

        var corrected = 0
        var outside = 0
        for pos in positions {
            let x = GF256.alphaPow(n - 1 - pos)
            let xInv = GF256.inverse(x)
            let denominator = evaluateLow(derivative, at: xInv)
            if denominator == 0 { return nil }
            // Forney with first consecutive root α⁰: e = X · Ω(X⁻¹) / Λ'(X⁻¹).
            let magnitude = GF256.mul(x, GF256.div(evaluateLow(omega, at: xInv), denominator))
            if magnitude != 0 {
                corrected += 1
                if !erasures.contains(pos) { outside += 1 }
            }
            word[pos] ^= magnitude
        }
        // A decoder that found a locator can still land off the code; check before trusting it.
        guard self.syndromes(word).allSatisfy({ $0 == 0 }) else { return nil }
        return Decoded(message: Array(word[0..<messageLength]), corrected: corrected, errorsOutsideErasures: outside)
    }

    /// S_j = r(α^j), j = 0 … eccLength−1.
    private func syndromes(_ word: [UInt8]) -> [UInt8] {
        (0..<eccLength).map { j in
            let a = GF256.alphaPow(j)
            var y: UInt8 = 0
            for c in word { y = GF256.mul(y, a) ^ c }
            return y
        }
    }

    /// Errors-and-erasures Berlekamp–Massey. Returns Λ(x) lowest power first (Λ₀ = 1), trimmed.
    private func berlekampMassey(syndromes s: [UInt8], erasureLocators: [UInt8]) -> [UInt8]? {
        // Start from the erasure locator Γ(x) = Π (1 + X_k x).
        var lambda: [UInt8] = [1]
        for x in erasureLocators {
            var next = [UInt8](repeating: 0, count: lambda.count + 1)
            for (j, c) in lambda.enumerated() {
                next[j] ^= c
                next[j + 1] ^= GF256.mul(c, x)
            }
            lambda = next
        }
        var previous = lambda
        var length = erasureLocators.count
        var shift = 1
        var lastDiscrepancy: UInt8 = 1
        for r in erasureLocators.count..<eccLength {
            var delta: UInt8 = 0
            for j in 0..<lambda.count where r - j >= 0 {
                delta ^= GF256.mul(lambda[j], s[r - j])
            }
            if delta == 0 {
                shift += 1
                continue
            }
            let scale = GF256.div(delta, lastDiscrepancy)
            var candidate = lambda
            let needed = previous.count + shift
            if candidate.count < needed { candidate += [UInt8](repeating: 0, count: needed - candidate.count) }
            for (j, c) in previous.enumerated() { candidate[j + shift] ^= GF256.mul(scale, c) }
            if 2 * length <= r + erasureLocators.count {
                previous = lambda
                length = r + erasureLocators.count + 1 - length
                lastDiscrepancy = delta
                shift = 1
            } else {
                shift += 1
            }
            lambda = candidate
        }
        while lambda.count > 1 && lambda.last == 0 { lambda.removeLast() }
        guard lambda.count - 1 == length else { return nil }
        return lambda
    }

    /// p(x) with coefficients lowest power first.
    private func evaluateLow(_ p: [UInt8], at x: UInt8) -> UInt8 {
        var y: UInt8 = 0
        for c in p.reversed() { y = GF256.mul(y, x) ^ c }
        return y
    }
}
