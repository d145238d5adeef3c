/// The order in which a transmitter cycles through its frames (`docs/protocol.md`, "Rotation").
///
/// A receiver refreshes a message's last_seen on every frame of it, but only sees a message while one
/// of its frames is on the air. Sending each message's chunks as one block made a message with 16
/// chunks next to eight others invisible for 12.8 s of every 14.4 s round, longer than a 10 s
/// `lost_after_s`: subscribers reported it lost while its publisher was still advertising. So the
/// blocks are kept (a message still completes within one block), and after every second block frame
/// comes a *presence frame*: the last chunk of the next message in turn, which refreshes every receiver
/// that authenticated that message once. Pure: no I/O, no clock.
public enum RotationSchedule {
    /// Block frames between two presence frames: the round grows by half, and each message comes round
    /// at least every `maxGap` frames.
    static let blockFramesPerPresence = 2

    /// At most this many frames pass between two frames of the same message when `units` messages
    /// share the rotation.
    public static func maxGap(units: Int) -> Int { (blockFramesPerPresence + 1) * max(1, units) + 2 }

    /// One rotation of `units` (each one message's frames in order, or a one-frame beacon). Units with
    /// no frames are ignored.
    public static func rotation(_ units: [[[UInt8]]]) -> [[UInt8]] {
        let units = units.filter { !$0.isEmpty }
        let blocks = units.flatMap { $0 }
        let m = units.count
        // Short enough that every message comes round within the gap anyway: the plain blocks.
        guard m > 1, blocks.count > (blockFramesPerPresence + 1) * m else { return blocks }
        // A whole number of presence turns, so the turns run on seamlessly when the rotation repeats,
        // spread evenly between the block frames.
        let turns = (blocks.count + blockFramesPerPresence * m - 1) / (blockFramesPerPresence * m)
        let presences = turns * m
        var rotation: [[UInt8]] = []
        rotation.reserveCapacity(blocks.count + presences)
        var placed = 0
        for (i, frame) in blocks.enumerated() {
            rotation.append(frame)
            while placed < (i + 1) * presences / blocks.count {
                let unit = units[placed % m]
                rotation.append(unit[unit.count - 1])
                placed += 1
            }
        }
        return rotation
    }
}
