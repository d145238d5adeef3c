import ArgumentParser
import Config
import SystemCall

struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Print a new random api_key (160 bits from getrandom).",
        discussion: """
        Prints one new key: 32 characters of a-z and 2-9 (no 0, o, 1 or l), 160 bits from the kernel's \
        random source. Make it once per deployment and put the same key in every gateway's api_key: \
        gateways with different keys cannot see each other. `check-config` warns about weaker keys.
        """
    )

    func run() throws {
        // Swift's system generator is getrandom(2) on Linux (blocking only until the kernel's pool is
        // first seeded at boot); Glibc's module does not export getrandom itself.
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<APIKeyStrength.generatedLength).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        Console.out(APIKeyStrength.generate(randomBytes: bytes) + "\n")
    }
}
