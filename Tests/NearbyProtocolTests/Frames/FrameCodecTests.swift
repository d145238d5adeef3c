import Foundation
import Testing
import TestSupport
@testable import NearbyProtocol

@Suite struct FrameCodecTests {
    let codec = FrameFixture.codec
    let epoch = FrameFixture.epoch

    // The vectors of docs/protocol.md, computed there by an independent Python implementation.
    @Test func bleVectorsMatchTheProtocolDocument() throws {
        let adverts = try codec.bleAdverts(for: FrameFixture.greeting, epoch: epoch)
        #expect(adverts.map(\.hex) == [
            "1effffff4501e0c6646592638e80bc899b550458e9f7b776b1e6fa21e4bdcc",
            "11ffffff4511e0c66465fd07b6c438c07716",
        ])
        let small = try codec.bleAdverts(for: Message(namespace: "tv", type: "on", content: []), epoch: epoch)
        #expect(small.map(\.hex) == ["11ffffff4500cd15f4cac1fd3fb33efc8bad"])
    }

    @Test func audioVectorIsOnePayload() throws {
        let payloads = try codec.audioPayloads(for: FrameFixture.greeting, epoch: epoch)
        #expect(payloads.map(\.hex) == ["4500e0c66465fd2e8e80bc899b550458e9f7b776b1e6fa21e4bdccb6c438c07716"])
    }

    @Test func subscriberBeaconVectors() {
        #expect(codec.subscriberBeacon(namespace: "livingroom", type: "*", epoch: epoch).hex == "0cffffff532f0753c567373e91")
        #expect(codec.subscriberBeacon(namespace: "livingroom", type: "greeting", epoch: epoch).hex == "0cffffff5338820dee94ac7b22")
    }

    @Test func epochIsUnixTimeOverRotation() {
        #expect(codec.epoch(at: Date(timeIntervalSince1970: 1_740_000_000)) == 2_900_000)
        #expect(codec.epoch(at: Date(timeIntervalSince1970: 1_740_000_599)) == 2_900_000)
        #expect(codec.epoch(at: Date(timeIntervalSince1970: 1_740_000_600)) == 2_900_001)
        #expect(codec.epoch(at: Date(timeIntervalSince1970: -5)) == 0)
        #expect(codec.start(of: 2_900_001) == Date(timeIntervalSince1970: 1_740_000_600))
    }

    @Test func messageIDChangesEveryEpochAndIsSharedByBothMediums() throws {
        let ids = try (0..<5).map { try codec.messageID(for: FrameFixture.greeting, epoch: epoch + $0) }
        #expect(Set(ids).count == 5)
        let ble = try codec.bleAdverts(for: FrameFixture.greeting, epoch: epoch)
        let audio = try codec.audioPayloads(for: FrameFixture.greeting, epoch: epoch)
        #expect(ble[0][6..<10] == audio[0][2..<6])
        // The same ciphertext on both mediums, only cut differently; the chunk tags differ.
        #expect(Array(ble[0][12...] + ble[1][12...]) == Array(audio[0][8...]))
    }

    @Test(arguments: Medium.allCases)
    func everyFrameFitsItsMedium(medium: Medium) throws {
        for size in [0, 1, 17, 18, 100, 130, 131, 200] {
            let message = Message(namespace: "ns", type: "t", content: Array(repeating: 0x41, count: min(size, medium.maxContentBytes(namespace: "ns", type: "t"))))
            switch medium {
            case .ble:
                for ad in try codec.bleAdverts(for: message, epoch: epoch) {
                    #expect(ad.count <= 31)
                    #expect(Int(ad[0]) == ad.count - 1)
                }
            case .audio:
                for payload in try codec.audioPayloads(for: message, epoch: epoch) { #expect(payload.count <= 140) }
            }
        }
    }

    @Test func smallMessagesAreOneAudioPayloadAndOneAdvertWhenTheyFit() throws {
        let audio = Message(namespace: "livingroom", type: "greeting", content: Array(repeating: 1, count: 130 - 18))
        #expect(try codec.audioPayloads(for: audio, epoch: epoch).count == 1)
        let ble = Message(namespace: "a", type: "b", content: Array(repeating: 1, count: 15))
        #expect(try codec.bleAdverts(for: ble, epoch: epoch).count == 1)
    }

    @Test func limitsAreEnforced() throws {
        let ns = "livingroom", type = "greeting"
        #expect(Medium.ble.maxContentBytes(namespace: ns, type: type) == 302 - 18)
        #expect(Medium.audio.maxContentBytes(namespace: ns, type: type) == 526 - 18)
        let atLimit = Message(namespace: ns, type: type, content: Array(repeating: 7, count: 284))
        #expect(try codec.bleAdverts(for: atLimit, epoch: epoch).count == 16)
        var over = atLimit
        over.content.append(0)
        #expect(throws: FrameError.contentTooLong(bytes: 285, limit: 284, medium: .ble)) {
            try codec.bleAdverts(for: over, epoch: epoch)
        }
        #expect(throws: FrameError.namespaceTooLong(bytes: 33)) {
            try codec.bleAdverts(for: Message(namespace: String(repeating: "n", count: 33), type: "t", content: []), epoch: epoch)
        }
        #expect(throws: FrameError.typeTooLong(bytes: 33)) {
            try codec.audioPayloads(for: Message(namespace: "n", type: String(repeating: "t", count: 33), content: []), epoch: epoch)
        }
    }
}
