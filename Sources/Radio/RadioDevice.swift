/// Where a radio's controller is.
public enum RadioDevice: Sendable, Equatable, CustomStringConvertible {
    /// H4 over a UNIX stream socket, e.g. btvirt's `/tmp/bt-server-le`.
    case h4(path: String)
    /// A kernel HCI device `hci<index>`: a raw socket shared with the kernel's own stack, or the
    /// exclusive user channel (the device must be down, nothing else may use it).
    case kernel(index: Int, exclusive: Bool)

    /// "h4:/tmp/bt-server-le" or "hci0".
    public init(parsing text: String, exclusive: Bool) throws(RadioError) {
        if text.hasPrefix("h4:") {
            let path = String(text.dropFirst(3))
            guard !path.isEmpty else {
                throw RadioError(kind: .unavailable, device: text, operation: "parse device", message: "h4: needs a socket path")
            }
            self = .h4(path: path)
        } else if text.hasPrefix("hci"), let index = Int(text.dropFirst(3)), index >= 0, index <= 0xFFFF {
            self = .kernel(index: index, exclusive: exclusive)
        } else {
            throw RadioError(
                kind: .unavailable, device: text, operation: "parse device",
                message: "expected \"h4:/path/to/socket\" or \"hciN\"")
        }
    }

    public var description: String {
        switch self {
        case .h4(let path): "h4:\(path)"
        case .kernel(let index, _): "hci\(index)"
        }
    }
}
