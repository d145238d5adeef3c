import NearbyProtocol
import Radio

/// What we know about one found entry beyond its key, for the event JSON.
struct DiscoveryDetails: Sendable {
    var medium: Medium
    /// For a beacon, the AD type its `content` came in (service or manufacturer data); nil for messages.
    var beaconADType: UInt8?
    /// A beacon's bytes (a legacy advert's AD data is at most 29) are copied in, so an entry never
    /// keeps the HCI event it came in alive, and a sighting still allocates nothing; longer content
    /// (a message's own array, an extended advert's long AD) is kept as an array.
    private var inline: InlineBytes
    private var long: [UInt8]
    /// The sender's latest Eddystone TLM, for an Eddystone-UID.
    var telemetry: EddystoneTLM?

    init(medium: Medium, content: some Collection<UInt8>, beaconADType: UInt8? = nil, telemetry: EddystoneTLM? = nil) {
        self.medium = medium
        if let inline = InlineBytes(content) {
            (self.inline, self.long) = (inline, [])
        } else {
            (self.inline, self.long) = (InlineBytes(), Array(content))
        }
        self.beaconADType = beaconADType
        self.telemetry = telemetry
    }

    /// The message content, or a beacon's raw service/manufacturer data.
    var content: ArraySlice<UInt8> { long.isEmpty ? inline.bytes[...] : long[...] }

    /// Heap bytes the details hold outside themselves (long content only; a message's is shared with its key).
    var heapBytes: Int { HeapBytes.array(capacity: long.capacity, of: UInt8.self) }

    /// The sender's own calibration, its RSSI at 1 m: iBeacon's measured power, or Eddystone-UID/URL's
    /// TX power at 0 m less 41 dB (the Eddystone specification's loss over the first metre). Nil for
    /// our messages (the config's `radio.tx_power_1m`) and for a beacon that says 0 (uncalibrated).
    var powerAt1m: Int? {
        guard let type = beaconADType else { return nil }
        let s = content.startIndex
        if type == ADStructure.serviceData16BitUUID {
            guard content.count >= 4, content[s + 2] == EddystoneUID.frameType || content[s + 2] == EddystoneURL.frameType
            else { return nil }
            let atZero = Int(Int8(bitPattern: content[s + 3]))
            return atZero == 0 ? nil : atZero - 41
        }
        guard content.count == 25 else { return nil }
        let measured = Int(Int8(bitPattern: content[s + 24]))
        return measured == 0 ? nil : measured
    }

    /// Decoded beacon fields, already JSON (e.g. `"url":"https://…"`), in order. Made when an event
    /// needs them, by decoding `content` again: a sighting only keeps the bytes it came with.
    var extraFields: [(String, String)] {
        guard let type = beaconADType, let beacon = Beacon.parse(type: type, data: content) else { return [] }
        return BeaconDiscovery.fields(beacon, telemetry: telemetry)
    }
}
