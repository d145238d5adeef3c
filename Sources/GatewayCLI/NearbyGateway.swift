import ArgumentParser
import CVersion

@main
struct NearbyGateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearby-gateway",
        abstract: "Publish and subscribe to nearby messages over BLE adverts and an ultrasound beacon.",
        discussion: """
            The configuration is /etc/nearby-gateway/gateway.toml; boards are in /usr/share/nearby-gateway/boards. \
            As a service the gateway runs under systemd (nearby-gateway.service) and is watched with \
            `journalctl -u nearby-gateway` and `nearby-gateway monitor`.
            """,
        version: String(cString: nearby_gateway_version()),
        subcommands: [
            RunCommand.self, CheckConfigCommand.self, KeyCommand.self, BeaconCommand.self, DecodeCommand.self,
            MonitorCommand.self,
        ]
    )
}
