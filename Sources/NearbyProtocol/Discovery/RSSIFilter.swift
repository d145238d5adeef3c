import Glibc

/// The RSSI smoothing of the found set: a first-order low-pass in time (an EWMA whose weight comes
/// from the time since the previous sighting, α = 1 − e^(−Δt/τ)). Unlike a per-sample EWMA, a median
/// of N or a steady-state Kalman filter, its lag does not depend on how often a sender is heard
/// (10 adverts/s from a gateway, 1/s from a beacon, gaps while scanning pauses): docs/behaviour.md.
public enum RSSIFilter {
    /// The weight of a new sample `elapsed` after the previous one.
    public static func weight(elapsed: Duration, timeConstant: Duration) -> Double {
        let dt = max(0, seconds(elapsed)), tau = seconds(timeConstant)
        return 1 - exp(-dt / tau)
    }

    static func seconds(_ duration: Duration) -> Double {
        let (s, attoseconds) = duration.components
        return Double(s) + Double(attoseconds) / 1e18
    }
}
