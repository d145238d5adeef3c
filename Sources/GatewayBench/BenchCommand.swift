import ArgumentParser

/// `nearby-gateway-bench`: the measuring half of `scripts/bench`, a program of its own so the shipped
/// `nearby-gateway` carries none of it. Each subcommand measures our side
/// of one comparison and prints one JSON object; `tools/bench/run.py` runs the peers beside it,
/// prints the table and writes BENCHMARKS.md. Run `scripts/bench` rather than these directly.
@main
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nearby-gateway-bench",
        abstract: "Measure the gateway against its peers (run scripts/bench for the whole comparison).",
        subcommands: [
            BenchCorpusCommand.self, BenchPipelineCommand.self, BenchFanoutServerCommand.self,
            BenchFanoutClientsCommand.self, BenchMQTTPublisherCommand.self, BenchMQTTBridgeCommand.self, BenchModemCostCommand.self,
            BenchModemDecodeCommand.self, BenchModemChannelCommand.self, BenchFrameCryptoCommand.self, BenchIdentityCommand.self,
        ]
    )
}
