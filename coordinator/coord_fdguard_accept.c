/* Coordinator descriptor guard, the race-free part (docs/protocol.md §1.6): libzmq 4.3.4's ipc
 * listener aborts the process when accept fails with EMFILE (src/ipc_listener.cpp, which
 * tolerates ENFILE but not EMFILE). The coordinator defines accept and accept4, so libzmq's calls
 * reach these first; on EMFILE on a Unix-domain listener they release a spare descriptor and
 * retry, and with no spare left they report ENFILE, which libzmq treats as "try again later". */
#include "coord_fdguard.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

// Global by necessity (STYLE.md §12 allows three kinds of global; this is a fourth): libzmq calls
// accept4 from its I/O thread with no context pointer, so the spares can only be reached here.
// Each slot holds fd + 1 (0 = empty); slots are taken with an atomic exchange, so the I/O thread
// and the coordinator's loop never close or reuse the same descriptor twice.
static atomic_int s_spares[COORD_FDGUARD_SPARES];
static atomic_uint_fast64_t s_spares_used;
static atomic_uint_fast64_t s_deferred;

typedef int (*s_accept4_fn)(int, struct sockaddr *, socklen_t *, int);
typedef int (*s_accept_fn)(int, struct sockaddr *, socklen_t *);

int coord_fdguard_spares_fill(void)
{
    int held = 0;
    for (int i = 0; i < COORD_FDGUARD_SPARES; i++) {
        if (atomic_load(&s_spares[i]) == 0) {
            int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                continue; // no descriptor to spare now; the next tick tries again
            }
            int empty = 0;
            if (!atomic_compare_exchange_strong(&s_spares[i], &empty, fd + 1)) {
                (void) close(fd); // only this thread fills, so this is not expected
                continue;
            }
        }
        held++;
    }
    return held;
}

int coord_fdguard_spares_held(void)
{
    int held = 0;
    for (int i = 0; i < COORD_FDGUARD_SPARES; i++) {
        held += atomic_load(&s_spares[i]) != 0;
    }
    return held;
}

uint64_t coord_fdguard_spares_used(void)
{
    return (uint64_t) atomic_load(&s_spares_used);
}

uint64_t coord_fdguard_accepts_deferred(void)
{
    return (uint64_t) atomic_load(&s_deferred);
}

static bool s_release_one(void)
{
    for (int i = 0; i < COORD_FDGUARD_SPARES; i++) {
        int slot = atomic_exchange(&s_spares[i], 0);
        if (slot != 0) {
            (void) close(slot - 1); // a /dev/null descriptor: close cannot lose data
            return true;
        }
    }
    return false;
}

void coord_fdguard_spares_release(void)
{
    while (s_release_one()) {
    }
}

static bool s_is_unix_socket(int fd)
{
    struct sockaddr_storage ss = {0};
    socklen_t len = sizeof ss;
    return getsockname(fd, (struct sockaddr *) &ss, &len) == 0 && ss.ss_family == AF_UNIX;
}

// After a failed accept: true to retry (a spare was released for it), false to return rc.
// Only Unix-domain listeners get spares: libzmq's TCP listener survives EMFILE by itself, and
// giving it spares would only let idle TCP peers take them.
static bool s_retry_after(int rc, int fd)
{
    if (rc >= 0 || errno != EMFILE || !s_is_unix_socket(fd)) {
        return false;
    }
    if (s_release_one()) {
        atomic_fetch_add(&s_spares_used, 1);
        return true;
    }
    atomic_fetch_add(&s_deferred, 1);
    errno = ENFILE; // libzmq leaves the connection queued and tries again on the next event
    return false;
}

int accept4(int fd, struct sockaddr *addr, socklen_t *addrlen, int flags)
{
    // Looked up on every call rather than cached, so no state is shared without a lock.
    s_accept4_fn real = (s_accept4_fn) dlsym(RTLD_NEXT, "accept4");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int rc = real(fd, addr, addrlen, flags);
    while (s_retry_after(rc, fd)) {
        rc = real(fd, addr, addrlen, flags);
    }
    return rc;
}

int accept(int fd, struct sockaddr *addr, socklen_t *addrlen)
{
    s_accept_fn real = (s_accept_fn) dlsym(RTLD_NEXT, "accept");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int rc = real(fd, addr, addrlen);
    while (s_retry_after(rc, fd)) {
        rc = real(fd, addr, addrlen);
    }
    return rc;
}
