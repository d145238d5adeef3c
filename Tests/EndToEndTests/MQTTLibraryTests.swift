import Foundation
import Testing

extension EndToEnd {
    /// Issue 19: "no [mqtt] section = nothing linked at run time that costs memory". libmosquitto (and
    /// the libssl/libcrypto it needs) is loaded with dlopen only for an `[mqtt]` section.
    @Suite(.serialized)
    struct MQTTLibrary {
        static let tlsLibraries = ["libmosquitto", "libssl", "libcrypto"]

        /// The shared objects mapped into `pid`, by file name.
        static func mappedLibraries(_ pid: Int32) throws -> Set<String> {
            // Read to the end by cat: Foundation's String(contentsOfFile:) stopped at a page of this size-0 file.
            let maps = try ShellCommand.output("/bin/cat", ["/proc/\(pid)/maps"])
            return Set(maps.split(separator: "\n").compactMap { line in
                line.split(separator: " ", omittingEmptySubsequences: true).last.flatMap { path in
                    path.hasPrefix("/") ? String(path.split(separator: "/").last ?? "") : nil
                }
            })
        }

        static func mapped(_ libraries: Set<String>, _ name: String) -> Bool {
            libraries.contains { $0.hasPrefix(name + ".so") }
        }

        @Test("without [mqtt] neither libmosquitto nor libssl/libcrypto is mapped (nor NEEDED); with [mqtt] libmosquitto is")
        func libmosquittoIsMappedOnlyWithAnMQTTSection() async throws {
            let needed = try ShellCommand.output("/usr/bin/readelf", ["-d", TestEnvironment.gatewayBinary.path])
            #expect(!needed.contains("libmosquitto"), "the binary still links libmosquitto:\n\(needed)")

            let folder = try TemporaryFolder("mqtt-lib")
            let plain = try await TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mqtt-lib"), folder: folder, name: "plain").start()
            let without = try Self.mappedLibraries(plain.pid)
            #expect(without.contains { $0.hasPrefix("libc.so") } && without.contains { $0.hasPrefix("libasound.so") },
                    "maps of the gateway not read whole: \(without)")
            for name in Self.tlsLibraries {
                #expect(!Self.mapped(without, name), "\(name) is mapped in a gateway without [mqtt]: \(without.sorted())")
            }
            try await plain.stop()

            let broker = try MosquittoBroker(folder: folder)
            let mosquitto = try await broker.start()
            let sub = try await broker.subscribe(["lib/status"])
            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mqtt-lib"), folder: folder, name: "bridged")
            config.extra = broker.mqttSection(prefix: "lib", clientID: "gw-lib")
            let bridged = try await config.start()
            try await sub.waitForMessage("1 lib/status online")
            let with = try Self.mappedLibraries(bridged.pid)
            #expect(Self.mapped(with, "libmosquitto"), "libmosquitto is not mapped in a bridging gateway: \(with.sorted())")
            try await bridged.stop()
            try await sub.stop(signal: SIGKILL)
            try await mosquitto.stop(signal: SIGKILL)
        }

        /// A private mount namespace where libmosquitto.so.1 resolves to an empty file (/dev/null bound
        /// over it), so dlopen fails as on a box without the package, for this process only. An arm64
        /// gateway under qemu-user (scripts/arm64-test e2e) loads the arm64 root's library, not the host's.
        static func withoutLibmosquitto(_ command: String) -> [String] {
            let script = """
            set -e
            if [ -n "${QEMU_LD_PREFIX:-}" ]; then
                library=$(readlink -f "$(find "$QEMU_LD_PREFIX/usr/lib" -name libmosquitto.so.1 -print -quit)")
            else
                library=$(readlink -f "$(ldconfig -p | awk '$1 == "libmosquitto.so.1" { print $NF; exit }')")
            fi
            [ -f "$library" ] || { echo "no libmosquitto.so.1 to hide" >&2; exit 3; }
            mount --bind /dev/null "$library"
            exec "$NEARBY_BIN" \(command)
            """
            return ["-m", "--propagation", "private", "bash", "-c", script]
        }

        static func runWithoutLibmosquitto(_ command: String, config: String) async throws -> (status: Int32, output: String) {
            let process = try GatewayProcess(arguments: withoutLibmosquitto(command), configPath: config,
                                             environment: ["NEARBY_BIN": TestEnvironment.gatewayBinary.path],
                                             executable: URL(fileURLWithPath: "/usr/bin/unshare"))
            let status = try await process.stop(signal: 0, timeout: .seconds(15))   // signal 0: wait for the exit
            return (status, process.log)
        }

        @Test("libmosquitto missing: check-config and run with [mqtt] fail naming libmosquitto.so.1 and dlerror's cause; without [mqtt] both work")
        func aMissingLibmosquittoIsAClearError() async throws {
            let folder = try TemporaryFolder("mqtt-nolib")
            let broker = try MosquittoBroker(folder: folder)
            var config = TestGatewayConfig(apiKey: TestEnvironment.uniqueAPIKey("mqtt-nolib"), folder: folder, name: "nolib")
            config.extra = broker.mqttSection(prefix: "nolib", clientID: "gw-nolib")
            let path = try config.write()
            // The library's name, then dlerror's text for an empty file where the library should be
            // ("/lib/x86_64-linux-gnu/libmosquitto.so.1: file too short").
            let named = "cannot load libmosquitto.so.1 (Debian package libmosquitto1): /"
            let cause = "/libmosquitto.so.1: file too short"

            let check = try await Self.runWithoutLibmosquitto("check-config --config \(path)", config: path)
            #expect(check.status == 1, "check-config: \(check.output)")
            #expect(check.output.contains("\(path): [mqtt]: MQTT broker unix://\(broker.socketPath): \(named)"), "check-config: \(check.output)")
            #expect(check.output.contains(cause), "check-config: \(check.output)")

            let run = try await Self.runWithoutLibmosquitto("run --config \(path)", config: path)
            #expect(run.status != 0, "run: \(run.output)")
            #expect(run.output.contains("stopped: MQTT broker unix://\(broker.socketPath): \(named)"), "run: \(run.output)")
            #expect(run.output.contains(cause), "run: \(run.output)")
            #expect(!run.output.contains("listening"), "run started without the library: \(run.output)")

            // Without [mqtt] the same system runs the gateway: nothing asks for the library.
            config.extra = ""
            let plainPath = try config.write()
            let plainCheck = try await Self.runWithoutLibmosquitto("check-config --config \(plainPath)", config: plainPath)
            #expect(plainCheck.status == 0, "check-config without [mqtt]: \(plainCheck.output)")
            let plain = try GatewayProcess(arguments: Self.withoutLibmosquitto("run --config \(plainPath)"), configPath: plainPath,
                                           environment: ["NEARBY_BIN": TestEnvironment.gatewayBinary.path],
                                           executable: URL(fileURLWithPath: "/usr/bin/unshare"))
            try await plain.waitUntilReady()
            #expect(try await plain.stop() == 0, "\(plain.log)")
        }
    }
}
