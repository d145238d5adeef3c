/// One fuzz target: a name and a C entry point libFuzzer can call (no captured context, so each
/// target is a static function behind a non-capturing closure).
struct FuzzTarget: Sendable {
    typealias Entry = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    let name: String
    /// What it covers, for `scripts/fuzz` and docs/reliability.md.
    let covers: String
    let entryIndex: Int

    var entry: Entry { FuzzTarget.entry(entryIndex) }

    static let all: [FuzzTarget] = [
        FuzzTarget(name: "h4-stream", covers: "H4Deframer over a byte stream cut anywhere, then HCIEvent.parse, reports, AD, beacons", entryIndex: 0),
        FuzzTarget(name: "hci-event", covers: "HCIEvent.parse of one event packet, advertising report walk, controller responses", entryIndex: 1),
        FuzzTarget(name: "ad-beacon", covers: "ADStructure.parse (eager and lazy, must agree), Eddystone UID/URL/TLM and iBeacon parsers", entryIndex: 2),
        FuzzTarget(name: "frames", covers: "Reassembler: BLE adverts and audio payloads from 4 sources over time; memory bounds; only authentic messages", entryIndex: 3),
        FuzzTarget(name: "socket-line", covers: "LineFramer over chunks, SocketCommand.parse, TopicFilter parse/match, base64", entryIndex: 4),
        FuzzTarget(name: "config-toml", covers: "ConfigLoader.load(text:file:boards:): TOML parser and every key check", entryIndex: 5),
        FuzzTarget(name: "state-file", covers: "StateFile.decode: the JSON state file read at boot", entryIndex: 6),
        FuzzTarget(name: "wav", covers: "WAVParser.parse: RIFF chunks, PCM/float/extensible formats", entryIndex: 7),
        FuzzTarget(name: "modem-rx", covers: "GGWaveDecoder.feed on arbitrary 16-bit audio in arbitrary chunk sizes", entryIndex: 8),
    ]

    static func named(_ name: String) -> FuzzTarget? { all.first { $0.name == name } }

    /// Names the target for the processes libFuzzer starts itself (merge, fork, jobs).
    static let environmentVariable = "NEARBY_FUZZ_TARGET"

    private static func entry(_ index: Int) -> Entry {
        #if DEBUG || FUZZING
        switch index {
        case 0: return { data, count in RadioTargets.h4Stream(FuzzInput(data, count)); return 0 }
        case 1: return { data, count in RadioTargets.hciEvent(FuzzInput(data, count)); return 0 }
        case 2: return { data, count in RadioTargets.adBeacon(FuzzInput(data, count)); return 0 }
        case 3: return { data, count in FrameTargets.frames(FuzzInput(data, count)); return 0 }
        case 4: return { data, count in SocketTargets.socketLine(FuzzInput(data, count)); return 0 }
        case 5: return { data, count in ConfigTargets.configTOML(FuzzInput(data, count)); return 0 }
        case 6: return { data, count in ConfigTargets.stateFile(FuzzInput(data, count)); return 0 }
        case 7: return { data, count in ModemTargets.wav(FuzzInput(data, count)); return 0 }
        default: return { data, count in ModemTargets.modemReceiver(FuzzInput(data, count)); return 0 }
        }
        #else
        // The targets reach internal parsers through `@testable import`, which a plain release build
        // does not allow; `swift build` (debug) and `scripts/fuzz` both have them.
        return { _, _ in fatalError("FuzzTargets: build it in debug (swift build) or with scripts/fuzz") }
        #endif
    }
}

/// The fuzzer's bytes, consumed front to back: control bytes first (chunk sizes, sources, time
/// steps), payload after. Past the end every read is zero/empty, so any input is a valid program.
struct FuzzInput {
    let bytes: [UInt8]
    private var offset = 0

    init(_ data: UnsafePointer<UInt8>?, _ count: Int) {
        bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []
    }

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isEmpty: Bool { offset >= bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let end = min(bytes.count, offset + max(0, count))
        defer { offset = end }
        return bytes[offset..<end]
    }

    mutating func rest() -> ArraySlice<UInt8> { take(remaining) }
}

/// A broken invariant is a crash, so libFuzzer keeps the input that caused it.
func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("invariant broken: \(message())") }
}
