import Glibc

/// Reads the allocation counter of `tools/bench/malloc_count.c` when that library is preloaded
/// (`LD_PRELOAD`); `nil` otherwise. Found with dlsym so the binary runs the same without it.
struct MallocCounter {
    private let read: @convention(c) () -> UInt64

    init?() {
        guard let symbol = dlsym(nil, "bench_malloc_count") else { return nil }
        read = unsafeBitCast(symbol, to: (@convention(c) () -> UInt64).self)
    }

    var count: UInt64 { read() }

    /// Allocator calls made while `body` ran.
    func calls(during body: () throws -> Void) rethrows -> UInt64 {
        let before = read()
        try body()
        return read() - before
    }
}

/// Keeps a value alive and observable so the optimiser can't drop the work that made it.
@inline(never)
func benchConsume<T>(_ value: T) {
    withExtendedLifetime(value) {}
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) * 1e-18 }
}
