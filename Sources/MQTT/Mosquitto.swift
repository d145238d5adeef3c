import CMosquitto
#if canImport(Glibc)
import Glibc
#endif
import SystemCall

/// What went wrong talking to the MQTT broker: the broker, the libmosquitto call, and libmosquitto's
/// error, the errno behind it, or the broker's CONNACK refusal.
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// A libmosquitto error code (`MOSQ_ERR_*`) and its text.
        case library(code: Int32, text: String)
        /// `MOSQ_ERR_ERRNO`: the system call's errno.
        case errno(Errno)
        /// The broker answered CONNECT with a refusal (bad credentials, client id not allowed…).
        case refused(code: Int32, text: String)
        /// The configuration cannot be used (password file unreadable, CA file missing…).
        case setup(String)
    }

    public var broker: String
    public var call: String
    public var kind: Kind

    public var description: String {
        switch kind {
        case .library(let code, let text): "MQTT broker \(broker): \(call) failed: \(text) (MOSQ_ERR \(code))"
        case .errno(let code) where code.rawValue == EPROTO && broker.hasPrefix("mqtts://"):
            // libmosquitto 2.0.21 (Debian 13, a Pi's) reports a failed TLS handshake (a CA that did not
            // sign the broker, a name that does not match) as EPROTO; 2.0.11 (Debian 12) as MOSQ_ERR_TLS.
            "MQTT broker \(broker): \(call) failed: \(code): the TLS handshake failed (is ca_file the CA that signed the broker's certificate, for this host name?)"
        case .errno(let code): "MQTT broker \(broker): \(call) failed: \(code)"
        case .refused(let code, let text): "MQTT broker \(broker) refused the connection: \(text) (CONNACK \(code))"
        case .setup(let text): "MQTT broker \(broker): \(text)"
        }
    }

    /// Refused by the broker: retrying at once would only be refused again.
    public var isRefusal: Bool { if case .refused = kind { true } else { false } }
}

/// libmosquitto is loaded at run time (Sources/CMosquitto), by the first bridge or by check-config of
/// an `[mqtt]` section: a gateway without `[mqtt]` never maps it, nor the libssl/libcrypto it needs.
public enum MosquittoLibrary {
    /// The library's function table, loading it on the first call; an error naming libmosquitto.so.1
    /// and dlerror's text when it (or one of its functions) is missing.
    static func load(broker: String) throws(MQTTError) -> UnsafePointer<nearby_mosquitto_api> {
        guard let api = nearby_mosquitto_load() else {
            let text = nearby_mosquitto_load_error().map { String(cString: $0) } ?? "cannot load \(NEARBY_MOSQUITTO_SONAME)"
            throw MQTTError(broker: broker, call: "dlopen", kind: .setup(text))
        }
        return api
    }

    /// What check-config asks: can a bridge to `broker` be made on this system?
    public static func check(broker: String) throws(MQTTError) { _ = try load(broker: broker) }
}

/// The one file that speaks libmosquitto. A `MosquittoClient` is used by one thread only (the bridge's):
/// libmosquitto's own thread (`mosquitto_loop_start`) is not used, so its network I/O runs where the
/// bridge's poll(2) loop decides, and never on Swift's cooperative pool.
final class MosquittoClient {
    enum Session: Equatable { case connecting, accepted, refused(Int32), closed }

    let broker: String
    private let api: UnsafePointer<nearby_mosquitto_api>
    private let handle: OpaquePointer
    /// Set by libmosquitto's callbacks, which run inside `loopRead` on this same thread.
    private(set) var session = Session.closed
    /// Messages received on subscribed topics (topic, payload bytes), taken by `takeMessages`.
    private var received: [(topic: String, payload: [UInt8])] = []

