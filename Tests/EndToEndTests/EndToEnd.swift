import Testing

/// Every end-to-end test shares btvirt's one air and this machine's two cores, so they run one at a
/// time: each suite is nested in this serialized one.
@Suite(.serialized, .timeLimit(.minutes(3)))
enum EndToEnd {}
