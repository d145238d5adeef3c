import Foundation
@testable import Gateway

/// Shared fixtures: the api_key, epoch and message of the test vectors in docs/protocol.md.
enum FrameFixture {
    static let apiKey = "AIzaSy-example-key"
    static let epoch: UInt32 = 2_900_000
    static let codec = FrameCodec(apiKey: apiKey, rotateSeconds: 600)
    static let greeting = Message(namespace: "livingroom", type: "greeting", content: Array("hello".utf8))
    static let t0 = ContinuousClock.now

    static func reassembler(epoch: UInt32 = epoch, limits: Reassembler.Limits = .init()) -> Reassembler {
        Reassembler(codec: codec, epoch: epoch, limits: limits)
    }

    /// The manufacturer-specific data of an AD payload: what the scanner hands over (company id first).
    static func manufacturerData(_ ad: [UInt8]) -> [UInt8] { Array(ad[2...]) }

    static let peer = SourceID.ble(address: 0x00AA_0102_0042)
}

extension Array where Element == UInt8 {
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
