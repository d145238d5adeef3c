/// The two path splits the project needs, on the text of a path like NSString's
/// `lastPathComponent` and `deletingLastPathComponent` (trailing slashes ignored), without linking
/// Foundation (docs/footprint.md).
public enum PathText {
    /// "/var/lib/x/state.toml" → "state.toml"; "/a/b/" → "b"; "/" → "/"; "" → "".
    public static func lastComponent(_ path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        if trimmed.isEmpty { return path.isEmpty ? "" : "/" }
        guard let slash = trimmed.lastIndex(of: "/") else { return String(trimmed) }
        return String(trimmed[trimmed.index(after: slash)...])
    }

    /// "/var/lib/x/state.toml" → "/var/lib/x"; "/state.toml" → "/"; "state.toml" → "".
    public static func parent(_ path: String) -> String {
        let trimmed = withoutTrailingSlashes(path)
        guard let slash = trimmed.lastIndex(of: "/") else { return path.hasPrefix("/") ? "/" : "" }
        let parent = withoutTrailingSlashes(String(trimmed[..<slash]))
        return parent.isEmpty ? "/" : String(parent)
    }

    private static func withoutTrailingSlashes(_ path: String) -> Substring {
        var end = path.endIndex
        while end > path.startIndex, path[path.index(before: end)] == "/" { end = path.index(before: end) }
        return path[..<end]
    }
}
