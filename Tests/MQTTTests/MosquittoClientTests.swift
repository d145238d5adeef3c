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

    /// Debian 13's libmosquitto (2.0.21) reports a failed TLS handshake as EPROTO, not MOSQ_ERR_TLS
    /// (found by the end-to-end tests against the arm64 package): the message must still say TLS.
    @Test func aProtocolErrorOnATLSBrokerNamesTheHandshake() {
        let tls = MQTTError(broker: "mqtts://127.0.0.1:8883", call: "mosquitto_loop_read", kind: .errno(Errno(rawValue: EPROTO)))
        #expect(tls.description == "MQTT broker mqtts://127.0.0.1:8883: mosquitto_loop_read failed: Protocol error (errno 71): the TLS handshake failed (is ca_file the CA that signed the broker's certificate, for this host name?)")
        let plain = MQTTError(broker: "mqtt://127.0.0.1:1883", call: "mosquitto_loop_read", kind: .errno(Errno(rawValue: EPROTO)))
        #expect(!plain.description.contains("TLS"))
    }

    @Test func aRefusalSaysWhatTheBrokerSaid() {
        let error = MQTTError(broker: "mqtt://b", call: "CONNECT", kind: .refused(code: 5, text: "Connection Refused: not authorised."))
        #expect(error.isRefusal)
        #expect(error.description == "MQTT broker mqtt://b refused the connection: Connection Refused: not authorised. (CONNACK 5)")
    }
}
