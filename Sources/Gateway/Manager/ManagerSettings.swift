import Config
import Logging
import NearbyProtocol

/// The parts of the config the message manager runs on, resolved once per (re)load.
struct ManagerSettings: Sendable {
    var codec: FrameCodec
    var publications: [Publication]
    var subscriptions: [Subscription]
    /// `[[identity]]`, with their AES keys ready; nil without any.
    var identities: Identities? = nil
    /// How long a scan-mode publication transmits after hearing a matching subscriber beacon.
    var scanWindow: Duration = .seconds(30)
    /// The configured level, restored by `SET debug off`.
    var logLevel: Logger.Level = .info
    var limits = GatewayConfig.LimitSettings()
    /// Messages the rotation keeps on the air often enough that no peer loses one while we send it:
    /// each is on the air every 3·M + 2 adverts (docs/protocol.md, "Rotation"), which must stay
    /// within `lost_after_s`.
    var airCapacity = 32
    /// Metres from RSSI (`radio.tx_power_1m`, `radio.path_loss_x10`).
    var distance = DistanceModel()
    /// `radio.lost_after_s`: the `lost_after_s` of run-time subscriptions.
    var defaultLostAfter: Duration = .seconds(10)

    static func airCapacity(intervalMs: Int, lostAfterS: Int) -> Int {
        max(1, (lostAfterS * 1000 / max(1, intervalMs) - 2) / 3)
    }
}
