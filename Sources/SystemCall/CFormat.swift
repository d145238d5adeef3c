#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// printf-style formatting of numbers through vsnprintf(3): Foundation's `String(format:)`
    /// without linking Foundation (docs/footprint.md). C conversions only (`%.1f`, `%02x`, `%+.0f`,
    /// `%8.3f`, `%04X`…): there is no `%@`; interpolate strings instead.
    public init(cFormat format: String, _ arguments: CVarArg...) {
        let needed = withVaList(arguments) { vsnprintf(nil, 0, format, $0) }
        guard needed > 0 else {
            self = ""
            return
        }
        var buffer = [CChar](repeating: 0, count: Int(needed) + 1)
        _ = withVaList(arguments) { vsnprintf(&buffer, buffer.count, format, $0) }
        self = String(decoding: buffer.prefix(Int(needed)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
