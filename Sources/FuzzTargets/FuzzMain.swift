import Foundation

/// `FuzzTargets <target> [libFuzzer options] [corpus dirs]`: one binary for every parser that takes
/// outside bytes (`scripts/fuzz` drives it).
///
/// Built by `scripts/fuzz` with `-DFUZZING`, coverage instrumentation and AddressSanitizer, it hands
/// the chosen target to libFuzzer's driver. A plain `swift build` has no libFuzzer: the same binary
/// then replays files and folders through the target (the corpus as a regression test), or writes
/// the seed corpora with `--write-seeds DIR`.
@main
enum FuzzMain {
    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "--write-seeds", arguments.count == 2 {
            // The seeds come from internal encoders (`@testable import`), which a plain release build
            // cannot reach; `swift build -c release` must still build every product.
            #if DEBUG || FUZZING
            exit(SeedWriter.writeAll(into: arguments[1]))
            #else
            FileHandle.standardError.write(Data("FuzzTargets: --write-seeds needs a debug build (scripts/fuzz --seeds)\n".utf8))
            exit(2)
            #endif
        }
        // libFuzzer re-runs this binary for -merge, -fork and -jobs with its own arguments only: the
        // target then comes from the environment set below.
        let inherited = ProcessInfo.processInfo.environment[FuzzTarget.environmentVariable].flatMap(FuzzTarget.named)
        if let target = inherited, arguments.first.flatMap(FuzzTarget.named) == nil {
            #if FUZZING
            exit(LibFuzzer.run(target, arguments: CommandLine.arguments))
            #else
            exit(Replay.run(target, paths: arguments))
            #endif
        }
        guard let name = arguments.first, let target = FuzzTarget.named(name) else {
            let names = FuzzTarget.all.map(\.name).joined(separator: ", ")
            FileHandle.standardError.write(Data("usage: FuzzTargets <target> [options] [corpus...] | --write-seeds DIR\ntargets: \(names)\n".utf8))
            exit(2)
        }
        #if FUZZING
        setenv(FuzzTarget.environmentVariable, target.name, 1)
        exit(LibFuzzer.run(target, arguments: CommandLine.arguments[0..<1] + arguments.dropFirst()))
        #else
        exit(Replay.run(target, paths: Array(arguments.dropFirst())))
        #endif
    }
}

#if FUZZING
@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// libFuzzer's own driver (from `libclang_rt.fuzzer_no_main`), called with the target's C entry point
/// and the remaining arguments, so every libFuzzer option works as documented.
enum LibFuzzer {
    static func run(_ target: FuzzTarget, arguments: some Collection<String>) -> Int32 {
        var argc = Int32(arguments.count)
        let strings = arguments.map { strdup($0) } + [nil]
        let argvStorage = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: strings.count)
        argvStorage.initialize(from: strings, count: strings.count)
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argvStorage
        return LLVMFuzzerRunDriver(&argc, &argv, target.entry)
    }
}
#endif

/// Without libFuzzer: every file given (folders: every file in them) goes through the target once.
enum Replay {
    static func run(_ target: FuzzTarget, paths: [String]) -> Int32 {
        var files: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                FileHandle.standardError.write(Data("\(path): no such file or folder\n".utf8))
                return 1
            }
            if isFolder.boolValue {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                files += names.sorted().map { "\(path)/\($0)" }
            } else {
                files.append(path)
            }
        }
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else { continue }
            data.withUnsafeBytes { bytes in
                _ = target.entry(bytes.bindMemory(to: UInt8.self).baseAddress, bytes.count)
            }
        }
        print("\(target.name): \(files.count) inputs replayed, no crash")
        return 0
    }
}
