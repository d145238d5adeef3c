import Foundation
import Config

/// Configs for tests: loaded from text against the repository's boards, with every problem listed.
public enum ConfigFixture {
    /// The repository: `NEARBY_REPO` (set by scripts/test), else found from this file
    /// (Sources/TestSupport/ConfigFixture.swift); a bundle cross-built where the repository is /src
    /// (the arm64 tests) runs here.
    public static let repository: String = {
        if let path = ProcessInfo.processInfo.environment["NEARBY_REPO"], !path.isEmpty { return path }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }()
    public static let boards = BoardCatalog(directories: ["\(repository)/boards"])

    public static func load(_ text: String) throws(ConfigError) -> (GatewayConfig, Board) {
        try ConfigLoader.load(text: text, file: "test.toml", boards: boards)
    }

    /// An example of the repository with its placeholder key replaced, as a user does first.
    public static func loadExample(_ name: String) throws -> (GatewayConfig, Board) {
        let text = try String(contentsOfFile: "\(repository)/examples/\(name)", encoding: .utf8)
        return try ConfigLoader.load(text: text.replacingOccurrences(of: "\"CHANGE-ME\"", with: "\"a-real-key\""),
                                     file: name, boards: boards)
    }

    /// The problems of `text` as "LINE: key: message" (nil line printed as "-").
    public static func problems(_ text: String, boards: BoardCatalog = boards) -> [String] {
        do {
            _ = try ConfigLoader.load(text: text, file: "test.toml", boards: boards)
            return []
        } catch {
            return error.problems.map { "\($0.line.map(String.init) ?? "-"): \($0.key): \($0.message)" }
        }
    }
}
