import ArgumentParser
import NearbyProtocol

/// `bench frame-crypto`: what the frame code asks of the hash per frame, call by call (key derivation,
/// message id, one keystream block, chunk tag, subscriber-beacon hash): ns per call, best of
/// `repetitions` passes, and allocator calls per call when `tools/bench/malloc_count.so` is preloaded.
/// Measured before and after the hash implementation changed (docs/footprint.md, "Frame crypto").
struct BenchFrameCryptoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "frame-crypto", abstract: "Time the keyed hashes the frame code calls, per call.")

    @Option(help: "Calls per timed pass.") var calls = 200_000
    @Option(help: "Timed passes per row; the best counts.") var repetitions = 5

    func run() {
        let key = EpochKey(apiKey: Array("bench-api-key-0123456789".utf8), epoch: 1_000_000)
        // A typical body (nsLen, typeLen, "home", "doorbell", 40 bytes of content) and one BLE chunk.
        var body: [UInt8] = [4, 8] + Array("homedoorbell".utf8) + (0..<40).map { UInt8($0) }
        let chunk = Array(body[0..<18])
        var rows: [[String: Any]] = []
        func row(_ name: String, _ call: (Int) -> Int) {
            let clock = ContinuousClock()
            var best = Double.infinity
            for _ in 0..<repetitions {
                let start = clock.now
                var sum = 0
                for i in 0..<calls { sum &+= call(i) }
                best = min(best, (clock.now - start).seconds)
                benchConsume(sum)
            }
            var r: [String: Any] = ["name": name, "ns_per_call": best / Double(calls) * 1e9]
            if let counter = MallocCounter() {
                let n = min(calls, 10_000)
                let c = counter.calls { var sum = 0; for i in 0..<n { sum &+= call(i) }; benchConsume(sum) }
                r["allocs_per_call"] = Double(c) / Double(n)
            }
            rows.append(r)
        }
        row("key_derive") { Int(EpochKey(apiKey: Array("bench-api-key-0123456789".utf8), epoch: UInt32($0)).epoch) }
        row("message_id") { i in body[2] = UInt8(truncatingIfNeeded: i); return Int(body.withUnsafeBytes { key.messageID(body: $0) }) }
        var block = [UInt8](repeating: 0, count: 32)
        row("keystream_block") { i in
            block.withUnsafeMutableBufferPointer { key.applyKeystream($0, id: UInt32(truncatingIfNeeded: i), offset: 0) }
            return Int(block[0])
        }
        row("chunk_tag") { i in Int(chunk.withUnsafeBytes { key.chunkTag(sequence: 0x01, id: UInt32(truncatingIfNeeded: i), ciphertext: $0) }) }
        row("namespace_hash") { _ in Int(truncatingIfNeeded: key.subscriberBeacon(namespace: "home", type: "doorbell").rawValue) }
        BenchJSON.print(["rows": rows, "allocations_counted": MallocCounter() != nil])
    }
}
