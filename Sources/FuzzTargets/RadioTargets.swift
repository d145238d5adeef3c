#if DEBUG || FUZZING
@testable import Radio

/// Bytes from the controller: the H4 stream, HCI events, advertising reports, AD and beacons.
enum RadioTargets {
    /// A stream cut into pieces of fuzzer-chosen sizes, as reads from a socket would cut it.
    static func h4Stream(_ input: FuzzInput) {
        var input = input
        var deframer = H4Deframer()
        let cuts = (0..<4).map { _ in Int(input.byte()) + 1 }
        var piece = 0
        while !input.isEmpty {
            let chunk = input.take(cuts[piece % cuts.count])
            piece += 1
            deframer.feed(chunk) { packet in
                require(packet.bytes.count <= H4Deframer.maximumPacketLength, "packet of \(packet.bytes.count) bytes")
                if packet.type == .event { walk(packet.bytes) }
            }
            require(deframer.pendingCount <= H4Deframer.maximumPacketLength, "deframer holds \(deframer.pendingCount) bytes")
        }
    }

    /// One event packet (code, length, parameters), and the controller's command answers.
    static func hciEvent(_ input: FuzzInput) {
        walk(input.bytes)
        let parameters = input.bytes[...]
        _ = ControllerResponses.localVersion(parameters)
        _ = ControllerResponses.leFeatures(parameters)
        _ = ControllerResponses.bdAddress(parameters)
        _ = ControllerResponses.maximumAdvertisingDataLength(parameters)
    }

    /// The AD bytes of one advert: eager and lazy walks agree, beacons parse from both.
    static func adBeacon(_ input: FuzzInput) {
        let raw = input.bytes[...]
        let (structures, malformed) = ADStructure.parse(raw)
        var lazy = ADStructures(raw).makeIterator()
        var walked: [ADStructure] = []
        while let element = lazy.next() { walked.append(ADStructure(type: element.type, data: Array(element.data))) }
        require(walked == structures && lazy.malformed == malformed, "eager and lazy AD walks disagree")
        let fromRaw = Beacon.parse(raw: raw)
        require(fromRaw == Beacon.parse(structures), "beacons differ between raw and parsed AD")
        for beacon in fromRaw { describe(beacon) }
        for structure in structures { require(structure.encoded.count == structure.data.count + 2, "AD re-encoding") }
    }

    private static func walk(_ packet: [UInt8]) {
        guard case .advertisingReports(let reports)? = HCIEvent.parse(packet) else { return }
        var count = 0
        for report in reports {
            count += 1
            _ = report.isComplete
            _ = report.isScanResponse
            _ = report.address.description
            let (structures, _) = ADStructure.parse(report.data)
            for beacon in Beacon.parse(structures) { describe(beacon) }
            _ = Beacon.parse(raw: report.data)
        }
        require(count == reports.count, "report count \(count) != \(reports.count)")
    }

    /// What the gateway does with a beacon: topics and JSON are built from these fields.
    private static func describe(_ beacon: Beacon) {
        switch beacon {
        case .eddystoneUID(let uid): _ = uid.namespaceHex + uid.instanceHex
        case .eddystoneURL(let url): _ = url.host + url.url
        case .eddystoneTLM(let tlm): _ = "\(tlm)"
        case .iBeacon(let ibeacon): _ = "\(ibeacon)"
        }
    }
}
#endif
