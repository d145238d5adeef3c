/// The byte and tone layout of a ggwave variable-length transmission, shared by the encoder and the
/// decoder. After the start marker come chunks of 3 bytes: first the length block (the payload length
/// and its 2 RS check bytes), then the payload followed by its RS check bytes, zero-padded to a whole
/// chunk. Each byte is sent as two nibbles, low first; nibble k of a chunk with value v is a tone at
/// bin `freqStart + 16k + v`.
enum GGWaveSymbols {
    /// Everything sent between the markers, padded to whole chunks.
    static func encodedBytes(payload: [UInt8]) -> [UInt8] {
        let length = payload.count
        let lengthBlock = ReedSolomon(messageLength: 1, eccLength: GGWave.lengthBlockBytes - 1)
            .encode([UInt8(length)])
        let data = ReedSolomon(messageLength: length, eccLength: GGWave.eccBytes(length: length))
            .encode(payload)
        var bytes = lengthBlock + data
        let padded = GGWave.txCount(payloadLength: length) * GGWave.bytesPerTx
        bytes += [UInt8](repeating: 0, count: padded - bytes.count)
        return bytes
    }

    /// Tone offsets (bins above `freqStart`) of one chunk.
    static func chunkTones(_ chunk: ArraySlice<UInt8>) -> [Int] {
        var tones: [Int] = []
        tones.reserveCapacity(GGWave.nibblesPerTx)
        for (j, byte) in chunk.enumerated() {
            tones.append((2 * j) * 16 + Int(byte & 0x0f))
            tones.append((2 * j + 1) * 16 + Int(byte >> 4))
        }
        return tones
    }

    /// Tone offsets of the start marker: in pair i (bins 2i, 2i+1) the lower bin for even i, the
    /// upper for odd i. The end marker uses the other bin of every pair.
    static func markerTones(start: Bool) -> [Int] {
        (0..<GGWave.markerPairs).map { i in
            let upper = (i % 2 == 1) == start
            return 2 * i + (upper ? 1 : 0)
        }
    }
}
