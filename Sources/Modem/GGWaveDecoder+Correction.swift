/// From the chunks' spectra to a payload that passes the Reed–Solomon code.
///
/// Every extra way of reading a message is another chance for a wrong word to pass the code, so
/// each one is bounded: the chance that a random word passes it stays below that of the plain
/// errors-only decode ggwave itself does (for 6 check bytes and 22 bytes, C(22,3)·255³/256⁶ ≈ 9e−5).
extension GGWaveDecoder {
    /// Nibbles whose runner-up the Chase search may put in: the least confident ones, every subset
    /// (2⁸ = 256 words).
    static let chaseNibbles = 8

    /// The payload of `heard` (chunk 0 is the length block), or nil.
    ///
    /// As heard, errors only and then with erasures (`correct`). Then — only where the code has ≥ 6
    /// check bytes to spare, payloads of 15 bytes and more: with 2 or 4 a second try lets too
    /// much noise through — the readings for a room: each chunk's echo of the one before taken
    /// out (`dereverberated`), and the chunks read late (`lateReading`, without their first 16 ms,
    /// where the echo of the chunk before lands), plain and with the echo taken out. Last, a
    /// Chase search on each reading: the least confident nibbles replaced by their runner-up,
    /// accepted only when the code then fixes at most ecc/2 − 1 bytes (a faded tone or a loud echo
    /// leaves the right tone second more often than not).
    static func decode(_ heard: [ChunkSpectrum], payloadLength length: Int,
                       lateReading: () -> [ChunkSpectrum]?) -> ReedSolomon.Decoded? {
        let ecc = GGWave.eccBytes(length: length)
        let n = length + ecc
        func word(_ spectra: [ChunkSpectrum]) -> [ChunkSpectrum.Byte] { Array(spectra[1...].flatMap(\.bytes)[0..<n]) }
        if let d = correct(word(heard), messageLength: length, ecc: ecc) { return d }
        guard ecc >= 6, looksLikeAMessage(heard, bytes: n) else { return nil }
        var readings = [heard, ChunkSpectrum.dereverberated(heard)]
        if let d = correct(word(readings[1]), messageLength: length, ecc: ecc) { return d }
        if let late = lateReading() {
            for reading in [late, ChunkSpectrum.dereverberated(late)] {
                if let d = correct(word(reading), messageLength: length, ecc: ecc) { return d }
                readings.append(reading)
            }
        }
        for reading in readings {
            if let d = chase(Array(reading[1...]), messageLength: length, ecc: ecc) { return d }
        }
        return nil
    }

    /// Whether at least half the codeword's nibbles stand out (best ≥ 2 × runner-up): true of a
    /// message the extra readings can save (a few faded or echoed tones among clear ones), and of
    /// noise only about one nibble in ten is, so noise that passed the marker tests by chance costs
    /// no extra readings.
    static func looksLikeAMessage(_ chunks: [ChunkSpectrum], bytes n: Int) -> Bool {
        var clear = 0, total = 0
        for chunk in chunks[1...] {
            for nibble in chunk.nibbles.prefix(2 * min(GGWave.bytesPerTx, n - total / 2)) {
                total += 1
                if nibble.confidence >= 2 { clear += 1 }
            }
        }
        return 2 * clear >= total
    }

    /// Errors-only first, as ggwave does. Then, when that fails and the code is long enough, the
    /// least confident bytes as erasures — but only accepted when nothing outside them needed
    /// fixing and at least `spareCheckBytes` check bytes were left over to confirm it, so that the
    /// chance of noise passing is about 256^−spareCheckBytes per try.
    static func correct(_ word: [ChunkSpectrum.Byte], messageLength: Int, ecc: Int) -> ReedSolomon.Decoded? {
        let rs = ReedSolomon(messageLength: messageLength, eccLength: ecc)
        let values = word.map(\.value)
        if let d = rs.decode(values) { return d }
        let spareCheckBytes = 6
        guard ecc > spareCheckBytes else { return nil }
        let byConfidence = word.indices.sorted { word[$0].confidence < word[$1].confidence }
        for erasures in stride(from: 2, through: ecc - spareCheckBytes, by: 2) {
            if let d = rs.decode(values, erasures: Array(byConfidence.prefix(erasures))), d.errorsOutsideErasures == 0 {
                return d
            }
        }
        return nil
    }

    /// Chase decoding: every subset of the `chaseNibbles` least confident nibbles of the codeword
    /// (the bytes of `chunks`, first messageLength + ecc) replaced by its runner-up, each word
    /// decoded errors-only and accepted only with at most ecc/2 − 1 bytes fixed. A random word
    /// passes one try with chance C(n, t)·255^t/256^ecc (t = ecc/2 − 1: 5e−8 for 16-byte
    /// payloads), so the 255 tries of one reading together stay below errors-only decoding's own chance.
    static func chase(_ chunks: [ChunkSpectrum], messageLength: Int, ecc: Int) -> ReedSolomon.Decoded? {
        let n = messageLength + ecc
        var values: [UInt8] = []
        var nibbles: [(byte: Int, shift: UInt8, runnerUp: UInt8, confidence: Float)] = []
        for chunk in chunks {
            let choices = chunk.nibbles
            for j in 0..<GGWave.bytesPerTx where values.count < n {
                let (low, high) = (choices[2 * j], choices[2 * j + 1])
                nibbles.append((values.count, 0, low.runnerUp, low.confidence))
                nibbles.append((values.count, 4, high.runnerUp, high.confidence))
                values.append(low.value | high.value << 4)
            }
        }
        guard values.count == n else { return nil }
        let doubtful = nibbles.indices.sorted { nibbles[$0].confidence < nibbles[$1].confidence }.prefix(chaseNibbles)
        let rs = ReedSolomon(messageLength: messageLength, eccLength: ecc)
        let maxFixed = ecc / 2 - 1
        for mask in 1..<(1 << doubtful.count) {
            var word = values
            var flipped = Set<Int>()
            for (bit, i) in doubtful.enumerated() where mask & (1 << bit) != 0 {
                let nib = nibbles[i]
                word[nib.byte] = word[nib.byte] & ~(0x0f << nib.shift) | nib.runnerUp << nib.shift
                flipped.insert(nib.byte)
            }
            if var d = rs.decode(word), d.corrected <= maxFixed {
                d.corrected += flipped.count
                return d
            }
        }
        return nil
    }
}
