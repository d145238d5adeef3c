import Logging

/// The parts of the config the message manager runs on, resolved once per (re)load.
struct ManagerSettings: Sendable {
    var codec: FrameCodec
    var publications: [Publication]
    var subscriptions: [Subscription]
    /// How long a scan-mode publication transmits after hearing a matching subscriber beacon.
    var scanWindow: Duration = .seconds(30)
    /// The configured level, restored by `SET debug off`.
    var logLevel: Logger.Level = .info
    var limits = GatewayConfig.LimitSettings()
}
