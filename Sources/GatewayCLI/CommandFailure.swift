/// A command that was used correctly but could not do its work (a file missing, a config refused, a
/// recording in another format): ArgumentParser prints "Error: <description>" and exits 1, without
/// the usage text that belongs to usage errors (`ValidationError`, exit 64).
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
