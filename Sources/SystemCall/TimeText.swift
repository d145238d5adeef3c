#if canImport(Glibc)
import Glibc
#endif

/// strftime(3) of a time in seconds since 1970, in UTC or the local zone: the state file's
/// `corrupt-<time>` name and the monitor's clock, without Foundation's formatters (which link ICU:
/// docs/footprint.md).
public enum TimeText {
    public static func format(_ secondsSince1970: Double, _ pattern: String, utc: Bool) -> String {
        var seconds = time_t(secondsSince1970.rounded(.down))
        var parts = tm()
        if utc { gmtime_r(&seconds, &parts) } else { localtime_r(&seconds, &parts) }
        var text = [CChar](repeating: 0, count: 64)
        let length = strftime(&text, text.count, pattern, &parts)
        return String(decoding: text.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
