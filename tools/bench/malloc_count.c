/* Counts calls to the allocator, for "allocations per report" in scripts/bench.
 *
 * Loaded with LD_PRELOAD; forwards every call to the real allocator (RTLD_NEXT) and counts it.
 * The benchmark reads the count through bench_malloc_count() (Swift: dlsym; Python: ctypes), so only
 * the allocations made between two readings count. Python must run with PYTHONMALLOC=malloc, or its
 * small-object allocator would hide most allocations from us.
 *
 * dlsym itself may call calloc before the real one is known: those first calls are served from a
 * small static arena and never freed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

static atomic_ullong calls;
static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_posix_memalign)(void **, size_t, size_t);
static void *(*real_aligned_alloc)(size_t, size_t);
static void *(*real_memalign)(size_t, size_t);

static char arena[8192];
static size_t arena_used;

unsigned long long bench_malloc_count(void) { return atomic_load(&calls); }

static void resolve(void) {
    if (real_malloc) return;
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    real_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
    real_memalign = dlsym(RTLD_NEXT, "memalign");
    real_malloc = dlsym(RTLD_NEXT, "malloc");
}

void *malloc(size_t n) {
    resolve();
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    return real_malloc(n);
}

void *calloc(size_t a, size_t b) {
    if (!real_calloc) {
        /* Only reached from inside dlsym while resolving. */
        size_t n = (a * b + 15) & ~(size_t)15;
        if (arena_used + n > sizeof arena) return NULL;
        void *p = arena + arena_used;
        arena_used += n;
        return p;
    }
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    return real_calloc(a, b);
}

void *realloc(void *p, size_t n) {
    resolve();
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    return real_realloc(p, n);
}

void free(void *p) {
    static void (*real_free)(void *);
    if ((char *)p >= arena && (char *)p < arena + sizeof arena) return;
    if (!real_free) real_free = dlsym(RTLD_NEXT, "free");
    real_free(p);
}

int posix_memalign(void **out, size_t alignment, size_t n) {
    resolve();
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    return real_posix_memalign(out, alignment, n);
}

void *aligned_alloc(size_t alignment, size_t n) {
    resolve();
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    return real_aligned_alloc(alignment, n);
}

void *memalign(size_t alignment, size_t n) {
    resolve();
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    return real_memalign(alignment, n);
}
