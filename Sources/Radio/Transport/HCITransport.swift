import SystemCall

/// The seam between the HCI layer and whatever carries its packets: a UNIX socket speaking H4, a
/// kernel HCI socket, or a test fake. Packets are whole H4 packets both ways (indicator first).
public protocol HCITransport: AnyObject, Sendable {
    /// The device as the user named it ("h4:/tmp/bt-server-le", "hci0"), for errors and logs.
    var device: String { get }
    /// Whether we have the controller to ourselves and may reset it. Not on a shared raw kernel
    /// socket: the kernel's own stack manages that controller, and a Reset under it would wipe
    /// state the kernel believes in.
    var ownsController: Bool { get }
    /// Packets from the controller. Ends with `.closed`: `nil` after `close()`, else the cause.
    var incoming: EventQueue<TransportEvent> { get }
    /// Sends one H4 packet (indicator byte first).
    func send(_ packet: [UInt8]) throws(RadioError)
    /// Stops reading (unblocking the reader) and releases the device. Idempotent.
    func close()
    /// From now on, hands the packets of each read to `receiver` at once, on `loop`'s thread, in one
    /// call, instead of queuing each in `incoming` (which then carries only `.closed`). False when
    /// this transport's reads do not happen on `loop` (another loop's, a test fake): `incoming`
    /// carries everything then.
    func deliverPackets(on loop: EventLoop, to receiver: @escaping @Sendable ([H4Packet]) -> Void) -> Bool
}

extension HCITransport {
    public var ownsController: Bool { true }
    public func deliverPackets(on loop: EventLoop, to receiver: @escaping @Sendable ([H4Packet]) -> Void) -> Bool { false }
}

public enum TransportEvent: Sendable {
    case packet(H4Packet)
    /// The transport is finished; `nil` when we closed it ourselves.
    case closed(RadioError?)
}

extension RadioDevice {
    /// Opens the transport for this device; `loop` polls its descriptor.
    public func open(loop: EventLoop) throws(RadioError) -> any HCITransport {
        try open(recorder: StatisticsRecorder(), loop: loop)
    }

    /// `loop` polls the descriptor (the radio's).
    func open(recorder: StatisticsRecorder, loop: EventLoop) throws(RadioError) -> any HCITransport {
        switch self {
        case .h4(let path):
            let fd = try UnixSocket.connect(path: path, device: description)
            return try FileDescriptorTransport(fd: fd, device: description, recorder: recorder, loop: loop)
        case .kernel(let index, let exclusive):
            let fd = try HCISocket.open(index: index, exclusive: exclusive, device: description)
            return try FileDescriptorTransport(
                fd: fd, device: description, ownsController: exclusive, recorder: recorder, loop: loop)
        }
    }
}
