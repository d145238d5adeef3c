import FoundationEssentials
import NearbyProtocol
import SplitMix
import Testing

/// The event JSON is written byte by byte (it runs once per found, lost or signal change on the
/// loop that reads the adverts); these hold it to what Foundation and the scalar-by-scalar escaping
/// it replaced produce.
@Suite struct EventJSONTests {
    /// The escaping the byte writer replaced, scalar by scalar: the reference.
    private static func referenceQuote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{2028}" || scalar == "\u{2029}":
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    @Test func quotingEscapesControlsAndLineSeparatorsAndNothingElse() {
        #expect(JSONObjectWriter.quote("a\"b\\c\nd\u{0}\u{7F}\u{85}\u{9F}\u{A0}\u{2028}\u{2029}\u{2027}\u{202A}é€😀")
                == "\"a\\\"b\\\\c\\nd\\u0000\\u007f\\u0085\\u009f\u{A0}\\u2028\\u2029\u{2027}\u{202A}é€😀\"")
        // Strings drawn from the scalars around every boundary the escaping has.
        let scalars: [UInt32] = [0x0, 0x9, 0xA, 0x1F, 0x20, 0x22, 0x41, 0x5C, 0x7E, 0x7F, 0x80, 0x85, 0x9F, 0xA0, 0xFF,
                                 0x7FF, 0x800, 0x2027, 0x2028, 0x2029, 0x202A, 0x20AC, 0xFFFD, 0x1F600]
        var random = SeededGenerator(seed: 38)
        for _ in 0..<2000 {
            var text = ""
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                text.unicodeScalars.append(Unicode.Scalar(scalars.randomElement(using: &random)!)!)
            }
            #expect(JSONObjectWriter.quote(text) == Self.referenceQuote(text), "\(Array(text.unicodeScalars))")
        }
    }

    @Test func anObjectKeepsItsMembersInOrder() {
        var writer = JSONObjectWriter()
        #expect(writer.string == "{}")
        writer.add("a", "x\ty")
        writer.add("b", nil as String?)
        writer.add("c", -5)
        writer.add("d", nil as Int?)
        writer.add("e", true)
        writer.add("f", rawJSON: "[1,2]")
        #expect(writer.string == #"{"a":"x\ty","b":null,"c":-5,"d":null,"e":true,"f":[1,2]}"#)
    }

    @Test func timestampsAreFoundationsISO8601WithMilliseconds() {
        let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var random = SeededGenerator(seed: 8601)
        var dates = [Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 951_782_400.999),   // 2000-02-29
                     Date(timeIntervalSince1970: 4_107_542_399.5), Date(timeIntervalSince1970: 1_767_225_599.9995)]
        for _ in 0..<5000 { dates.append(Date(timeIntervalSince1970: Double.random(in: 0..<4_102_444_800, using: &random))) }
        for date in dates {
            #expect(SightingEvent.timestamp(date) == date.formatted(style), "\(date.timeIntervalSince1970)")
        }
    }
}
