import Foundation

/// Finds board files. Search order: `$NEARBY_GATEWAY_BOARDS`, `/usr/share/nearby-gateway/boards`, then a
/// `boards/` folder in the executable's folder or any folder above it (so a binary in `.build/debug`
/// finds the repository's boards).
public struct BoardCatalog: Sendable {
    public var directories: [String]

    public init(directories: [String]) {
        self.directories = directories
    }

    public static let environmentVariable = "NEARBY_GATEWAY_BOARDS"
    public static let installedDirectory = "/usr/share/nearby-gateway/boards"

    /// The standard search path for this process.
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment,
                                executable: String? = nil) -> BoardCatalog {
        var directories: [String] = []
        if let custom = environment[environmentVariable], !custom.isEmpty { directories.append(custom) }
        directories.append(installedDirectory)
        if let found = boardsAbove(executable ?? executablePath()) { directories.append(found) }
        return BoardCatalog(directories: directories)
    }

    /// The first `boards/` folder in `path`'s folder or above.
    static func boardsAbove(_ path: String?) -> String? {
        guard let path else { return nil }
        var folder = URL(fileURLWithPath: path).resolvingSymlinksInPath().deletingLastPathComponent()
        while true {
            let candidate = folder.appendingPathComponent("boards").path
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), isDirectory.boolValue { return candidate }
            let parent = folder.deletingLastPathComponent()
            if parent.path == folder.path { return nil }
            folder = parent
        }
    }

    private static func executablePath() -> String? {
        if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return link }
        return CommandLine.arguments.first
    }

    /// Board names are file names: letters, digits, '-' and '_' only (no paths).
    public static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { c in
            (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39) || c == 0x2D || c == 0x5F
        }
    }

    /// The file of `name` in the first directory that has it.
    public func file(for name: String) -> String? {
        guard Self.isValidName(name) else { return nil }
        return directories.lazy.map { "\($0)/\(name).toml" }.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    /// Every board name found, sorted.
    public func names() -> [String] {
        var names = Set<String>()
        for directory in directories {
            for file in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where file.hasSuffix(".toml") {
                names.insert(String(file.dropLast(5)))
            }
        }
        return names.sorted()
    }

    /// Loads and checks board `name`.
    public func load(_ name: String) throws(ConfigError) -> Board {
        guard let path = file(for: name) else {
            throw ConfigError(problems: [ConfigProblem(file: "", line: nil, key: "board", message: "unknown board")])
        }
        let table: TOMLTable
        do {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            table = try TOML.parse(text)
        } catch let error as TOMLError {
            throw ConfigError(problems: [ConfigProblem(file: path, line: error.line, key: "", message: error.message)])
        } catch {
            throw ConfigError(problems: [ConfigProblem(file: path, line: nil, key: "", message: "cannot read: \(error.localizedDescription)")])
        }
        switch Board.parse(table, path: path) {
        case .success(let board):
            guard board.name == name else {
                throw ConfigError(problems: [ConfigProblem(file: path, line: table["name"]?.line, key: "name",
                                                           message: "is \"\(board.name)\" but the file is \(name).toml")])
            }
            return board
        case .failure(let error):
            throw error
        }
    }
}
