import Glibc
import SplitMix

/// The simulated house of docs/rooms.md, the same model as the `rooms` bench's (tools/bench/house.py):
/// a 10 m × 8 m floor of four rooms, one gateway each, log-distance path loss with walls, and
/// Gauss-Markov shadowing per link. Pure and seeded: time is a number of seconds.
struct SimulatedHouse {
    static let p1m = -59.0, exponent = 2.5, wallDB = 6.0, shadowDB = 5.0, shadowCorrelation = 1.0
    static let floorDBm = -100.0, minDistance = 0.3

    typealias Point = (x: Double, y: Double)
    static let rooms: [(name: String, x1: Double, y1: Double, x2: Double, y2: Double)] = [
        ("kitchen", 0, 0, 5, 4), ("living", 5, 0, 10, 4), ("hall", 0, 4, 5, 8), ("bedroom", 5, 4, 10, 8),
    ]
    /// Interior walls; the gaps between them are doors (x = 5: y 1–2 and 6–7; y = 4: x 2–3 and 7–8).
    static let walls: [(Point, Point)] = [
        ((5, 0), (5, 1)), ((5, 2), (5, 6)), ((5, 7), (5, 8)),
        ((0, 4), (2, 4)), ((3, 4), (7, 4)), ((8, 4), (10, 4)),
    ]
    static let gateways: [(room: String, at: Point)] = [
        ("kitchen", (1.5, 1.0)), ("living", (8.0, 1.5)), ("hall", (1.0, 6.5)), ("bedroom", (8.5, 6.5)),
    ]

    static func room(of p: Point) -> String {
        rooms.first { p.x >= $0.x1 && p.x < $0.x2 && p.y >= $0.y1 && p.y < $0.y2 }!.name
    }

    static func crosses(_ p: Point, _ q: Point, _ a: Point, _ b: Point) -> Bool {
        func side(_ o: Point, _ s: Point, _ t: Point) -> Double { (s.x - o.x) * (t.y - o.y) - (s.y - o.y) * (t.x - o.x) }
        return side(a, b, p) * side(a, b, q) < 0 && side(p, q, a) * side(p, q, b) < 0
    }

    /// RSSI without shadowing of a sender at `p`, heard by gateway `g`.
    static func meanRSSI(_ p: Point, gateway g: Int) -> Double {
        let q = gateways[g].at
        let d = max(minDistance, ((p.x - q.x) * (p.x - q.x) + (p.y - q.y) * (p.y - q.y)).squareRoot())
        let crossed = walls.filter { crosses(p, q, $0.0, $0.1) }.count
        return p1m - 10 * exponent * log10(d) - wallDB * Double(crossed)
    }

    /// One Gauss-Markov process per gateway: N(0, shadowDB), correlation e^(−dt/shadowCorrelation).
    struct Shadowing {
        var state: [Double?] = Array(repeating: nil, count: SimulatedHouse.gateways.count)

        mutating func sample(_ g: Int, dt: Double, using random: inout SeededGenerator) -> Double {
            let fresh = SimulatedHouse.gaussian(using: &random) * SimulatedHouse.shadowDB
            guard let previous = state[g] else { state[g] = fresh; return fresh }
            let rho = exp(-dt / SimulatedHouse.shadowCorrelation)
            let value = rho * previous + (1 - rho * rho).squareRoot() * fresh
            state[g] = value
            return value
        }
    }

    static func gaussian(using random: inout SeededGenerator) -> Double {
        let u = Double.random(in: Double.ulpOfOne..<1, using: &random), v = Double.random(in: 0..<1, using: &random)
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }

    /// A walker's day: stands 30–120 s at a spot (half of them 0.3–0.6 m from an interior wall), then
    /// walks there at 1 m/s in a straight line. Spots are drawn with `random`.
    struct Route {
        struct Leg { var from: Point; var to: Point; var seconds: Double; var standing: Bool }
        var legs: [Leg] = []
        var duration: Double { legs.reduce(0) { $0 + $1.seconds } }

        init(seconds: Double, using random: inout SeededGenerator) {
            var here = SimulatedHouse.spot(using: &random)
            while duration < seconds {
                legs.append(Leg(from: here, to: here, seconds: Double.random(in: 30...120, using: &random), standing: true))
                let next = SimulatedHouse.spot(using: &random)
                let distance = ((next.x - here.x) * (next.x - here.x) + (next.y - here.y) * (next.y - here.y)).squareRoot()
                legs.append(Leg(from: here, to: next, seconds: max(1, distance), standing: false))
                here = next
            }
        }

        func at(_ t: Double) -> (Point, standing: Bool) {
            var t = t
            for leg in legs {
                if t < leg.seconds {
                    let f = t / leg.seconds
                    return ((leg.from.x + f * (leg.to.x - leg.from.x), leg.from.y + f * (leg.to.y - leg.from.y)), leg.standing)
                }
                t -= leg.seconds
            }
            return (legs.last!.to, true)
        }
    }

    static func spot(using random: inout SeededGenerator) -> Point {
        let room = rooms.randomElement(using: &random)!
        var p: Point = (Double.random(in: room.x1 + 0.3...room.x2 - 0.3, using: &random),
                        Double.random(in: room.y1 + 0.3...room.y2 - 0.3, using: &random))
        guard random.chance(0.5) else { return p }
        // Near the room's interior wall: x = 5 or y = 4, on this room's side.
        let offset = Double.random(in: 0.3...0.6, using: &random)
        if random.chance(0.5) { p.x = room.x1 == 0 ? 5 - offset : 5 + offset } else { p.y = room.y1 == 0 ? 4 - offset : 4 + offset }
        return p
    }
}
