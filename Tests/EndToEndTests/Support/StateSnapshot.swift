import Foundation

/// The three persisted values, read back from a state file the way any tool would: as JSON.
struct StateSnapshot: Hashable, CustomStringConvertible {
    var backgroundMode: Bool
    var permission: String
    var power: String

    static let defaults = StateSnapshot(backgroundMode: true, permission: "granted", power: "active")

    /// nil when the text is not a JSON object with exactly these three fields, typed and in range
    /// (JSONDecoder is strict: 1 is no boolean).
    init?(json text: String) {
        struct Fields: Decodable {
            var background_mode: Bool
            var permission: String
            var power: String
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], object.count == 3,
              let fields = try? JSONDecoder().decode(Fields.self, from: Data(text.utf8)),
              ["granted", "denied", "undecided"].contains(fields.permission), ["active", "standby"].contains(fields.power)
        else { return nil }
        self.init(backgroundMode: fields.background_mode, permission: fields.permission, power: fields.power)
    }

    init(backgroundMode: Bool, permission: String, power: String) {
        self.backgroundMode = backgroundMode
        self.permission = permission
        self.power = power
    }

    var description: String { "background=\(backgroundMode) permission=\(permission) power=\(power)" }

    /// A `SET` line that changes exactly one value, and the state after it.
    func randomChange(using random: inout some RandomNumberGenerator) -> (line: String, next: StateSnapshot) {
        var next = self
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            next.backgroundMode.toggle()
            return ("SET background \(next.backgroundMode ? "on" : "off")", next)
        case 1:
            next.permission = ["granted", "denied", "undecided"].filter { $0 != permission }.randomElement(using: &random)!
            return ("SET permission \(next.permission)", next)
        default:
            next.power = power == "active" ? "standby" : "active"
            return ("SET power \(next.power)", next)
        }
    }
}
