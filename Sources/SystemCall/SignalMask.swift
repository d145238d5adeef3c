#if canImport(Glibc)
import Glibc
#endif

extension SystemCall {
    /// Unblocks every signal in the calling thread. A process inherits its parent's mask: spawned from
    /// a thread that blocks SIGTERM (a libdispatch worker's mask blocks nearly everything), a command
    /// would never see SIGTERM, since its threads inherit the same mask. An `async` main got an
    /// unblocked main thread from `dispatch_main()`; the synchronous entry asks for it here, first,
    /// so every thread started after it inherits the empty mask.
    public static func unblockAllSignals() {
        var none = sigset_t()
        sigemptyset(&none)
        // pthread_sigmask fails only for an invalid `how`, which SIG_SETMASK is not.
        _ = pthread_sigmask(SIG_SETMASK, &none, nil)
    }
}
