// swift-tools-version:6.0
import Foundation
import PackageDescription

// scripts/package sets NEARBY_GATEWAY_VERSION (from `git describe`) for `nearby-gateway --version`;
// only the tiny CVersion target is compiled with it, so a new version rebuilds one C file.
let version = ProcessInfo.processInfo.environment["NEARBY_GATEWAY_VERSION"]

let logging = Target.Dependency.product(name: "Logging", package: "swift-log")
// A file sees the extension members of the modules it imports, not of everything a dependency
// imports: otherwise a dependency's `import Foundation` would hand every file Foundation's String
// methods and the binary would link Foundation for them (docs/footprint.md).
let ownImportsOnly = SwiftSetting.enableUpcomingFeature("MemberImportVisibility")
// Release builds serialise a module's function bodies into its module file, so the modules that import
// it can inline them and specialise its generics: Gateway's FoundSet<DiscoveryKey, DiscoveryDetails>,
// and the bench's AirIngest.ingest for its sink. Without it every call from Gateway into NearbyProtocol's
// found set went through witness tables: the advert pipeline lost 30 % per CPU second when the split
// put the protocol in its own module (docs/architecture.md, "Module boundaries and speed").
let inlinableAcrossModules = SwiftSetting.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))

let package = Package(
    name: "nearby-gateway",
    products: [
        .executable(name: "nearby-gateway", targets: ["GatewayCLI"]),
        // The measuring half of scripts/bench: built and run by it, never shipped in the .deb.
        .executable(name: "nearby-gateway-bench", targets: ["GatewayBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
    ],
    targets: [
        // One system library per C library; nothing but the one wrapper file per library imports them.
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        // The MQTT bridge's client (docs/mqtt.md), libmosquitto, loaded with dlopen(3) only when the config
        // has [mqtt]; the little of <mosquitto.h> it uses is declared in its own header, so neither the
        // library nor libmosquitto-dev is needed to build; only Sources/MQTT/Mosquitto.swift imports it.
        .target(name: "CMosquitto"),
        // AES-128 for resolvable private addresses (docs/identities.md), from OpenSSL's libcrypto, loaded
        // with dlopen(3) only when the config has [[identity]]; its C file declares the six EVP functions
        // it calls, so building needs no libssl-dev. Only Sources/Radio/Privacy/AES128.swift imports it.
        .target(name: "CCrypto"),
        // libgpiod 1.6 (Debian 12) and 2.x (Debian 13) have different APIs: a small C shim compiled
        // against whichever <gpiod.h> is installed gives Swift one API for both (docs/leds.md).
        .target(name: "CGPIOD", cSettings: [.define("_GNU_SOURCE")], linkerSettings: [.linkedLibrary("gpiod")]),
        // The GNU calls Swift's Glibc module hides (ppoll, accept4, pipe2, SO_PEERCRED's ucred); only
        // Sources/SystemCall/Descriptor.swift imports it.
        .target(name: "CSocket"),
        // The system-call patterns (EINTR retried, EAGAIN as a value, write-all), `Errno`, every descriptor
        // opened close-on-exec, the one sockaddr_un and the one hex codec.
        .target(name: "SystemCall", dependencies: ["CSocket"], swiftSettings: [ownImportsOnly]),
        // SHA-256, HMAC-SHA256 and HKDF-SHA256: all the frames' keys and tags need (docs/architecture.md).
        // Value types that allocate nothing per hash; no C library, so nothing more to compile.
        .target(name: "Digest", swiftSettings: [ownImportsOnly]),
        // The version fixed at build time (scripts/package defines it; a plain build says 0.0.0-dev).
        .target(name: "CVersion", cSettings: version.map { [.define("NEARBY_GATEWAY_VERSION", to: "\"\($0)\"")] } ?? []),

        // The gateway's own modules, lowest first: each depends only on targets declared above it
        // (tools/check-imports/check_imports.py checks this, and that every file's imports are its
        // target's dependencies; docs/architecture.md draws the graph).
        // The protocol: messages and gateway state, frames (epochs, encryption, reassembly), the
        // found/lost set, socket events and their JSON. Values and pure logic only, no I/O.
        .target(name: "NearbyProtocol", dependencies: ["SystemCall", "Digest"],
                swiftSettings: [ownImportsOnly, inlinableAcrossModules]),
        // HCI codec, transports, advertiser and scanner, AD and beacon parsing.
        .target(name: "Radio", dependencies: ["CBluetooth", "CCrypto", "SystemCall", logging],
                swiftSettings: [ownImportsOnly]),
        // Optimised in debug builds too: the modem's tests run the decoder over minutes of audio, which
        // -Onone makes ~10× slower (checks stay on: -O, not -Ounchecked).
        .target(name: "Modem", dependencies: ["CALSA", "SystemCall"],
                swiftSettings: [ownImportsOnly, .unsafeFlags(["-O"], .when(configuration: .debug))]),
        // The front panel: LED patterns over libgpiod (or simulated), input lines.
        .target(name: "LEDs", dependencies: ["NearbyProtocol", "CGPIOD", "SystemCall", logging],
                swiftSettings: [ownImportsOnly]),
        // The UNIX-socket line protocol's broker: its own poll(2) thread, clients, subscriptions, retained events.
        .target(name: "Broker", dependencies: ["NearbyProtocol", "SystemCall", logging],
                swiftSettings: [ownImportsOnly]),
        // The socket's client side: a blocking line client (`monitor`, the tests, the bench's clients
        // can use it) and the table `monitor` shows a person. Not in Broker, so the daemon's callers
        // get no server and the server ships no client.
        .target(name: "LineClient", dependencies: ["NearbyProtocol", "SystemCall"],
                swiftSettings: [ownImportsOnly]),
        // gateway.toml and the board files: TOML, checks, every problem reported at once.
        .target(name: "Config", dependencies: ["NearbyProtocol", "SystemCall", logging],
                swiftSettings: [ownImportsOnly]),
        // The optional bridge to an MQTT broker (Home Assistant discovery) over libmosquitto.
        .target(name: "MQTT", dependencies: ["NearbyProtocol", "CMosquitto", "SystemCall", logging],
                swiftSettings: [ownImportsOnly]),
        // The core that wires the parts: the message manager, the state file, the `run` service.
        .target(
            name: "Gateway",
            dependencies: [
                "NearbyProtocol", "Config", "Broker", "LEDs", "MQTT", "Radio", "Modem", "SystemCall", logging,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [ownImportsOnly, inlinableAcrossModules]
        ),
        .executableTarget(
            name: "GatewayCLI",
            dependencies: ["Gateway", "NearbyProtocol", "Config", "Broker", "LineClient", "MQTT", "Modem", "Radio", "SystemCall", "CVersion", logging,
                           .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                           .product(name: "UnixSignals", package: "swift-service-lifecycle")],
            swiftSettings: [ownImportsOnly]
        ),

        // Below here: what only the tests, the fuzz targets and the bench link; the product (GatewayCLI,
        // above) links none of it.
        // The one seeded generator: the bench corpus, property tests and fault tests must replay the same
        // sequence from the same seed.
        .target(name: "SplitMix"),
        // What lies between a speaker and a microphone (band limit, echoes, clock offset, noise), from a
        // seed: the modem's tests and the bench's channel runs. Optimised in debug builds like Modem.
        .target(name: "ModemTestSupport", dependencies: ["Modem", "SplitMix", "SystemCall"],
                swiftSettings: [ownImportsOnly, .unsafeFlags(["-O"], .when(configuration: .debug))]),
        // What the tests and the fuzz seeds would otherwise each copy: a private btvirt, waiting with a
        // deadline, hex test vectors, HCI advertising-report packets, the config and frame fixtures.
        .target(name: "TestSupport", dependencies: ["NearbyProtocol", "Config", "SystemCall"]),
        // `nearby-gateway-bench`: our side of each comparison in BENCHMARKS.md (scripts/bench runs it).
        .executableTarget(
            name: "GatewayBench",
            dependencies: ["Gateway", "NearbyProtocol", "Config", "Broker", "MQTT", "Radio", "Modem", "ModemTestSupport",
                           "SplitMix", "SystemCall", logging,
                           .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: [ownImportsOnly]
        ),
        // Fuzz targets of every parser that takes outside bytes: libFuzzer under scripts/fuzz, corpus
        // replay in a plain build (docs/reliability.md).
        .executableTarget(name: "FuzzTargets", dependencies: ["Radio", "Modem", "NearbyProtocol", "Config", "Broker", "Gateway", "TestSupport"]),

        // One test target per module.
        .testTarget(name: "SystemCallTests", dependencies: ["SystemCall", "TestSupport"]),
        .testTarget(name: "DigestTests", dependencies: ["Digest", "TestSupport"]),
        .testTarget(name: "NearbyProtocolTests", dependencies: ["NearbyProtocol", "SplitMix", "TestSupport"]),
        .testTarget(name: "RadioTests", dependencies: ["Radio", "SplitMix", "SystemCall", "TestSupport", logging]),
        .testTarget(name: "ModemTests", dependencies: ["Modem", "ModemTestSupport", "SplitMix", "SystemCall"]),
        .testTarget(name: "LEDsTests", dependencies: ["LEDs", "SystemCall", "TestSupport", logging]),
        .testTarget(name: "BrokerTests", dependencies: ["Broker", "LineClient", "NearbyProtocol", "SplitMix", "SystemCall", "TestSupport", logging]),
        .testTarget(name: "LineClientTests", dependencies: ["LineClient", "Broker", "NearbyProtocol"]),
        .testTarget(name: "ConfigTests", dependencies: ["Config", "NearbyProtocol", "Radio", "TestSupport"]),
        .testTarget(name: "MQTTTests", dependencies: ["MQTT", "Config", "NearbyProtocol", "SystemCall", logging]),
        .testTarget(name: "GatewayTests", dependencies: ["Gateway", "NearbyProtocol", "Config", "Broker", "LEDs", "MQTT", "Radio",
                                                          "SplitMix", "SystemCall", "TestSupport", logging]),
        // Drives the built `nearby-gateway` binary against btvirt, ALSA's file plugin and the socket.
        .testTarget(name: "EndToEndTests", dependencies: ["NearbyProtocol", "LineClient", "Radio", "SplitMix", "SystemCall", "TestSupport", logging]),
    ]
)
