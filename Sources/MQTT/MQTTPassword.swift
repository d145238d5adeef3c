import NearbyProtocol
import SystemCall

/// The broker password: from `password`, or the first line of `password_file` (read at start, so the
/// file can be readable by the service's user only).
package enum MQTTPassword {
    package static func read(_ settings: MQTTSettings) throws(MQTTError) -> String? {
        guard let path = settings.passwordFile else { return settings.password }
        do throws(Errno) {
            let text = String(decoding: try SystemCall.readFile(path), as: UTF8.self)
            return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        } catch {
            throw MQTTError(broker: settings.url, call: "reading password_file", kind: .setup("cannot read \(path): \(error)"))
        }
    }
}
