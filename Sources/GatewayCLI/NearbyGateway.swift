import ArgumentParser
import CVersion
import Dispatch
import SystemCall

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

/// The process's entry. An `async` main ends in `dispatch_main()`, whose `pthread_exit` unwinds the main
/// thread's stack through `.eh_frame_hdr` and `.eh_frame`, file pages the kernel then maps 64 KB at a
/// time (fault-around): idle RSS for nothing (docs/footprint-idle.md). So the arguments are parsed here,
/// a synchronous command (`monitor`, `key`) runs on this thread, and an asynchronous one runs on the
/// cooperative pool while this thread waits for it. Nothing uses the main actor.
@main
enum Entry {
    static func main() {
        SystemCall.unblockAllSignals()
        let command: any ParsableCommand
        do {
            command = try NearbyGateway.parseAsRoot()
        } catch {
            NearbyGateway.exit(withError: error)
        }
        guard let asynchronous = command as? any AsyncParsableCommand else {
            var synchronous = command
            do { try synchronous.run() } catch { NearbyGateway.exit(withError: error) }
            return
        }
        let finished = DispatchSemaphore(value: 0)
        Task.detached {
            var running = asynchronous
            do { try await running.run() } catch { NearbyGateway.exit(withError: error) }
            finished.signal()
        }
        finished.wait()
    }
}
