import Foundation
@testable import NearbyProtocol
import Testing
@testable import Broker
@testable import LineClient

@Suite struct MonitorTableTests {
    static let date = Date(timeIntervalSince1970: 1_700_000_000)

    static func found(_ kind: String = "found", content: String = "hello", rssi: Int? = -60) -> String {
        let message = Message(namespace: "room", type: "greeting", content: Array(content.utf8))
        return "\(kind)/room/greeting " + ReplyLine.withRetained(
            SightingEvent.json(message: message, medium: .ble, rssi: rssi, firstSeen: date, lastSeen: date), false)
    }

    @Test func foundAddsLostRemovesAndRepliesAreIgnored() {
        var table = MonitorTable()
        table.ingest("OK", now: Self.date)
        table.ingest("PONG", now: Self.date)
        table.ingest(Self.found(), now: Self.date)
        table.ingest(Self.found(content: "other"), now: Self.date)
        table.ingest(Self.found(rssi: -40), now: Self.date)          // same message again: updated in place
        #expect(table.rows.map(\.content) == ["hello", "other"])
        #expect(table.rows.first?.rssi == -40)
        table.ingest(Self.found("lost"), now: Self.date)
        #expect(table.rows.map(\.content) == ["other"])
    }

    /// Issue 13: AGE is the time since the entry was last seen, not since it was first found.
    @Test func getFoundRepliesKeepTheAgeCountingFromTheLastSighting() {
        var table = MonitorTable()
        table.ingest(Self.found(), now: Self.date)
        let later = Self.date.addingTimeInterval(120)
        let message = Message(namespace: "room", type: "greeting", content: Array("hello".utf8))
        let entry = SightingEvent.json(message: message, medium: .ble, rssi: -50, firstSeen: Self.date, lastSeen: later.addingTimeInterval(-3))
        table.refresh(ReplyLine.encode(.list(topic: "$SYS/found", jsons: [entry])).split(separator: "\n").map(String.init)[0])
        let screen = table.render(now: later, width: 100, header: "h")
        #expect(screen.contains { $0.contains("hello") && $0.contains(" 3s") }, "\(screen)")
        #expect(!screen.contains { $0.contains("2m0s") }, "AGE still counts from the first sighting: \(screen)")
        #expect(table.rows.first?.rssi == -50)
        table.refresh("OK 0")                                    // an empty found set changes nothing by itself
        table.refresh("$SYS/found {not json")
        #expect(table.rows.count == 1)
    }

    @Test func systemStateKeepsTheLatestAndDropsClearedErrors() {
        var table = MonitorTable()
        table.ingest(#"$SYS/permission {"permission":"undecided","retained":true}"#, now: Self.date)
        table.ingest(#"$SYS/permission {"permission":"granted","retained":false}"#, now: Self.date)
        table.ingest(#"$SYS/error/bluetooth-power {"set":true,"retained":false}"#, now: Self.date)
        #expect(table.system.map(\.json) == [#"{"set":true}"#, #"{"permission":"granted"}"#])
        table.ingest(#"$SYS/error/bluetooth-power {"set":false,"retained":false}"#, now: Self.date)
        #expect(table.system.map(\.topic) == ["$SYS/permission"])
    }

    /// Issue 29: the RSSI column shows the smoothed value, DIST the distance; a signal event moves both.
    @Test func signalEventsMoveTheRSSIAndDistance() {
        var table = MonitorTable()
        let date = SightingEvent.timestamp(Self.date)
        let found = #"found/room/greeting {"namespace":"room","type":"greeting","content":"aGVsbG8=","text":"hello","medium":"ble","rssi":-58,"#
            + #""first_seen":"\#(date)","last_seen":"\#(date)","rssi_avg":-60.2,"distance_m":1.05,"retained":false}"#
        table.ingest(found, now: Self.date)
        #expect(table.rows.first?.rssi == -60 && table.rows.first?.distance == 1.05)
        table.ingest(found.replacing("found/", with: "signal/").replacing("-60.2", with: "-71.6").replacing("1.05", with: "2.86"), now: Self.date)
        #expect(table.rows.first?.rssi == -72 && table.rows.first?.distance == 2.86)
        #expect(table.render(now: Self.date, width: 100, header: "h")[3].contains("2.9m"))
        // A signal for a row not shown adds none.
        table.ingest(found.replacing("found/", with: "signal/").replacing("hello", with: "other").replacing("aGVsbG8=", with: "b3RoZXI="), now: Self.date)
        #expect(table.rows.count == 1)
        #expect(MonitorTable.plainLine(found) == #"found/room/greeting "hello" medium=ble rssi=-60 distance=1.1m"#)
    }

    @Test func renderShowsEveryColumnWithinTheWidth() {
        var table = MonitorTable()
        table.ingest(Self.found(rssi: nil), now: Self.date)
        let screen = table.render(now: Self.date.addingTimeInterval(75), width: 80, header: "h")
        #expect(screen.allSatisfy { $0.count <= 80 })
        let row = screen[3]
        #expect(row.hasPrefix("room"))
        #expect(row.contains("greeting") && row.contains("hello") && row.contains("ble") && row.contains("1m15s"))
        #expect(MonitorTable.plainLine(Self.found()) == #"found/room/greeting "hello" medium=ble rssi=-60"#)
        #expect(MonitorTable.plainLine("OK p-1") == nil)
    }

    /// Issue 28 (fault runs): content `ESC ] 0;pwned BEL ESC [2J CR fake line` retitled and cleared the
    /// terminal of every monitor that found it. Table and pipe output show control characters escaped.
    @Test func controlCharactersInContentNeverReachTheTerminal() {
        let hostile = "\u{1B}]0;pwned\u{7}\u{1B}[2J\rfake line\u{9B}2J\u{7F}"
        var table = MonitorTable()
        table.ingest(Self.found(content: hostile), now: Self.date)
        table.ingest(#"$SYS/error/x {"error":"x","set":true,"message":"\u001b[2J\u009b"}"#, now: Self.date)
        let screen = table.render(now: Self.date, width: 200, header: "h")
        let plain = MonitorTable.plainLine(Self.found(content: hostile)) ?? ""
        for text in screen + [plain] {
            #expect(!text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(text.debugDescription)")
        }
        #expect(plain == #"found/room/greeting "\x1b]0;pwned\x07\x1b[2J\rfake line\x9b2J\x7f" medium=ble rssi=-60"#)
        #expect(screen.contains { $0.contains(#"\x1b]0;pwned"#) }, "\(screen)")
    }

    /// Issue 41: U+2028 and U+2029 break the line in some terminals and viewers, so a message could fake
    /// a line of its own; they are escaped like the controls, in the table and in pipe output.
    @Test func lineAndParagraphSeparatorsAreEscaped() {
        let content = "one\u{2028}two\u{2029}three"
        let plain = MonitorTable.plainLine(Self.found(content: content)) ?? ""
        #expect(plain == #"found/room/greeting "one\u2028two\u2029three" medium=ble rssi=-60"#)
        var table = MonitorTable()
        table.ingest(Self.found(content: content), now: Self.date)
        let screen = table.render(now: Self.date, width: 200, header: "h\u{2028}")
        for text in screen + [plain] {
            #expect(!text.unicodeScalars.contains { $0.value == 0x2028 || $0.value == 0x2029 }, "\(text.debugDescription)")
        }
        // U+2027 (E2 80 A7), the code point before them, is text and left as it is.
        #expect(MonitorTable.plainLine(Self.found(content: "a\u{2027}b")) == #"found/room/greeting "a\#u{2027}b" medium=ble rssi=-60"#)
    }
}
