/// The RIFF/WAVE byte format, without I/O.
enum WAVParser {
    private static let formatPCM: UInt16 = 1
    private static let formatFloat: UInt16 = 3
    private static let formatExtensible: UInt16 = 0xFFFE

    static func parse(_ b: [UInt8], path: String) throws(WAVError) -> WAVAudio {
        func fail(_ kind: WAVError.Kind) -> WAVError { WAVError(path: path, kind: kind) }
        guard !b.isEmpty else { throw fail(.empty) }
        guard b.count >= 12 else {
            throw b.starts(with: Array("RIFF".utf8)) ? fail(.truncated("no room for the WAVE header"))
                : fail(.notWAV("shorter than a RIFF header"))
        }
        guard b[0..<4].elementsEqual("RIFF".utf8) else { throw fail(.notWAV("no RIFF signature")) }
        guard b[8..<12].elementsEqual("WAVE".utf8) else { throw fail(.notWAV("RIFF type is not WAVE")) }

        var format: (tag: UInt16, channels: Int, rate: Int, bits: Int)?
        var offset = 12
        while offset + 8 <= b.count {
            let id = String(decoding: b[offset..<(offset + 4)], as: UTF8.self)
            let declared = Int(le32(b, offset + 4))
            let bodyStart = offset + 8
            let available = b.count - bodyStart
            if id == "data" {
                guard let fmt = format else { throw fail(.notWAV("data chunk before fmt chunk")) }
                // Streaming writers leave 0 or 0xFFFFFFFF when they could not go back to fix the size.
                var size = declared
                if declared == 0 || declared == 0xFFFF_FFFF { size = available }
                guard size <= available else {
                    throw fail(.truncated("data chunk declares \(declared) bytes, \(available) present"))
                }
                return try decodeSamples(b[bodyStart..<(bodyStart + size)], format: fmt, path: path)
            }
            guard declared <= available else {
                throw fail(.truncated("'\(id)' chunk declares \(declared) bytes, \(available) present"))
            }
            if id == "fmt " {
                guard declared >= 16 else { throw fail(.notWAV("fmt chunk of \(declared) bytes")) }
                var tag = le16(b, bodyStart)
                let channels = Int(le16(b, bodyStart + 2))
                let rate = Int(le32(b, bodyStart + 4))
                let bits = Int(le16(b, bodyStart + 14))
                if tag == formatExtensible {
                    guard declared >= 40 else { throw fail(.notWAV("extensible fmt chunk of \(declared) bytes")) }
                    tag = le16(b, bodyStart + 24)   // first two bytes of the sub-format GUID
                }
                guard channels > 0 else { throw fail(.unsupportedFormat("0 channels")) }
                guard rate > 0 else { throw fail(.unsupportedFormat("sample rate 0")) }
                format = (tag, channels, rate, bits)
            }
            offset = bodyStart + declared + (declared & 1)   // chunks are padded to even sizes
        }
        throw format == nil ? fail(.notWAV("no fmt chunk")) : fail(.truncated("no data chunk"))
    }

    private static func decodeSamples(
        _ data: ArraySlice<UInt8>, format: (tag: UInt16, channels: Int, rate: Int, bits: Int), path: String
    ) throws(WAVError) -> WAVAudio {
        let bytesPerSample: Int
        let sample: (Int) -> Float
        let base = data.startIndex
        switch (format.tag, format.bits) {
        case (formatPCM, 8):
            bytesPerSample = 1
            sample = { i in (Float(data[base + i]) - 128) / 128 }
        case (formatPCM, 16):
            bytesPerSample = 2
            sample = { i in Float(Int16(bitPattern: le16(data, base + 2 * i))) / 32768 }
        case (formatPCM, 24):
            bytesPerSample = 3
            sample = { i in
                let o = base + 3 * i
                let v = Int32(bitPattern: UInt32(data[o]) << 8 | UInt32(data[o + 1]) << 16 | UInt32(data[o + 2]) << 24)
                return Float(v >> 8) / 8_388_608
            }
        case (formatPCM, 32):
            bytesPerSample = 4
            sample = { i in Float(Int32(bitPattern: le32(data, base + 4 * i))) / 2_147_483_648 }
        case (formatFloat, 32):
            bytesPerSample = 4
            sample = { i in Float(bitPattern: le32(data, base + 4 * i)) }
        case (formatFloat, 64):
            bytesPerSample = 8
            sample = { i in
                let lo = UInt64(le32(data, base + 8 * i)), hi = UInt64(le32(data, base + 8 * i + 4))
                return Float(Double(bitPattern: hi << 32 | lo))
            }
        default:
            throw WAVError(path: path, kind: .unsupportedFormat("format tag \(format.tag), \(format.bits) bits per sample"))
        }
        let frameBytes = bytesPerSample * format.channels
        let frames = data.count / frameBytes
        var mono = [Float](repeating: 0, count: frames)
        let scale = 1 / Float(format.channels)
        for f in 0..<frames {
            var acc: Float = 0
            for c in 0..<format.channels { acc += sample(f * format.channels + c) }
            // NaN or infinity from a float file would poison every later computation.
            mono[f] = acc.isFinite ? acc * scale : 0
        }
        return WAVAudio(sampleRate: format.rate, channels: format.channels, samples: mono)
    }

    static func serialize(_ samples: [Float], sampleRate: Int, format: WAVSampleFormat) -> [UInt8] {
        let bytesPerSample = format == .pcm16 ? 2 : 4
        let dataBytes = samples.count * bytesPerSample
        var out: [UInt8] = []
        out.reserveCapacity(44 + dataBytes)
        out += Array("RIFF".utf8); put32(&out, UInt32(36 + dataBytes)); out += Array("WAVE".utf8)
        out += Array("fmt ".utf8); put32(&out, 16)
        put16(&out, format == .pcm16 ? formatPCM : formatFloat)
        put16(&out, 1)
        put32(&out, UInt32(sampleRate))
        put32(&out, UInt32(sampleRate * bytesPerSample))
        put16(&out, UInt16(bytesPerSample))
        put16(&out, UInt16(bytesPerSample * 8))
        out += Array("data".utf8); put32(&out, UInt32(dataBytes))
        for s in samples {
            switch format {
            case .pcm16: put16(&out, UInt16(bitPattern: pcm16(s)))
            case .float32: put32(&out, s.bitPattern)
            }
        }
        return out
    }

    /// Rounds and clips to 16 bits; NaN becomes silence.
    static func pcm16(_ s: Float) -> Int16 {
        guard s.isFinite else { return 0 }
        return Int16(max(-32768, min(32767, (s * 32768).rounded())))
    }

    private static func le16<C: Collection<UInt8>>(_ b: C, _ i: C.Index) -> UInt16 where C.Index == Int {
        UInt16(b[i]) | UInt16(b[i + 1]) << 8
    }
    private static func le32<C: Collection<UInt8>>(_ b: C, _ i: C.Index) -> UInt32 where C.Index == Int {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }
    private static func put16(_ out: inout [UInt8], _ v: UInt16) { out += [UInt8(v & 0xff), UInt8(v >> 8)] }
    private static func put32(_ out: inout [UInt8], _ v: UInt32) {
        out += [UInt8(v & 0xff), UInt8((v >> 8) & 0xff), UInt8((v >> 16) & 0xff), UInt8(v >> 24)]
    }
}
