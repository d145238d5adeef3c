import Glibc
import NearbyProtocol
import SystemCall

/// `[[identity]]` entries (docs/identities.md): a name and the IRK, inline (`irk`) or in a file of
/// its own (`irk_file`). The key is a secret: no problem repeats it, and a file holding one must be
/// readable by the gateway alone, as `mqtt.password_file` must.
enum IdentityEntries {
    static func read(_ root: TOMLTable, file: String?, reader: inout ConfigReader) -> [IdentityConfig] {
        guard let entry = root["identity"] else { return [] }
        guard let items = entry.value.array, items.allSatisfy({ $0.table != nil }) else {
            reader.problem(entry.line, "identity", "expected [[identity]] tables, found \(entry.value.typeName)")
            return []
        }
        var identities: [IdentityConfig] = []
        var lines: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let table = item.table!, prefix = "identity[\(index + 1)]"
            reader.checkKeys(table, prefix: prefix, allowed: ["name", "irk", "irk_file"])
            let before = reader.problems.count
            var name: String?
            if let (text, line) = reader.string(table, "name", prefix: prefix) {
                if let problem = Message.nameProblem(text, isNamespace: false) {
                    reader.problem(line, "\(prefix).name", problem)
                } else if let first = lines[text] {
                    reader.problem(line, "\(prefix).name", "\"\(text)\" is already the name of the identity on line \(first)")
                } else {
                    name = text
                    lines[text] = line
                }
            } else if table["name"] == nil {
                reader.problem(table.line, "\(prefix).name", "missing: the identity's name, its topic found/identity/<name>")
            }
            let key = self.key(table, prefix: prefix, file: file, reader: &reader)
            guard reader.problems.count == before, let name, let key else { continue }
            identities.append(IdentityConfig(name: name, key: key, line: table.line))
        }
        return identities
    }

    private static func key(_ table: TOMLTable, prefix: String, file: String?, reader: inout ConfigReader) -> IdentityKey? {
        let inline = reader.string(table, "irk", prefix: prefix)
        let path = reader.string(table, "irk_file", prefix: prefix)
        if let inline, let path {
            reader.problem(path.line, "\(prefix).irk_file", "set irk or irk_file, not both (irk is on line \(inline.line))")
            return nil
        }
        if let (text, line) = inline {
            if let file, let problem = worldReadable(file) {
                reader.problem(line, "\(prefix).irk", "\(problem): the key is a secret; chmod o-r the file, or move the key to irk_file")
                return nil
            }
            switch IdentityKey.parse(text) {
            case .success(let key): return key
            case .failure(let problem):
                reader.problem(line, "\(prefix).irk", "\(problem.message) (docs/identities.md lists the accepted forms)")
                return nil
            }
        }
        if let (file, line) = path {
            if let problem = MQTTSection.privateFileProblem(file) {
                reader.problem(line, "\(prefix).irk_file", problem)
                return nil
            }
            let bytes: [UInt8]
            do throws(Errno) {
                bytes = try SystemCall.readFile(file)
            } catch {
                reader.problem(line, "\(prefix).irk_file", "cannot read \(file): \(error)")
                return nil
            }
            // The first line that is not blank: the key alone, as a Keychain or BlueZ's info file gives it.
            let text = String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline)
                .first { !$0.allSatisfy(\.isWhitespace) }.map(String.init) ?? ""
            switch IdentityKey.parse(text) {
            case .success(let key): return key
            case .failure(let problem):
                reader.problem(line, "\(prefix).irk_file", "the key in \(file) \(problem.message) (docs/identities.md lists the accepted forms)")
                return nil
            }
        }
        if table["irk"] == nil && table["irk_file"] == nil {
            reader.problem(table.line, "\(prefix).irk", "missing: the device's IRK (irk, or irk_file naming a file that holds it)")
        }
        return nil
    }

    /// A config file holding a key inline must not be readable by every user of the machine.
    private static func worldReadable(_ path: String) -> String? {
        var info = stat()
        do throws(Errno) {
            try SystemCall.retrying { stat(path, &info) }
        } catch {
            return nil   // a file read from text (tests), or gone since: nothing to protect
        }
        let mode = info.st_mode & 0o777
        return mode & 0o004 != 0 ? "\(path) is readable by everyone (mode 0\(String(mode, radix: 8)))" : nil
    }

    /// `include` of a subscription: beacon families, `"identity"` for every identity, or
    /// `"identity/<name>"` for one.
    static func include(_ table: TOMLTable, prefix: String, identities: [IdentityConfig],
                        reader: inout ConfigReader) -> (families: [BeaconFilter], identities: [String]) {
        guard let entry = table["include"], !entry.value.isInvalid else { return ([], []) }
        let path = "\(prefix).include"
        guard let items = entry.value.array else {
            reader.problem(entry.line, path, "expected an array of strings, found \(entry.value.typeName)")
            return ([], [])
        }
        var families: [BeaconFilter] = [], names: [String] = []
        for item in items {
            guard let text = item.string else {
                reader.problem(item.line, path, "expected strings in the array, found \(item.typeName)")
                continue
            }
            if text.hasPrefix("identity/") {
                let name = String(text.dropFirst("identity/".count))
                if !identities.contains(where: { $0.name == name }) {
                    let known = identities.map { "\"\($0.name)\"" }.joined(separator: ", ")
                    reader.problem(item.line, path, "\"\(text)\": no [[identity]] is named \"\(name)\"\(known.isEmpty ? "" : " (known: \(known))")")
                } else if names.contains(name) {
                    reader.problem(item.line, path, "\"\(text)\" is listed twice")
                } else {
                    names.append(name)
                }
            } else if let family = BeaconFilter(rawValue: text) {
                if families.contains(family) { reader.problem(item.line, path, "\"\(text)\" is listed twice") } else { families.append(family) }
            } else {
                let choices = BeaconFilter.allCases.map { "\"\($0.rawValue)\"" } + ["\"identity/<name>\""]
                reader.problem(item.line, path, "\"\(text)\" is not one of \(choices.joined(separator: ", "))")
            }
        }
        if families.contains(.identity), identities.isEmpty {
            reader.problem(entry.line, path, "includes \"identity\", but there is no [[identity]]")
        }
        return (families, names)
    }
}
