import Foundation
import Testing
@testable import MQTT
import NearbyProtocol

@Suite struct MQTTPasswordTests {
    /// The first line of `password_file`, read at start; `password` when there is no file.
    @Test func readsTheFirstLineOfThePasswordFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("mqtt-pw-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        try "secret\nignored\n".write(toFile: file, atomically: false, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        var settings = MQTTSettings(url: "mqtt://b", transport: .tcp(host: "b", port: 1883), username: "gw", password: "inline")
        #expect(try MQTTPassword.read(settings) == "inline")
        settings.password = nil
        settings.passwordFile = file
        #expect(try MQTTPassword.read(settings) == "secret")
        settings.passwordFile = file + ".missing"
        #expect(throws: MQTTError.self) { try MQTTPassword.read(settings) }
    }
}
