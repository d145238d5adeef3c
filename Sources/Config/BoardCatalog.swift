import FoundationEssentials
import Glibc
import SystemCall

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
        var folder = PathText.parent(resolved(path))
        while !folder.isEmpty {
            let candidate = folder == "/" ? "/boards" : "\(folder)/boards"
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return candidate }
            let parent = PathText.parent(folder)
            if parent == folder { return nil }
            folder = parent
        }
        return nil
    }

    /// `path` absolute and without symbolic links (realpath(3)); as given, made absolute, if it
    /// does not exist.
    private static func resolved(_ path: String) -> String {
        if let real = realpath(path, nil) {
            defer { free(real) }
            return String(cString: real)
        }
        if path.hasPrefix("/") { return path }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        return "\(String(cString: cwd))/\(path)"
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
        let text: String
        do throws(Errno) {
            text = String(decoding: try SystemCall.readFile(path), as: UTF8.self)
        } catch {
            throw ConfigError(problems: [ConfigProblem(file: path, line: nil, key: "", message: "cannot read: \(error)")])
        }
        do throws(TOMLError) {
            table = try TOML.parse(text)
        } catch {
            throw ConfigError(problems: [ConfigProblem(file: path, line: error.line, key: "", message: error.message)])
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
