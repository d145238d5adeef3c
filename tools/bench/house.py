"""The simulated house of the `rooms` bench (docs/rooms.md): a floor plan with coordinates, a
log-distance path-loss model with walls and seeded Gaussian shadowing, and people walking scripted
routes. Pure: no I/O and no clock; `rooms.py` drives it in real time against real gateways, and
`score` turns its samples and the fleet's decisions into the two figures (share of time in the true
room after the settle time, flaps per hour while standing still).
"""
import math
import random

# The path-loss model (docs/rooms.md says why these values).
P1M = -59.0          # dBm at 1 m (an iBeacon's usual measured power; a phone advertises about the same)
EXPONENT = 2.5       # log-distance exponent n: RSSI(d) = P1M - 10 n log10(d / 1 m)
WALL_DB = 6.0        # loss per interior wall crossed (a plasterboard or light brick wall: 3-8 dB at 2.4 GHz)
SHADOW_DB = 5.0      # shadowing: Gaussian, sigma in dB, per link (transmitter, gateway)
SHADOW_TC_S = 1.0    # its correlation time: a first-order Gauss-Markov process (body, doors, people moving)
FLOOR_DBM = -100.0   # reports weaker than this are not heard
MIN_DISTANCE_M = 0.3

# The floor plan: 10 m x 8 m, four rooms of 5 m x 4 m; interior walls with door openings.
ROOMS = {"kitchen": (0.0, 0.0, 5.0, 4.0), "living": (5.0, 0.0, 10.0, 4.0),
         "hall": (0.0, 4.0, 5.0, 8.0), "bedroom": (5.0, 4.0, 10.0, 8.0)}
# Walls as segments ((x1, y1), (x2, y2)); the gaps between them are doors.
WALLS = [((5.0, 0.0), (5.0, 1.0)), ((5.0, 2.0), (5.0, 6.0)), ((5.0, 7.0), (5.0, 8.0)),   # x = 5, doors y 1-2 and 6-7
         ((0.0, 4.0), (2.0, 4.0)), ((3.0, 4.0), (7.0, 4.0)), ((8.0, 4.0), (10.0, 4.0))]   # y = 4, doors x 2-3 and 7-8
# One gateway per room, where a box would stand (a shelf, a socket): not in the middle.
GATEWAYS = {"kitchen": (1.5, 1.0), "living": (8.0, 1.5), "hall": (1.0, 6.5), "bedroom": (8.5, 6.5)}


def room_of(point):
    x, y = point
    for name, (x1, y1, x2, y2) in ROOMS.items():
        if x1 <= x < x2 and y1 <= y < y2:
            return name
    raise ValueError(f"{point} is outside the house")


def _crosses(p, q, a, b):
    """Whether segment pq properly crosses segment ab."""
    def side(o, s, t):
        return (s[0] - o[0]) * (t[1] - o[1]) - (s[1] - o[1]) * (t[0] - o[0])
    d1, d2, d3, d4 = side(a, b, p), side(a, b, q), side(p, q, a), side(p, q, b)
    return d1 * d2 < 0 and d3 * d4 < 0


def walls_between(p, q):
    return sum(1 for a, b in WALLS if _crosses(p, q, a, b))


def mean_rssi(p, gateway):
    """The model's RSSI without shadowing of a transmitter at `p` heard by `gateway`."""
    q = GATEWAYS[gateway]
    d = max(MIN_DISTANCE_M, math.dist(p, q))
    return P1M - 10 * EXPONENT * math.log10(d) - WALL_DB * walls_between(p, q)


class Shadowing:
    """One Gauss-Markov process per link: stationary N(0, SHADOW_DB), correlation e^(-dt/SHADOW_TC_S)."""

    def __init__(self, seed):
        self.random = random.Random(seed)
        self.state = {}

    def sample(self, link, dt):
        rho = math.exp(-dt / SHADOW_TC_S)
        previous = self.state.get(link)
        if previous is None:
            value = self.random.gauss(0, SHADOW_DB)
        else:
            value = rho * previous + math.sqrt(1 - rho * rho) * self.random.gauss(0, SHADOW_DB)
        self.state[link] = value
        return value


class Route:
    """Legs of (kind, seconds, to): "stand" stays where the last leg ended, "walk" goes in a straight
    line to `to` at constant speed. Starts at `start`."""

    def __init__(self, start, legs):
        self.start, self.legs = start, legs
        self.duration = sum(seconds for _, seconds, _ in legs)

    def at(self, t):
        """(position, standing) at `t` seconds from the start; after the end, standing at the last point."""
        here = self.start
        for kind, seconds, to in self.legs:
            if t < seconds:
                if kind == "stand":
                    return here, True
                f = t / seconds
                return (here[0] + f * (to[0] - here[0]), here[1] + f * (to[1] - here[1])), False
            t -= seconds
            if kind == "walk":
                here = to
        return here, True


def stand(seconds):
    return ("stand", seconds, None)


def walk(seconds, to):
    return ("walk", seconds, to)