    init(broker: String, clientID: String, username: String?, password: String?, caFile: String?,
         will: (topic: String, payload: String)) throws(MQTTError) {
        self.broker = broker
        let api = try MosquittoLibrary.load(broker: broker)
        self.api = api
        do throws(Errno) {
            handle = try SystemCall.nonNull { api.pointee.new_client(clientID, true, nil) }
        } catch {
            throw MQTTError(broker: broker, call: "mosquitto_new", kind: .errno(error))
        }
        let box = Unmanaged.passUnretained(self).toOpaque()
        api.pointee.user_data_set(handle, box)
        api.pointee.connect_callback_set(handle) { _, object, code in
            guard let object else { return }
            let client = Unmanaged<MosquittoClient>.fromOpaque(object).takeUnretainedValue()
            client.session = code == 0 ? .accepted : .refused(code)
        }
        api.pointee.disconnect_callback_set(handle) { _, object, _ in
            guard let object else { return }
            let client = Unmanaged<MosquittoClient>.fromOpaque(object).takeUnretainedValue()
            // A refused CONNECT is followed by the socket's close: keep the refusal, it says why.
            if case .refused = client.session { return }
            client.session = .closed
        }
        api.pointee.message_callback_set(handle) { _, object, message in
            guard let object, let message else { return }
            let client = Unmanaged<MosquittoClient>.fromOpaque(object).takeUnretainedValue()
            let topic = message.pointee.topic.map { String(cString: $0) } ?? ""
            let count = Int(max(message.pointee.payloadlen, 0))
            let payload = message.pointee.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
            client.received.append((topic, payload))
        }
        if let username {
            try check("mosquitto_username_pw_set", api.pointee.username_pw_set(handle, username, password))
        }
        try check("mosquitto_will_set", will.payload.withCString { bytes in
            api.pointee.will_set(handle, will.topic, Int32(strlen(bytes)), bytes, 1, true)
        })
        if let caFile {
            try check("mosquitto_tls_set", api.pointee.tls_set(handle, caFile, nil, nil, nil, nil))
        }
    }

    deinit {
        api.pointee.destroy(handle)
    }

    /// Starts a non-blocking connect (a TCP connect to an unreachable host never holds the thread);
    /// `port` 0 = `host` is the path of a UNIX socket.
    func connect(host: String, port: Int, keepalive: Int) throws(MQTTError) {
        session = .connecting
        do throws(MQTTError) {
            try check("mosquitto_connect_async", api.pointee.connect_async(handle, host, Int32(port), Int32(keepalive)))
        } catch {
            session = .closed
            throw error
        }
    }

    /// The socket to poll, or nil when there is none.
    var socket: Int32? {
        let fd = api.pointee.socket(handle)
        return fd < 0 ? nil : fd
    }

    var wantsWrite: Bool { api.pointee.want_write(handle) }

    func loopRead() throws(MQTTError) { try check("mosquitto_loop_read", api.pointee.loop_read(handle, 16)) }
    func loopWrite() throws(MQTTError) { try check("mosquitto_loop_write", api.pointee.loop_write(handle, 16)) }
    /// Keep-alive pings and their time-outs.
    func loopMisc() throws(MQTTError) { try check("mosquitto_loop_misc", api.pointee.loop_misc(handle)) }

    /// Queues a message in libmosquitto's outgoing list (written by `loopWrite`).
    func publish(topic: String, payload: String, qos: Int, retain: Bool) throws(MQTTError) {
        let code = payload.withCString { bytes in
            api.pointee.publish(handle, nil, topic, Int32(strlen(bytes)), bytes, Int32(qos), retain)
        }
        try check("mosquitto_publish", code)
    }

    func subscribe(_ filter: String, qos: Int) throws(MQTTError) {
        try check("mosquitto_subscribe", api.pointee.subscribe(handle, nil, filter, Int32(qos)))
    }

    /// What arrived on subscribed topics since the last call, in order.
    func takeMessages() -> [(topic: String, payload: [UInt8])] {
        defer { received.removeAll() }
        return received
    }

    /// Queues DISCONNECT (sent by the next `loopWrite`) and forgets the session.
    func disconnect() {
        _ = api.pointee.disconnect(handle)
        session = .closed
    }

    /// The refusal as an error, once the broker has answered CONNECT with one.
    var refusal: MQTTError? {
        guard case .refused(let code) = session else { return nil }
        return MQTTError(broker: broker, call: "CONNECT", kind: .refused(code: code, text: String(cString: api.pointee.connack_string(code))))
    }

    private func check(_ call: String, _ code: Int32) throws(MQTTError) {
        let savedErrno = Errno.current   // before anything else can overwrite it
        guard code != NEARBY_MOSQ_ERR_SUCCESS else { return }
        if code == NEARBY_MOSQ_ERR_ERRNO {
            throw MQTTError(broker: broker, call: call, kind: .errno(savedErrno))
        }
        if let refusal { throw refusal }
        throw MQTTError(broker: broker, call: call, kind: .library(code: code, text: String(cString: api.pointee.strerror(code))))
    }
}
