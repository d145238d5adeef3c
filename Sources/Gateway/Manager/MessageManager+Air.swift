import Foundation
import Modem
import Radio

/// What arrives from the air: radio events and audio payloads, through the frame codec into the
/// found set.
extension MessageManager {
    func handle(_ event: RadioEvent) async {
        switch event {
        case .sighting(let sighting):
            await ingest(sighting)
        case .up:
            await setError(.bluetoothPower, false, cause: "controller up")
            await setError(.bluetoothPermission, false, cause: "controller up")
        case .down(let error):
            let which: GatewayErrorState = error.kind == .permission ? .bluetoothPermission : .bluetoothPower
            await setError(which, true, cause: "\(error)", device: error.device, errno: error.errno)
        }
    }

    func ingest(_ sighting: Sighting) async {
        countAdvert()
        let subscriptions = runningSubscriptions(for: .ble)
        guard !subscriptions.isEmpty || hasScanPublications else { return }
        for structure in sighting.adStructures where structure.type == 0xFF {
            await ingestFrame(structure.data, source: .ble(address: sighting.address.rawValue), medium: .ble,
                              rssi: sighting.rssi, subscriptions: subscriptions)
        }
        let wanted = subscriptions.reduce(into: Set<BeaconFilter>()) { $0.formUnion($1.include) }
        guard !wanted.isEmpty else { return }
        for structure in sighting.adStructures {
            guard let beacon = Beacon.parse(type: structure.type, data: structure.data[...]) else { continue }
            if case .eddystoneTLM(let tlm) = beacon {
                rememberTelemetry(tlm, from: sighting.address)
                continue
            }
            guard let (key, details) = BeaconDiscovery.make(beacon, content: structure.data, wanted: wanted,
                                                            telemetry: telemetry(from: sighting.address)) else { continue }
            let matching = subscriptions.filter { key.beaconFilter.map($0.include.contains) ?? false }
            await sighted(key, details: details, rssi: sighting.rssi, lostAfter: matching.map(\.lostAfter).max() ?? .seconds(10),
                          leds: Set(matching.compactMap(\.led)))
        }
    }

    func ingestAudio(_ payload: [UInt8]) async {
        countAudioPayload()
        let subscriptions = runningSubscriptions(for: .audio)
        await ingestFrame(payload, source: .audio, medium: .audio, rssi: nil, subscriptions: subscriptions)
    }

    private func ingestFrame(_ bytes: [UInt8], source: SourceID, medium: Medium, rssi: Int8?,
                             subscriptions: [Subscription]) async {
        switch reassemble(bytes, source: source) {
        case .notOurs, .incomplete:
            break
        case .dropped(let reason):
            if isDebug { logger.debug("frame dropped", metadata: ["reason": "\(reason.rawValue)", "source": "\(source)"]) }
        case .subscriberBeacon(let id):
            await subscriberBeaconHeard(id)
        case .message(let message):
            let matching = subscriptions.filter { $0.matches(message) }
            guard !matching.isEmpty else { return }
            await sighted(.message(message), details: DiscoveryDetails(medium: medium, content: message.content), rssi: rssi,
                          lostAfter: matching.map(\.lostAfter).max()!, leds: Set(matching.compactMap(\.led)))
        }
    }
}

/// Beacon sightings as found-set entries (PRODUCT.md §12 topics and fields).
enum BeaconDiscovery {
    static func make(_ beacon: Beacon, content: [UInt8], wanted: Set<BeaconFilter>,
                     telemetry: EddystoneTLM?) -> (DiscoveryKey, DiscoveryDetails)? {
        let quote = JSONObjectWriter.quote
        switch beacon {
        case .eddystoneUID(let uid) where wanted.contains(.eddystoneUID):
            var fields = [("namespace_id", quote(uid.namespaceHex)), ("instance_id", quote(uid.instanceHex)),
                          ("tx_power", String(uid.txPower))]
            if let telemetry { fields.append(("tlm", json(telemetry))) }
            return (.eddystoneUID(namespace: uid.namespace, instance: uid.instance),
                    DiscoveryDetails(medium: .ble, content: content, extraFields: fields))
        case .eddystoneURL(let url) where wanted.contains(.eddystoneURL):
            return (.eddystoneURL(url.url), DiscoveryDetails(medium: .ble, content: content, extraFields: [
                ("url", quote(url.url)), ("tx_power", String(url.txPower)),
            ]))
        case .iBeacon(let ibeacon) where wanted.contains(.iBeacon):
            return (.iBeacon(uuid: ibeacon.uuid, major: ibeacon.major, minor: ibeacon.minor),
                    DiscoveryDetails(medium: .ble, content: content, extraFields: [
                        ("uuid", quote(ibeacon.uuidString)), ("major", String(ibeacon.major)),
                        ("minor", String(ibeacon.minor)), ("tx_power", String(ibeacon.measuredPower)),
                    ]))
        default:
            return nil
        }
    }

    static func json(_ tlm: EddystoneTLM) -> String {
        var json = JSONObjectWriter()
        json.add("battery_mv", tlm.batteryMillivolts.map(Int.init))
        json.add("temperature_c", rawJSON: tlm.temperature.map { String(format: "%.2f", $0) } ?? "null")
        json.add("adv_count", Int(tlm.advertisingCount))
        json.add("uptime_s", rawJSON: String(format: "%.1f", Double(tlm.uptimeDeciseconds) / 10))
        return json.string
    }
}

/// The speaker and microphone threads' reports.
extension MessageManager {
    func handle(_ event: AudioEvent, side: AudioBridge.AudioSide) async {
        switch (event, side) {
        case (.received(let reception), _):
            await ingestAudio(reception.payload)
        case (.ready(let device), .capture):
            await setError(.microphonePermission, false, cause: "capture device \(device) open")
        case (.failed(let error, let retry), .capture):
            // Any capture device that can't be opened or read is the microphone error of Nearby
            // Messages; the thread retries by itself.
            await setError(.microphonePermission, true, cause: "\(error); retrying in \(retry) s", device: error.device,
                           errno: error.errno)
        case (.ready(let device), .playback):
            logger.info("speaker open", metadata: ["device": "\(device)"])
        case (.failed(let error, let retry), .playback):
            logger.error("speaker: \(error); retrying in \(retry) s")
        case (.beaconPlayed(let payloads, let seconds), _):
            logger.debug("audio beacon played", metadata: ["payloads": "\(payloads)", "seconds": "\(seconds)"])
        }
    }
}
