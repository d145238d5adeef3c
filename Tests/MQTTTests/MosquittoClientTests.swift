import Foundation
import Testing
@testable import MQTT
import SystemCall

@Suite struct MosquittoClientTests {
    /// A broker that is not there: the error names the broker, the call and the errno, and the
    /// client can try again.
    @Test func aMissingBrokerSocketIsATypedErrorNamingTheBroker() throws {
        let path = "/tmp/nearby-no-broker-\(getpid()).sock"
        let client = try MosquittoClient(broker: "unix://\(path)", clientID: "t", username: nil, password: nil, caFile: nil,
                                         will: ("p/status", "offline"))
        for _ in 0..<2 {
            #expect(throws: MQTTError(broker: "unix://\(path)", call: "mosquitto_connect_async", kind: .errno(Errno(rawValue: ENOENT)))) {
                try client.connect(host: path, port: 0, keepalive: 60)
            }
            #expect(client.session == .closed)
        }
        let error = MQTTError(broker: "unix://\(path)", call: "mosquitto_connect_async", kind: .errno(Errno(rawValue: ENOENT)))
        #expect(error.description == "MQTT broker unix://\(path): mosquitto_connect_async failed: No such file or directory (errno 2)")
    }

    @Test func aRefusalSaysWhatTheBrokerSaid() {
        let error = MQTTError(broker: "mqtt://b", call: "CONNECT", kind: .refused(code: 5, text: "Connection Refused: not authorised."))
        #expect(error.isRefusal)
        #expect(error.description == "MQTT broker mqtt://b refused the connection: Connection Refused: not authorised. (CONNACK 5)")
    }
}
