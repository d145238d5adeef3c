@testable import NearbyProtocol
import SplitMix
import Testing
import Foundation
@testable import Broker

@Suite struct SocketCommandTests {
    static func parse(_ line: String) throws(SocketProtocolError) -> SocketCommand? {
        try SocketCommand.parse(Array(line.utf8))
    }

    static func message(_ ns: String, _ type: String, _ content: String) -> Message {
        Message(namespace: ns, type: type, content: Array(content.utf8))
    }

    static let good: [(String, SocketCommand)] = [
        ("PING", .ping),
        ("ping", .ping),
        ("  PING  ", .ping),
        ("SUB #", .subscribe(try! TopicFilter(parsing: "#"))),
        ("SUB\tfound/+/+", .subscribe(try! TopicFilter(parsing: "found/+/+"))),
        ("sub $SYS/#", .subscribe(try! TopicFilter(parsing: "$SYS/#"))),
        ("UNSUB found/a/#", .unsubscribe(try! TopicFilter(parsing: "found/a/#"))),
        ("PUB livingroom/greeting aGVsbG8=", .request(.publish(PublishRequest(message: message("livingroom", "greeting", "hello"))))),
        ("PUB livingroom/greeting aGVsbG8", .request(.publish(PublishRequest(message: message("livingroom", "greeting", "hello"))))),
        ("PUB a/b aGk= mediums=ble", .request(.publish(PublishRequest(message: message("a", "b", "hi"), mediums: [.ble])))),
        ("PUB a/b aGk= mediums=audio,ble mode=scan",
         .request(.publish(PublishRequest(message: message("a", "b", "hi"), mediums: [.ble, .audio], mode: .scan)))),
        ("PUB a/b aGk= mode=broadcast", .request(.publish(PublishRequest(message: message("a", "b", "hi"), mode: .broadcast)))),
        ("PUB ünï/cödé aGk=", .request(.publish(PublishRequest(message: message("ünï", "cödé", "hi"))))),
        ("UNPUB p-17", .request(.unpublish(handle: "p-17"))),
        ("SET permission granted", .request(.set(.permission(.granted)))),
        ("SET permission denied", .request(.set(.permission(.denied)))),
        ("SET permission UNDECIDED", .request(.set(.permission(.undecided)))),
        ("SET background on", .request(.set(.background(true)))),
        ("SET background false", .request(.set(.background(false)))),
        ("SET power standby", .request(.set(.power(.standby)))),
        ("SET power active", .request(.set(.power(.active)))),
        ("SET debug on", .request(.set(.debug(true)))),
        ("SET debug off", .request(.set(.debug(false)))),
        ("GET stats", .request(.get(.stats))),
        ("GET permission", .request(.get(.permission))),
        ("GET errors", .request(.get(.errors))),
        ("GET found", .request(.get(.found))),
        ("SUBSCRIBE kitchen/*", .request(.subscribeMessages(SubscribeRequest(namespace: "kitchen", type: "*")))),
        ("subscribe kitchen/timer mediums=ble mode=scan",
         .request(.subscribeMessages(SubscribeRequest(namespace: "kitchen", type: "timer", mediums: [.ble], mode: .scan)))),
        ("UNSUBSCRIBE s3", .request(.unsubscribeMessages(handle: "s3"))),
    ]

    @Test(arguments: good) func parses(line: String, expected: SocketCommand) throws {
        #expect(try Self.parse(line) == expected)
    }

    @Test(arguments: ["", " ", "\t", "   \t "]) func blankLinesAreIgnored(line: String) throws {
        #expect(try Self.parse(line) == nil)
    }

