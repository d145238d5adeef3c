import Glibc
import NearbyProtocol

/// The one line `systemctl status` shows (sd_notify's `STATUS=`): "running" only while no error state
/// is raised; otherwise every raised error with its cause, so a box whose radio is down does not look
/// healthy at a glance. The causes are the ones the log and `$SYS/error/...` carry.
public enum SystemdStatus {
    /// Longest cause kept per error: systemd shows one line, and a cause can quote a whole config problem.
    static let causeLimit = 160

    public static func text(errors: [GatewayErrorState: String]) -> String {
        guard !errors.isEmpty else { return "running" }
        let parts = errors.sorted { $0.key.rawValue < $1.key.rawValue }.map { error, cause in
            "\(error.rawValue) (\(shortened(cause)))"
        }
        return "running with \(errors.count == 1 ? "an error" : "\(errors.count) errors"): " + parts.joined(separator: "; ")
    }

    /// The line without the spaces and tabs at its ends.
    private static func trimmed(_ line: Substring) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        var rest = line.drop(while: blank)
        while let last = rest.last, blank(last) { rest = rest.dropLast() }
        return rest
    }

    /// One line (a cause may hold newlines, e.g. a refused config), at most `causeLimit` characters.
    private static func shortened(_ cause: String) -> String {
        let line = cause.split(whereSeparator: \.isNewline).map(trimmed)
            .filter { !$0.isEmpty }.joined(separator: " ")
        return line.count <= causeLimit ? line : String(line.prefix(causeLimit - 1)) + "…"
    }
}
