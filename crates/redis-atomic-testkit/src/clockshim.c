/*
 * redis-atomic-testkit clock shim: an LD_PRELOAD library that adds an offset to the wall clock
 * (CLOCK_REALTIME, gettimeofday, time) of the process it is loaded into, so a test can make a
 * running redis-server's clock jump. CLOCK_MONOTONIC is left alone, as in a real wall-clock step
 * (NTP, a VM resumed or migrated).
 *
 * Why not libfaketime: Debian's redis-server links jemalloc, whose initialisation calls
 * clock_gettime() while libfaketime is still resolving symbols with dlsym(), which allocates:
 * libfaketime detects the recursion and the server never starts (wolfcw/libfaketime #130, #478).
 * This shim needs neither dlsym nor malloc: the real time comes from the raw syscall, and the
 * offset from a file mapped once with raw syscalls.
 *
 * The offset: 8 bytes, a little-endian signed number of nanoseconds, at the start of the file
 * named by REDIS_ATOMIC_CLOCK_FILE. The next 8 bytes, when not zero, freeze the wall clock at
 * that many nanoseconds since the epoch (the offset is then ignored). The file is mapped
 * MAP_SHARED, so a pwrite() by the test is seen by the next clock read, while the server runs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int64_t *offset_ns;
static int resolved;

/* The shared mapping (resolved once), or NULL when the file is missing. */
static int64_t *mapping(void) {
    if (!__atomic_load_n(&resolved, __ATOMIC_ACQUIRE)) {
        /* Two threads may both map it: harmless, one mapping leaks. */
        const char *path = getenv("REDIS_ATOMIC_CLOCK_FILE");
        void *map = MAP_FAILED;
        if (path) {
            long fd = syscall(SYS_open, path, O_RDONLY | O_CLOEXEC);
            if (fd >= 0) {
                map = (void *)syscall(SYS_mmap, 0, 4096, PROT_READ, MAP_SHARED, fd, 0);
                syscall(SYS_close, fd);
            }
        }
        if (map != MAP_FAILED) __atomic_store_n(&offset_ns, (int64_t *)map, __ATOMIC_RELEASE);
        __atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&offset_ns, __ATOMIC_ACQUIRE);
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
    int rc = (int)syscall(SYS_clock_gettime, clock, ts);
    if (rc == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
        int64_t *at = mapping();
        int64_t frozen = at ? __atomic_load_n(at + 1, __ATOMIC_RELAXED) : 0;
        int64_t shift = at ? __atomic_load_n(at, __ATOMIC_RELAXED) : 0;
        int64_t ns = frozen ? frozen : (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec + shift;
        ts->tv_sec = ns / 1000000000;
        ts->tv_nsec = ns % 1000000000;
    }
    return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz) {
    struct timespec ts;
    (void)tz;
    int rc = clock_gettime(CLOCK_REALTIME, &ts);
    if (rc == 0) {
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000;
    }
    return rc;
}

time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out) *out = ts.tv_sec;
    return ts.tv_sec;
}