    static let bad: [(String, SocketErrorCode)] = [
        ("HELLO", .unknownVerb),
        ("PINGX", .unknownVerb),
        ("SUBSCRIBE #", .badTopic),
        ("SUBSCRIBES a/b", .unknownVerb),
        ("SUBSCRIBE", .missingArgument),
        ("SUBSCRIBE */b", .badTopic),
        ("SUBSCRIBE a/b/*", .badTopic),
        ("SUBSCRIBE a/* mediums=radio", .badArgument),
        ("SUBSCRIBE a/* mode=loud", .badArgument),
        ("SUBSCRIBE a/* mode=scan mode=both", .badArgument),
        ("SUBSCRIBE a/* extra", .badArgument),
        ("UNSUBSCRIBE", .missingArgument),
        ("UNSUBSCRIBE s1 s2", .badArgument),
        ("PING extra", .badArgument),
        ("SUB", .missingArgument),
        ("SUB a b", .badArgument),
        ("SUB a/#/b", .badFilter),
        ("SUB a+", .badFilter),
        ("SUB #/", .badFilter),
        ("UNSUB", .missingArgument),
        ("UNSUB a#", .badFilter),
        ("PUB", .missingArgument),
        ("PUB a/b", .missingArgument),
        ("PUB ab aGk=", .badTopic),
        ("PUB a/b/c aGk=", .badTopic),
        ("PUB /b aGk=", .badTopic),
        ("PUB a/ aGk=", .badTopic),
        ("PUB a+/b aGk=", .badTopic),
        ("PUB a/# aGk=", .badTopic),
        ("PUB \(String(repeating: "n", count: 33))/b aGk=", .badTopic),
        ("PUB a/\(String(repeating: "t", count: 33)) aGk=", .badTopic),
        ("PUB a/b a", .badBase64),
        ("PUB a/b aGl", .badBase64),            // non-zero leftover bits
        ("PUB a/b aG!=", .badBase64),
        ("PUB a/b aGk==", .badBase64),
        ("PUB a/b =", .badBase64),
        ("PUB a/b aGk=x", .badBase64),
        ("PUB a/b aGk= mediums=", .badArgument),
        ("PUB a/b aGk= mediums=wifi", .badArgument),
        ("PUB a/b aGk= mediums=ble,", .badArgument),
        ("PUB a/b aGk= mode=loud", .badArgument),
        ("PUB a/b aGk= mode=scan mode=both", .badArgument),
        ("PUB a/b aGk= colour=red", .badArgument),
        ("PUB a/b aGk= broadcast", .badArgument),
        ("UNPUB", .missingArgument),
        ("UNPUB a b", .badArgument),
        ("UNPUB \(String(repeating: "h", count: 65))", .badArgument),
        ("SET", .missingArgument),
        ("SET permission", .missingArgument),
        ("SET permission maybe", .badArgument),
        ("SET power off", .badArgument),
        ("SET background yes", .badArgument),
        ("SET debug 2", .badArgument),
        ("SET volume 3", .badArgument),
        ("SET debug on now", .badArgument),
        ("GET", .missingArgument),
        ("GET volume", .badArgument),
        ("GET stats now", .badArgument),
    ]

    @Test(arguments: bad) func refuses(line: String, code: SocketErrorCode) {
        #expect {
            try Self.parse(line)
        } throws: { error in
            (error as? SocketProtocolError)?.code == code
        }
    }

    @Test func refusesNULAndInvalidUTF8() {
        for bytes: [UInt8] in [[0x50, 0x49, 0x4E, 0x47, 0x00], [0x00], [0xFF, 0xFE], [0x53, 0x55, 0x42, 0x20, 0xC3],
                               [0xED, 0xA0, 0x80], [0xC0, 0x80], [0x50, 0x55, 0x42, 0x20, 0xF8, 0x88, 0x80, 0x80, 0x80]] {
            #expect(throws: SocketProtocolError.self) { try SocketCommand.parse(bytes) }
            #expect((try? SocketCommand.parse(bytes)) == nil)
            do {
                _ = try SocketCommand.parse(bytes)
            } catch {
                #expect(error.code == .badEncoding)
            }
        }
    }

    /// Whatever the bytes, parse returns or throws a protocol error: never traps.
    @Test func randomBytesNeverTrap() {
        var rng = SeededGenerator(seed: 42)
        let pieces = ["SUB ", "PUB ", "UNPUB ", "SET ", "GET ", "PING", " ", "/", "+", "#", "=", "a", "aGk=", "mode=", "\u{0}", "é"]
        var errors = 0
        for _ in 0..<20_000 {
            var line: [UInt8] = []
            for _ in 0..<(rng.next() % 8) {
                if rng.next() % 3 == 0 {
                    line.append(UInt8(truncatingIfNeeded: rng.next()))
                } else {
                    line += Array(pieces[Int(rng.next() % UInt64(pieces.count))].utf8)
                }
            }
            do { _ = try SocketCommand.parse(line) } catch { errors += 1 }
        }
        #expect(errors > 1000)
    }
}

@Suite struct SocketBase64Tests {
    // RFC 4648 §10 test vectors.
    static let vectors: [(String, String)] = [
        ("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("fooba", "Zm9vYmE="), ("foobar", "Zm9vYmFy"),
    ]

    @Test(arguments: vectors) func roundTrips(plain: String, encoded: String) {
        #expect(Base64.encode(Array(plain.utf8)) == encoded)
        #expect(Base64.decode(encoded) == Array(plain.utf8))
        let unpadded = String(encoded.filter { $0 != "=" })
        #expect(Base64.decode(unpadded) == Array(plain.utf8))
    }

    @Test func allByteValues() {
        let bytes = (0...255).map { UInt8($0) }
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
    }

    @Test(arguments: ["Z", "Zg=", "Zg===", "Zh==", "Zm9=", "Zm9v=", "Zm 9v", "Zm9v\n", "-_8=", "Zg==Zg==", "====", "Z==="])
    func refuses(text: String) {
        #expect(Base64.decode(text) == nil)
    }
}

@Suite struct SocketLineFramerTests {
    static func drain(_ framer: inout LineFramer) -> [LineFramer.Output] {
        var out: [LineFramer.Output] = []
        while let next = framer.next() { out.append(next) }
        return out
    }

