import Glibc

/// Metres from a smoothed RSSI with the log-distance path-loss model:
/// d = 10^((P₁ₘ − RSSI) / (10·n)), P₁ₘ the sender's calibrated RSSI at 1 m, n the path-loss exponent
/// (`radio.path_loss_x10` / 10). An estimate only: docs/behaviour.md says how far off it can be.
public struct DistanceModel: Sendable, Equatable {
    /// RSSI at 1 m of our own gateways' frames (`radio.tx_power_1m`), in dBm.
    public var ownPowerAt1m: Int
    /// The path-loss exponent: 2 in free space, 2.5–4 indoors.
    public var exponent: Double

    public init(ownPowerAt1m: Int = -59, exponent: Double = 2.5) {
        self.ownPowerAt1m = ownPowerAt1m
        self.exponent = exponent
    }

    public func metres(rssi: Double, powerAt1m: Int) -> Double {
        pow(10, (Double(powerAt1m) - rssi) / (10 * exponent))
    }
}
