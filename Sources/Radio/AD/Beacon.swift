/// Third-party beacon formats found in adverts.
public enum Beacon: Sendable, Equatable {
    case eddystoneUID(EddystoneUID)
    case eddystoneURL(EddystoneURL)
    case eddystoneTLM(EddystoneTLM)
    case iBeacon(IBeacon)
}

extension Beacon {
    /// Eddystone's 16-bit service UUID, 0xFEAA, in service data (little endian on the air).
    public static let eddystoneServiceUUID: UInt16 = 0xFEAA
    /// Apple's company identifier, which iBeacon's manufacturer data starts with.
    public static let appleCompanyID: UInt16 = 0x004C

    /// Every beacon in an advert's AD structures. Malformed frames are skipped.
    public static func parse(_ ad: [ADStructure]) -> [Beacon] {
        var beacons: [Beacon] = []
        for structure in ad {
            if let beacon = parse(type: structure.type, data: structure.data[...]) { beacons.append(beacon) }
        }
        return beacons
    }

    /// Every beacon in raw advert bytes, walked lazily.
    public static func parse(raw: ArraySlice<UInt8>) -> [Beacon] {
        var beacons: [Beacon] = []
        for element in ADStructures(raw) {
            if let beacon = parse(type: element.type, data: element.data) { beacons.append(beacon) }
        }
        return beacons
    }

    /// One AD structure, if it is a beacon frame we know.
    public static func parse(type: UInt8, data: ArraySlice<UInt8>) -> Beacon? {
        switch type {
        case ADStructure.serviceData16BitUUID:
            guard data.count >= 3,
                UInt16(data[data.startIndex]) | UInt16(data[data.startIndex + 1]) << 8 == eddystoneServiceUUID
            else { return nil }
            let frame = data.dropFirst(2)
            switch frame.first {
            case EddystoneUID.frameType: return EddystoneUID(frame: frame).map { .eddystoneUID($0) }
            case EddystoneURL.frameType: return EddystoneURL(frame: frame).map { .eddystoneURL($0) }
            case EddystoneTLM.frameType: return EddystoneTLM(frame: frame).map { .eddystoneTLM($0) }
            default: return nil
            }
        case ADStructure.manufacturerSpecificData:
            return IBeacon(manufacturerData: data).map { .iBeacon($0) }
        default:
            return nil
        }
    }
}

extension ArraySlice<UInt8> {
    /// Big-endian integer at `offset` from the start of the slice (Eddystone and iBeacon fields
    /// are big endian, unlike the rest of Bluetooth).
    func bigEndian<T: FixedWidthInteger>(at offset: Int, as: T.Type) -> T {
        var value: T = 0
        for index in 0..<(T.bitWidth / 8) {
            value = value << 8 | T(self[startIndex + offset + index])
        }
        return value
    }
}
