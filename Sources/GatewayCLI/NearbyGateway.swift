import ArgumentParser
import Gateway

@main
struct NearbyGateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearby-gateway",
        abstract: "Publish and subscribe to nearby messages over BLE adverts and an ultrasound beacon.",
        subcommands: [
            RunCommand.self, CheckConfigCommand.self, BeaconCommand.self, DecodeCommand.self,
            MonitorCommand.self, BenchCommand.self,
        ]
    )
}
