import Foundation
import Logging
import NearbyProtocol
import Radio
import SystemCall
import Testing

extension EndToEnd {
    /// Issue 9, security through the real binary: frames an attacker can put on the air — replayed
    /// from an earlier epoch, made with another key, or with a forged tag — are counted and dropped,
    /// never reported; the same transmitter with genuine frames is found (so the test can fail).
    @Suite(.serialized)
    struct FaultForgedFrames {
        @Test("Replayed (epoch − 3), other-key and forged-tag frames on the air are never reported; genuine ones from the same transmitter are")
        func forgedFramesAreNeverReported() async throws {
            let folder = try TemporaryFolder("forged")
            let key = TestEnvironment.uniqueAPIKey("forged")
            var b = TestGatewayConfig(apiKey: key, folder: folder, name: "b")
            b.subscriptions = ["namespace = \"vault\"\ntype = \"*\"\nmediums = [\"ble\"]"]
            let gateway = try await b.start()
            let watch = try SocketClient(path: b.socketPath)
            _ = try await watch.request("SUB found/#")

            let codec = FrameCodec(apiKey: key, rotateSeconds: b.rotateSeconds)
            let epoch = codec.epoch(at: Date())
            let message = Message(namespace: "vault", type: "code", content: Array("1234".utf8))
            let replayed = try codec.bleAdverts(for: message, epoch: epoch - 3)
            let otherKey = try FrameCodec(apiKey: key + "-other", rotateSeconds: b.rotateSeconds).bleAdverts(for: message, epoch: epoch)
            // AD: length, 0xFF, company id (2), kind, sequence, then the 4-byte message id and the 2-byte chunk tag.
            let forged = try codec.bleAdverts(for: message, epoch: epoch).map { advert in
                var copy = advert
                copy[6] ^= 0x01
                return copy
            }

            // A transmitter of our own on the same air: the Radio module, as a gateway uses it.
            let loop = try EventLoop(name: "attacker")
            defer { loop.shutdown() }
            let transmitter = Radio(device: .h4(path: TestEnvironment.btvirtServer), logger: Logger(label: "attacker"), loop: loop)
            let running = Task { await transmitter.run() }
            let draining = Task { for await _ in transmitter.events {} }
            defer { running.cancel(); draining.cancel() }
            await transmitter.setAdvertisements(replayed + otherKey + forged)

            let before = try await droppedForAuthentication(watch)
            let deadline = ContinuousClock.now + .seconds(15)
            var rejected = before
            while rejected < before + 9, ContinuousClock.now < deadline {
                rejected = try await droppedForAuthentication(watch)
            }
            #expect(rejected >= before + 9, "the gateway never heard (and rejected) the attacker's frames")
            #expect(!watch.received.contains { $0.hasPrefix("found/") }, "a replayed, other-key or forged message was reported")

            // Positive control: genuine frames from the same transmitter are found.
            await transmitter.setAdvertisements(try codec.bleAdverts(for: message, epoch: epoch))
            let found = try await watch.waitForLine(startingWith: "found/vault/code ", timeout: .seconds(15))
            #expect(found.eventJSON["text"] as? String == "1234")
            #expect(try await gateway.stop() == 0)
        }

        private func droppedForAuthentication(_ client: SocketClient) async throws -> Int {
            let dropped = try await stats(client)["frames_dropped"] as? [String: Int] ?? [:]
            return dropped["authentication-failed"] ?? 0
        }
    }
}
