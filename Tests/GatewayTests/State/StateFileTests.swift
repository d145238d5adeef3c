import Foundation
@testable import NearbyProtocol
import SystemCall
import Testing
@testable import Gateway

@Suite struct StateFileTests {
    let folder: String
    let defaults = GatewayState(backgroundMode: true, permission: .undecided, power: .active)
    let bootTime = Date(timeIntervalSince1970: 1_740_000_000)   // 2025-02-19T21:20:00Z

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    var path: String { "\(folder)/state.json" }

    func write(_ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    func folderContents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    }

    @Test func missingFileMeansDefaultsSilently() {
        let (state, problem) = StateFile(path: path).load(defaults: defaults)
        #expect(state == defaults)
        #expect(problem == nil)
    }

    @Test func savedStateLoadsBack() throws {
        let file = StateFile(path: path)
        let state = GatewayState(backgroundMode: false, permission: .denied, power: .standby)
        try file.save(state)
        #expect(file.load(defaults: defaults) == (state, nil))
        try file.save(GatewayState())
        #expect(file.load(defaults: defaults).0 == GatewayState())
        #expect(try folderContents() == ["state.json"])   // no temporary file left behind
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == "{\"background_mode\": true, \"permission\": \"granted\", \"power\": \"active\"}\n")
    }

    /// A writer SIGKILLed between creating its temporary file and the rename leaves it behind; the next
    /// load removes those of dead processes (found by the end-to-end kill test), never a live one's.
    @Test func loadRemovesTemporariesOfDeadWriters() throws {
        try write(#"{"power": "standby"}"#)
        let dead = "\(folder)/.state.json.tmp-\(Int32.max - 1)"          // no such pid (pid_max is lower)
        let live = "\(folder)/.state.json.tmp-1"                          // init: alive
        let other = "\(folder)/.other.json.tmp-\(Int32.max - 1)"         // not this file's
        for file in [dead, live, other] { try Data("{".utf8).write(to: URL(fileURLWithPath: file)) }
        let (state, problem) = StateFile(path: path).load(defaults: defaults)
        #expect(problem == nil)
        #expect(state.power == .standby)
        #expect(try folderContents() == [".other.json.tmp-\(Int32.max - 1)", ".state.json.tmp-1", "state.json"])
    }

    @Test func missingKeysTakeDefaults() throws {
        try write(#"{"power": "standby", "future_key": 3}"#)
        let (state, problem) = StateFile(path: path).load(defaults: defaults)
        #expect(problem == nil)
        #expect(state == GatewayState(backgroundMode: true, permission: .undecided, power: .standby))
    }

    @Test(arguments: [
        ("", "empty"),
        ("  \n", "empty"),
        (#"{"background_mode": true, "permiss"#, "not JSON (truncated or damaged)"),
        ("\u{0}\u{1}garbage", "not JSON (truncated or damaged)"),
        ("[1, 2]", "not a JSON object"),
        (#"{"background_mode": 1}"#, "background_mode: wrong type"),
        (#"{"background_mode": "yes"}"#, "background_mode: wrong type"),
        (#"{"permission": true}"#, "permission: wrong type"),
        (#"{"permission": "maybe"}"#, #"permission: expected "granted", "denied" or "undecided", not "maybe""#),
        (#"{"power": "off"}"#, #"power: expected "active" or "standby", not "off""#),
    ])
    func corruptFilesAreKeptAsideAndDefaultsUsed(content: String, reason: String) throws {
        try write(content)
        let (state, problem) = StateFile(path: path).load(defaults: defaults, now: bootTime)
        #expect(state == defaults)
        let aside = "\(path).corrupt-20250219T212000Z"
        #expect(problem == StateFileProblem(path: path, reason: reason, movedTo: aside))
        #expect(problem?.description == "\(path): \(reason); using defaults with consent withheld; kept aside as \(aside)")
        #expect(try String(contentsOfFile: aside, encoding: .utf8) == content)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    /// Issue 13: a damaged file may have said "denied"; a default of "granted" must not put the
    /// gateway on the air. Consent falls back to undecided (or stays denied); the rest are the defaults.
    @Test(arguments: [(Permission.granted, Permission.undecided), (.undecided, .undecided), (.denied, .denied)])
    func aDamagedOrUnreadableFileWithholdsConsent(defaultPermission: Permission, expected: Permission) throws {
        let defaults = GatewayState(backgroundMode: false, permission: defaultPermission, power: .standby)
        try write(#"{"permission": "denied", "pow"#)
        let (damaged, problem) = StateFile(path: path).load(defaults: defaults, now: bootTime)
        #expect(problem != nil)
        #expect(damaged == GatewayState(backgroundMode: false, permission: expected, power: .standby))
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)   // unreadable: EISDIR
        let (unreadable, readProblem) = StateFile(path: path).load(defaults: defaults, now: bootTime)
        #expect(readProblem?.movedTo == nil)
        #expect(unreadable.permission == expected)
        // A missing file is a first boot, not a lost decision: the defaults as they are.
        try FileManager.default.removeItem(atPath: path)
        #expect(StateFile(path: path).load(defaults: defaults) == (defaults, nil))
    }

    @Test func twoCorruptFilesInOneSecondBothKept() throws {
        try write("x")
        _ = StateFile(path: path).load(defaults: defaults, now: bootTime)
        try write("y")
        let (_, problem) = StateFile(path: path).load(defaults: defaults, now: bootTime)
        #expect(problem?.movedTo == "\(path).corrupt-20250219T212000Z-1")
        #expect(try folderContents() == ["state.json.corrupt-20250219T212000Z", "state.json.corrupt-20250219T212000Z-1"])
    }

    @Test func unreadableFileIsReportedNotMoved() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)   // a folder, not a file
        let (state, problem) = StateFile(path: path).load(defaults: defaults)
        #expect(state == defaults)
        #expect(problem?.movedTo == nil)
        #expect(problem?.reason.contains("errno 21") == true)   // EISDIR on read
    }

    @Test func saveErrorsNameThePathAndErrno() {
        let missing = StateFile(path: "\(folder)/no-such-folder/state.json")
        #expect(throws: StateFileError(path: "\(folder)/no-such-folder/.state.json.tmp-\(getpid())", operation: "open", errno: Errno(rawValue: ENOENT))) {
            try missing.save(GatewayState())
        }
        // sysfs refuses new files even to root: the closest thing to a read-only folder on this machine.
        do {
            try StateFile(path: "/sys/nearby-gateway-state.json").save(GatewayState())
            Issue.record("saved into /sys")
        } catch {
            #expect(error.operation == "open")
            #expect([EACCES, EROFS, EPERM].contains(error.errno.rawValue))
            #expect(error.description.hasPrefix("/sys/.nearby-gateway-state.json.tmp-"))
            #expect(error.description.contains("errno \(error.errno.rawValue)"))
        }
        let full = StateFileError(path: "/var/lib/nearby-gateway/state.json", operation: "write", errno: Errno(rawValue: ENOSPC))
        #expect(full.description == "/var/lib/nearby-gateway/state.json: write failed: No space left on device (errno 28)")
    }
}
