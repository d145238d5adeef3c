import TestSupport
import Testing

@testable import Radio

@Suite struct HCIEventTests {
    @Test func commandComplete() throws {
        // btvirt's answer to Read Local Version Information.
        let event = try #require(HCIEvent.parse(hex("0e0c0101100009000009f1050000")))
        guard case .commandComplete(let opcode, let credits, let parameters) = event else {
            Issue.record("not a Command Complete: \(event)")
            return
        }
        #expect(opcode == .readLocalVersion)
        #expect(credits == 1)
        let version = try #require(ControllerResponses.localVersion(parameters))
        #expect(version == .init(hciVersion: 9, hciRevision: 0, lmpVersion: 9, manufacturer: 0x05F1, lmpSubversion: 0))
    }

    @Test func commandStatusForAnUnknownCommand() {
        // btvirt's answer to LE Read Maximum Advertising Data Length.
        #expect(HCIEvent.parse(hex("0f0401013a20")) == .commandStatus(opcode: .leReadMaximumAdvertisingDataLength, numberOfPackets: 1, status: .unknownCommand))
    }

    @Test func hardwareError() {
        #expect(HCIEvent.parse([0x10, 0x01, 0x07]) == .hardwareError(code: 7))
    }

    @Test func leFeaturesAndAddress() throws {
        #expect(ControllerResponses.leFeatures(hex("000b00000000000000")[...]) == 0x0B)
        #expect(ControllerResponses.leFeatures(hex("000b10000000000000")[...])! & LEFeature.extendedAdvertising != 0)
        #expect(ControllerResponses.bdAddress(hex("0042000101aa00")[...]) == BDAddress("00:AA:01:01:00:42"))
    }

    @Test func legacyAdvertisingReportFromBtvirt() throws {
        // Captured from btvirt: ADV_NONCONN_IND from random C5:04:03:02:01:C1, 9 bytes of data, RSSI 127.
        let event = try #require(HCIEvent.parse(hex("3e1502010301c101020304c50902010605ffffff01027f")))
        guard case .advertisingReports(let reports) = event else {
            Issue.record("not a report: \(event)")
            return
        }
        let all = Array(reports)
        #expect(all.count == 1)
        let report = try #require(all.first)
        #expect(report.eventType == 3)
        #expect(report.addressType == .random)
        #expect(report.address == BDAddress("C5:04:03:02:01:C1"))
        #expect(report.rssi == nil)
        #expect(Array(report.data) == [0x02, 0x01, 0x06, 0x05, 0xFF, 0xFF, 0xFF, 0x01, 0x02])
        #expect(report.isComplete)
        let sighting = try #require(Sighting(report: report, time: .now))
        #expect(sighting.adStructures == [ADStructure(type: 1, data: [6]), ADStructure(type: 0xFF, data: [0xFF, 0xFF, 1, 2])])
    }

    @Test func severalReportsInOneEventAndARealRSSI() throws {
        let first = [0x00, 0x00, 1, 2, 3, 4, 5, 6, 0x03, 0x02, 0x01, 0x06, 0xC4] as [UInt8]  // RSSI -60
        let second = [0x03, 0x01, 7, 8, 9, 10, 11, 0xC0, 0x00, 0x7F] as [UInt8]  // no data
        let body: [UInt8] = [0x02, 0x02] + first + second
        let all = try reports(in: HCIEventBytes.leMeta(body))
        #expect(all.count == 2)
        #expect(all[0].rssi == -60)
        #expect(all[0].addressType == .public)
        #expect(all[1].data.isEmpty)
        #expect(all[1].rssi == nil)
    }

    @Test func extendedAdvertisingReport() throws {
        var report: [UInt8] = [0x10, 0x00, 0x01]  // legacy PDU, complete; random address
        report += [1, 2, 3, 4, 5, 0xC6]  // address
        report += [0x01, 0x00, 0xFF, 0x7F, 0xB0]  // PHYs, SID, TX power n/a, RSSI -80
        report += [0, 0, 0x00, 0, 0, 0, 0, 0, 0]  // periodic interval, direct address
        report += [3, 0x02, 0x01, 0x06]
        let body: [UInt8] = [0x0D, 0x01] + report
        let only = try #require(try reports(in: HCIEventBytes.leMeta(body)).first)
        #expect(only.isExtended)
        #expect(only.rssi == -80)
        #expect(only.address == BDAddress("C6:05:04:03:02:01"))
        #expect(Array(only.data) == [0x02, 0x01, 0x06])
        #expect(only.isComplete)
        var incomplete = body
        incomplete[2] = 0x30  // data status: incomplete, more to come
        #expect(try reports(in: HCIEventBytes.leMeta(incomplete)).first?.isComplete == false)
    }

    @Test func lyingLengthsAreRejected() {
        #expect(HCIEvent.parse([]) == nil)
        #expect(HCIEvent.parse([0x0E]) == nil)
        #expect(HCIEvent.parse([0x0E, 0x05, 0x01]) == nil, "parameter length says 5, 1 present")
        #expect(HCIEvent.parse([0x0E, 0x02, 0x01, 0x03]) == nil, "Command Complete needs 3 bytes")
        #expect(HCIEvent.parse([0x0F, 0x03, 0, 1, 3]) == nil)
        // Report claims 9 data bytes, has 2.
        #expect(HCIEvent.parse(hex("3e0e02010301c101020304c509020106")) == nil)
        // Legacy data longer than 31 bytes.
        let long: [UInt8] = [0x02, 0x01, 0x03, 0x01, 1, 2, 3, 4, 5, 6, 32] + [UInt8](repeating: 0, count: 32) + [0x7F]
        #expect(HCIEvent.parse(HCIEventBytes.leMeta(long)) == nil)
        // Trailing bytes after the announced reports.
        #expect(HCIEvent.parse(hex("3e1602010301c101020304c50902010605ffffff01027f00")) == nil)
        // Unknown but well-formed events are passed over, not errors.
        #expect(HCIEvent.parse([0x05, 0x04, 0, 1, 0, 0x13]) == .other(code: 0x05))
    }
}

struct NotAReport: Error {}

func reports(in packet: [UInt8]) throws -> [AdvertisingReport] {
    guard case .advertisingReports(let reports) = HCIEvent.parse(packet) else { throw NotAReport() }
    return Array(reports)
}
