import Foundation
import NearbyProtocol
import SystemCall

/// Shared fixtures: the api_key, epoch and message of the test vectors in docs/protocol.md.
public enum FrameFixture {
    public static let apiKey = "AIzaSy-example-key"
    public static let epoch: UInt32 = 2_900_000
    public static let codec = FrameCodec(apiKey: apiKey, rotateSeconds: 600)
    public static let greeting = Message(namespace: "livingroom", type: "greeting", content: Array("hello".utf8))
    public static let t0 = ContinuousClock.now

    public static func reassembler(epoch: UInt32 = epoch, limits: Reassembler.Limits = .init()) -> Reassembler {
        Reassembler(codec: codec, epoch: epoch, limits: limits)
    }

    /// The manufacturer-specific data of an AD payload: what the scanner hands over (company id first).
    public static func manufacturerData(_ ad: [UInt8]) -> [UInt8] { Array(ad[2...]) }

    public static let peer = SourceID.ble(address: 0x00AA_0102_0042)
}

extension Array where Element == UInt8 {
    public var hex: String { Hex.lower(self) }
}