    @Test func splitsLinesAndAcceptsCRLF() {
        var framer = LineFramer()
        framer.append(Array("PING\nSUB #\r\nhalf".utf8))
        #expect(Self.drain(&framer) == [.line(Array("PING".utf8)), .line(Array("SUB #".utf8))])
        framer.append(Array(" line\n".utf8))
        #expect(Self.drain(&framer) == [.line(Array("half line".utf8))])
        #expect(framer.bufferedBytes == 0)
    }

    @Test func oneByteAtATime() {
        var framer = LineFramer()
        var out: [LineFramer.Output] = []
        for byte in "a\r\nb\n\nc\r\r\n".utf8 {
            framer.append([byte])
            out += Self.drain(&framer)
        }
        #expect(out == [.line([0x61]), .line([0x62]), .line([]), .line([0x63, 0x0D])])
    }

    @Test func boundIsIncludingTheTerminator() {
        var framer = LineFramer(maxLineBytes: 8)
        framer.append(Array("1234567\n".utf8))           // 8 bytes with \n: fits
        framer.append(Array("12345678\n".utf8))          // 9: too long
        framer.append(Array("123456\r\n".utf8))          // 8 with CRLF: fits
        framer.append(Array("ok\n".utf8))
        #expect(Self.drain(&framer) == [.line(Array("1234567".utf8)), .tooLong, .line(Array("123456".utf8)), .line(Array("ok".utf8))])
    }

    @Test func endlessLineIsReportedOnceAndNeverBuffered() {
        var framer = LineFramer(maxLineBytes: 4096)
        var out: [LineFramer.Output] = []
        for _ in 0..<100 {
            framer.append([UInt8](repeating: 0x41, count: 1000))
            out += Self.drain(&framer)
            #expect(framer.bufferedBytes < 4096)
        }
        framer.append(Array("tail\nPING\n".utf8))
        out += Self.drain(&framer)
        #expect(out == [.tooLong, .line(Array("PING".utf8))])
    }

    @Test func manyLinesInOneAppend() {
        var framer = LineFramer()
        framer.append(Array(String(repeating: "PING\n", count: 10_000).utf8))
        let out = Self.drain(&framer)
        #expect(out.count == 10_000)
        #expect(out.allSatisfy { $0 == .line(Array("PING".utf8)) })
    }
}

@Suite struct SocketReplyLineTests {
    @Test func replies() {
        #expect(ReplyLine.encode(.ok()) == "OK\n")
        #expect(ReplyLine.encode(.ok("p-1")) == "OK p-1\n")
        #expect(ReplyLine.encode(.ok("")) == "OK\n")
        #expect(ReplyLine.encode(.ok("a\nb\r\nc")) == "OK a b c\n")
        #expect(ReplyLine.encode(.error(.notFound, "no publication p-9")) == "ERR not-found no publication p-9\n")
    }

    @Test func retainedIsAddedAsLastMember() {
        #expect(ReplyLine.event(topic: "found/a/b", json: #"{"namespace":"a"}"#, retained: true)
                == #"found/a/b {"namespace":"a","retained":true}"# + "\n")
        #expect(ReplyLine.event(topic: "$SYS/dropped", json: #"{"count":3}"#, retained: false)
                == #"$SYS/dropped {"count":3,"retained":false}"# + "\n")
        #expect(ReplyLine.event(topic: "t", json: "{}", retained: true) == #"t {"retained":true}"# + "\n")
        #expect(ReplyLine.event(topic: "t", json: "{ } ", retained: false) == #"t {"retained":false}"# + "\n")
        #expect(ReplyLine.event(topic: "t", json: "[1]", retained: false) == "t [1]\n")
    }
}

@Suite struct SocketEventJSONTests {
    @Test func foundEventHasEveryDocumentedField() {
        let message = Message(namespace: "livingroom", type: "greeting", content: Array("hi \"you\"".utf8))
        let date = Date(timeIntervalSince1970: 1_700_000_000.25)
        let json = SightingEvent.json(message: message, medium: .ble, rssi: -60, firstSeen: date, lastSeen: date)
        #expect(json == #"{"namespace":"livingroom","type":"greeting","content":"aGkgInlvdSI=","text":"hi \"you\"","medium":"ble","rssi":-60,"first_seen":"2023-11-14T22:13:20.250Z","last_seen":"2023-11-14T22:13:20.250Z"}"#)
        #expect(SightingEvent.topic(.lost, namespace: "a", type: "b") == "lost/a/b")
    }

    @Test func binaryContentHasNullTextAndMissingRSSIIsNull() {
        let message = Message(namespace: "n", type: "t", content: [0xFF, 0x00])
        let date = Date(timeIntervalSince1970: 0)
        let json = SightingEvent.json(message: message, medium: .audio, rssi: nil, firstSeen: date, lastSeen: date) {
            $0.add("url", "https://example.com")
        }
        #expect(json.contains(#""text":null"#))
        #expect(json.contains(#""rssi":null"#))
        #expect(json.hasSuffix(#""url":"https://example.com"}"#))
    }

    @Test func quoting() {
        #expect(JSONObjectWriter.quote("a\u{1}\n\\") == #""a\u0001\n\\""#)
        #expect(JSONObjectWriter.quote("é") == "\"é\"")
    }
}
