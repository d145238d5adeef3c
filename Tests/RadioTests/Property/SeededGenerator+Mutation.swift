import SplitMix

extension SeededGenerator {
    /// A random edit of `input`: flipped, replaced, inserted or deleted bytes, a changed length
    /// byte, truncation, random tail, or a splice with another sample.
    mutating func mutate(_ input: [UInt8], splice other: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0..<Int.random(in: 1...4, using: &self) {
            let index = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &self)
            switch Int.random(in: 0..<8, using: &self) {
            case 0 where !bytes.isEmpty: bytes[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &self)
            case 1 where !bytes.isEmpty: bytes[index] = UInt8.random(in: 0...255, using: &self)
            case 2: bytes.insert(UInt8.random(in: 0...255, using: &self), at: index)
            case 3 where !bytes.isEmpty: bytes.remove(at: index)
            case 4 where bytes.count > 1: bytes[1] = UInt8.random(in: 0...255, using: &self)  // a length field
            case 5: bytes = Array(bytes.prefix(index))
            case 6: bytes += self.bytes(Int.random(in: 1...40, using: &self))
            default: bytes = Array(bytes.prefix(index)) + other.dropFirst(Int.random(in: 0...other.count, using: &self))
            }
        }
        return bytes
    }
}