def routes(scale=1.0):
    """The people of the house and their routes (seconds multiplied by `scale`): every one stands
    near a wall (0.3-0.5 m from it, the hard case) and in the open, and walks through doors."""
    s = lambda v: v * scale
    return {
        # Kitchen, against the living room's wall, into the living room, against the kitchen's wall.
        "anna": Route((2.5, 2.0), [stand(s(30)), walk(s(5), (4.6, 3.0)), stand(s(60)), walk(s(6), (6.0, 1.5)),
                                   walk(s(4), (7.0, 2.5)), walk(s(3), (5.5, 3.0)), stand(s(60)), walk(s(6), (5.5, 1.5)),
                                   walk(s(6), (3.5, 2.0)), stand(s(45))]),
        # Hall, against the kitchen's wall, through the kitchen, stands at the counter.
        "ben": Route((2.0, 6.5), [stand(s(30)), walk(s(4), (2.5, 4.4)), stand(s(60)), walk(s(4), (2.5, 3.0)),
                                  walk(s(3), (1.5, 2.5)), stand(s(60)), walk(s(6), (0.7, 3.6)), stand(s(60))]),
        # Bedroom, against the hall's wall, to the living room, against the bedroom's wall.
        "cleo": Route((7.5, 6.5), [stand(s(30)), walk(s(4), (5.4, 5.5)), stand(s(60)), walk(s(5), (7.5, 4.5)),
                                   walk(s(5), (7.5, 2.0)), walk(s(3), (8.5, 3.6)), stand(s(60)), walk(s(8), (9.0, 2.0)),
                                   stand(s(45))]),
        # Living room, then the hall through two rooms, standing by the bedroom's wall.
        "dan": Route((7.0, 1.0), [stand(s(40)), walk(s(5), (5.6, 1.5)), stand(s(50)), walk(s(5), (3.5, 2.0)),
                                  walk(s(4), (2.5, 4.5)), walk(s(4), (2.5, 6.0)), walk(s(3), (4.6, 6.8)), stand(s(60)),
                                  walk(s(3), (3.0, 7.0)), stand(s(30))]),
        # Hall by the kitchen's wall, through the door into the bedroom, by the hall's wall, then the middle.
        "eve": Route((3.5, 4.5), [stand(s(40)), walk(s(3), (4.0, 6.5)), walk(s(3), (6.5, 6.5)), walk(s(3), (5.5, 7.5)),
                                  stand(s(60)), walk(s(4), (7.0, 5.5)), stand(s(50)), walk(s(4), (5.6, 4.4)), stand(s(45))]),
    }


def sample_tick(positions, shadowing, dt):
    """{person: {gateway: rssi or None}} for one instant: each person's report at each gateway."""
    out = {}
    for person, point in positions.items():
        heard = {}
        for gateway in GATEWAYS:
            rssi = mean_rssi(point, gateway) + shadowing.sample((person, gateway), dt)
            heard[gateway] = round(rssi) if rssi >= FLOOR_DBM else None
        out[person] = heard
    return out


def nearest(heard):
    """The anchors' rule: the gateway with the strongest RSSI of this sample (its room), None if unheard."""
    best = [(rssi, gateway) for gateway, rssi in heard.items() if rssi is not None]
    return max(best)[1] if best else None


def score(timeline, settle_s, start_settle_s):
    """The two figures for one method.

    `timeline`: per person, a list of (t, true room, standing, decided room) at each sample instant, in
    order. A sample counts when the true room has not changed for `settle_s` and `t >= start_settle_s`.
    Flaps: changes of the decided room between two consecutive counted samples of one standing
    segment (the person has not moved between them); `away` counts those that left the true room
    (the others are late corrections into it). Returns right share, standing seconds, flaps."""
    counted = right = away = 0
    flaps, standing_s = 0, 0.0
    for samples in timeline.values():
        since, last_room, previous = None, None, None
        for t, true_room, standing, decided in samples:
            if true_room != last_room:
                since, last_room = t, true_room
            ok = t >= start_settle_s and t - since >= settle_s
            if not ok or not standing:
                previous = None
                if ok:
                    counted += 1
                    right += decided == true_room
                continue
            counted += 1
            right += decided == true_room
            if previous is not None:
                standing_s += t - previous[0]
                flaps += decided != previous[1]
                away += decided != previous[1] and decided != true_room
            previous = (t, decided)
    return {"right": right / counted if counted else None, "samples": counted, "standing_s": standing_s,
            "flaps": flaps, "away": away, "flaps_per_hour": flaps / standing_s * 3600 if standing_s else None}


class Smoother:
    """The gateways' own RSSI low-pass (RSSIFilter: alpha = 1 - e^(-dt/tau), tau = 2 s) per link, for
    the smoothed nearest-gateway row."""

    def __init__(self, tau=2.0):
        self.tau, self.state = tau, {}

    def update(self, link, rssi, t):
        if rssi is None:
            return self.state.get(link, (None, None))[0]
        value, at = self.state.get(link, (None, None))
        if value is None:
            value = float(rssi)
        else:
            value += (1 - math.exp(-(t - at) / self.tau)) * (rssi - value)
        self.state[link] = (value, t)
        return value
