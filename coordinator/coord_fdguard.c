/* Coordinator descriptor guard (coord_fdguard.h; docs/protocol.md §1.6): thresholds, the count
 * of /proc/self/fd, the pause and resume of the agents' endpoint, and the handshake-failure count
 * from a socket monitor. The accept path that must never abort is coord_fdguard_accept.c. */
#include "coord_fdguard.h"

#include "jf_log.h"
#include "jf_units.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define S_EVENTS                                                                                   \
    (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |                  \
     ZMQ_EVENT_HANDSHAKE_FAILED_AUTH | ZMQ_EVENT_ACCEPTED)

struct coord_fdguard {
    zsock_t *agents;             // borrowed; owned by coord_server
    zsock_t *monitor;            // owned: PAIR receiving the agents socket's events
    DIR *fd_dir;                 // owned: <proc_root>/self/fd
    char endpoint[256];          // the agents' bound endpoint, listened on again on resume
    int listen_fd;               // owned: a duplicate of the agents' listening socket
    long limit_fds;              // soft RLIMIT_NOFILE at the last tick
    long used_fds;               // descriptors in use at the last tick, or -1
    bool paused;                 // agent accepts stopped
    int64_t paused_since_us;     // monotonic, when they stopped
    uint64_t pauses;             // times they stopped since start
    uint64_t accepted;           // agent-socket connections accepted since start
    uint64_t handshake_failures; // ... closed before completing the handshake
    uint64_t refused;            // connections closed unread while paused, since start
    uint64_t refused_at_pause;   // the value of refused when the last pause began
    jf_log_ratelimit_t rl;       // count and resume failures
};

coord_fdguard_levels_t coord_fdguard_levels(long limit_fds)
{
    long headroom = limit_fds / 8;
    headroom = headroom < COORD_FDGUARD_HEADROOM_MIN ? COORD_FDGUARD_HEADROOM_MIN : headroom;
    headroom = headroom > COORD_FDGUARD_HEADROOM_MAX ? COORD_FDGUARD_HEADROOM_MAX : headroom;
    long high = limit_fds - headroom;
    long low = limit_fds - 2 * headroom;
    return (coord_fdguard_levels_t){.high_fds = high < 0 ? 0 : high, .low_fds = low < 0 ? 0 : low};
}

coord_fdguard_action_t coord_fdguard_decide(bool paused, int64_t paused_since_us, long used_fds,
                                            const coord_fdguard_levels_t *levels, int64_t now_us)
{
    if (!paused) {
        return used_fds >= levels->high_fds ? COORD_FDGUARD_PAUSE : COORD_FDGUARD_KEEP;
    }
    if (used_fds <= levels->low_fds && now_us - paused_since_us >= COORD_FDGUARD_HOLD_US) {
        return COORD_FDGUARD_RESUME;
    }
    return COORD_FDGUARD_KEEP;
}

bool coord_fdguard_is_handshake_failure(uint16_t event)
{
    return event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL ||
           event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL || event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;
}

int coord_fdguard_count_entries(DIR *dir, long *ret_n, jf_err_t *err)
{
    rewinddir(dir);
    long n = 0;
    errno = 0;
    for (struct dirent *e; (e = readdir(dir)) != NULL; errno = 0) {
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            n++;
        }
    }
    if (errno != 0) {
        return jf_err_set(err, -errno, "cannot list descriptors: %s", strerror(errno));
    }
    *ret_n = n;
    return 0;
}

int coord_fdguard_raise_nofile(long *ret_old_soft, long *ret_hard, jf_err_t *err)
{
    struct rlimit rl = {0};
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        return jf_err_set(err, -errno, "getrlimit(RLIMIT_NOFILE): %s", strerror(errno));
    }
    long old_soft = rl.rlim_cur == RLIM_INFINITY ? LONG_MAX : (long) rl.rlim_cur;
    long hard = rl.rlim_max == RLIM_INFINITY ? LONG_MAX : (long) rl.rlim_max;
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
        return jf_err_set(err, -errno, "setrlimit(RLIMIT_NOFILE, %ld): %s", hard, strerror(errno));
    }
    *ret_old_soft = old_soft;
    *ret_hard = hard;
    return 0;
}

static long s_limit_fds(void)
{
    struct rlimit rl = {0};
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
        rl.rlim_cur > (rlim_t) LONG_MAX) {
        return LONG_MAX;
    }
    return (long) rl.rlim_cur;
}

static int s_attach_monitor(coord_fdguard_t *self, jf_err_t *err)
{
    char ep[64] = {0};
    (void) snprintf(ep, sizeof ep, "inproc://coord-fdguard-%p", (void *) self);
    if (zmq_socket_monitor(zsock_resolve(self->agents), ep, S_EVENTS) != 0) {
        return jf_err_set(err, -EIO, "cannot monitor the agents' socket: %s",
                          zmq_strerror(zmq_errno()));
    }
    self->monitor = zsock_new(ZMQ_PAIR);
    if (!self->monitor) {
        return jf_err_set(err, -ENOMEM, "cannot create the monitor socket");
    }
    // Unbounded: at most two events per connection, and a dropped one would go uncounted.
    zsock_set_rcvhwm(self->monitor, 0);
    if (zsock_connect(self->monitor, "%s", ep) != 0) {
        return jf_err_set(err, -EIO, "cannot connect the monitor socket to %s", ep);
    }
    return 0;
}

// True if fd is a listening socket bound where endpoint ("tcp://host:port" or "ipc://path") says.
static bool s_is_listener_of(int fd, const char *endpoint)
{
    int on = 0;
    socklen_t olen = sizeof on;
    struct sockaddr_storage ss = {0};
    socklen_t len = sizeof ss;
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &olen) != 0 || !on ||
        getsockname(fd, (struct sockaddr *) &ss, &len) != 0) {
        return false;
    }
    if (ss.ss_family == AF_UNIX) {
        const struct sockaddr_un *un = (const struct sockaddr_un *) &ss;
        return strncmp(endpoint, "ipc://", 6) == 0 && strcmp(un->sun_path, endpoint + 6) == 0;
    }
    const char *colon = strrchr(endpoint, ':');
    long port = colon && strncmp(endpoint, "tcp://", 6) == 0 ? strtol(colon + 1, NULL, 10) : -1;
    uint16_t be = ss.ss_family == AF_INET    ? ((const struct sockaddr_in *) &ss)->sin_port
                  : ss.ss_family == AF_INET6 ? ((const struct sockaddr_in6 *) &ss)->sin6_port
                                             : 0;
    return be != 0 && port == (long) ntohs(be);
}

// Keeps a duplicate of the agents' listening socket, so that the address stays ours while libzmq
// has it closed: unbinding would free the port for any local process to take (a test saw another
// coordinator bind it within seconds), and agents would reconnect to that.
static int s_hold_listener(coord_fdguard_t *self, jf_err_t *err)
{
    rewinddir(self->fd_dir);
    int fd = -1;
    for (struct dirent *e; fd < 0 && (e = readdir(self->fd_dir)) != NULL;) {
        char *end = NULL;
        long n = strtol(e->d_name, &end, 10);
        if (end != e->d_name && *end == '\0' && n >= 0 && n <= INT_MAX &&
            s_is_listener_of((int) n, self->endpoint)) {
            fd = (int) n;
        }
    }
    if (fd < 0) {
        return jf_err_set(err, -ENOENT, "no listening socket for %s among our descriptors",
                          self->endpoint);
    }
    // Non-blocking for s_refuse_queued. The flag is shared with libzmq's descriptor, which only
    // accepts when epoll says it can and takes EAGAIN as "nothing there".
    self->listen_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    int flags = self->listen_fd >= 0 ? fcntl(self->listen_fd, F_GETFL) : -1;
    if (flags < 0 || fcntl(self->listen_fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        return jf_err_set(err, -errno, "cannot hold the agents' socket: %s", strerror(errno));
    }
    return 0;
}

// A fleet that needs more connections than the pause level allows would be paused by its own
// agents, again and again: say so at start, while it is cheap to fix.
static void s_check_room(const coord_fdguard_t *self, size_t n_boards)
{
    coord_fdguard_levels_t lv = coord_fdguard_levels(self->limit_fds);
    long in_use = 0;
    if (coord_fdguard_count_entries(self->fd_dir, &in_use, NULL) == 0 &&
        (long) n_boards + in_use >= lv.high_fds) {
        jf_log_warn("fdguard: an open-file limit of %ld pauses agent accepts at %ld descriptors, "
                    "and %ld are in use before %zu boards connect; raise the hard limit "
                    "(systemd LimitNOFILE=), continuing",
                    self->limit_fds, lv.high_fds, in_use, n_boards);
    }
}

coord_fdguard_t *coord_fdguard_new(zsock_t *agents, const char *proc_root, size_t n_boards,
                                   jf_err_t *err)
{
    coord_fdguard_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    self->agents = agents;
    self->listen_fd = -1;
    self->used_fds = -1;
    self->limit_fds = s_limit_fds();
    (void) snprintf(self->endpoint, sizeof self->endpoint, "%s", zsock_endpoint(agents));
    char path[PATH_MAX] = {0};
    (void) snprintf(path, sizeof path, "%s/self/fd", proc_root);
    self->fd_dir = opendir(path);
    if (!self->fd_dir) {
        jf_err_set(err, -errno, "%s: %s", path, strerror(errno));
        goto fail_destroy;
    }
    if (s_attach_monitor(self, err) != 0 || s_hold_listener(self, err) != 0) {
        goto fail_destroy;
    }
    (void) coord_fdguard_spares_fill(); // fewer than asked only if the limit is already near
    s_check_room(self, n_boards);
    return self;
fail_destroy:
    coord_fdguard_destroy(&self);
    return NULL;
}

static void s_read_events(coord_fdguard_t *self)
{
    void *sock = zsock_resolve(self->monitor);
    for (int i = 0; i < COORD_FDGUARD_EVENTS_MAX; i++) {
        // Each event is two frames: 6 bytes (uint16 event, uint32 value), then the endpoint.
        zmq_msg_t head, addr;
        zmq_msg_init(&head);
        if (zmq_msg_recv(&head, sock, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&head);
            return;
        }
        uint16_t event = 0;
        if (zmq_msg_size(&head) >= sizeof event) {
            memcpy(&event, zmq_msg_data(&head), sizeof event);
        }
        bool more = zmq_msg_more(&head);
        zmq_msg_close(&head);
        zmq_msg_init(&addr);
        if (more) {
            (void) zmq_msg_recv(&addr, sock, ZMQ_DONTWAIT); // the endpoint is not needed
        }
        zmq_msg_close(&addr);
        self->accepted += event == ZMQ_EVENT_ACCEPTED;
        self->handshake_failures += coord_fdguard_is_handshake_failure(event);
    }
}

static void s_pause(coord_fdguard_t *self, const coord_fdguard_levels_t *lv, int64_t now_us)
{
    // libzmq closes its listener and every connection the listener accepted (its sessions are
    // the listener's children): the idle ones free their descriptors at once, and agents
    // reconnect. The socket itself stays open through listen_fd.
    if (zmq_unbind(zsock_resolve(self->agents), self->endpoint) != 0) {
        jf_log_warn("fdguard: %ld of %ld descriptors in use, cannot unbind %s: %s; trying again "
                    "next tick",
                    self->used_fds, self->limit_fds, self->endpoint, zmq_strerror(zmq_errno()));
        return;
    }
    self->paused = true;
    self->paused_since_us = now_us;
    self->pauses++;
    self->refused_at_pause = self->refused;
    jf_log_notice("fdguard: %ld of %ld descriptors in use (limit - %ld): stopped accepting agent "
                  "connections on %s; connected agents were dropped and reconnect when it resumes "
                  "at %ld or fewer",
                  self->used_fds, self->limit_fds, self->limit_fds - lv->high_fds, self->endpoint,
                  lv->low_fds);
}

// While paused, connections still complete in the kernel's listen queue. Closing them as they
// come means the queue holds only what arrived since the last tick when libzmq takes the socket
// back, and peers see the refusal (agents retry by themselves).
static void s_refuse_queued(coord_fdguard_t *self)
{
    for (int i = 0; i < COORD_FDGUARD_EVENTS_MAX; i++) {
        int fd = accept4(self->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            return; // EAGAIN: the queue is empty; EMFILE: the next tick tries again
        }
        (void) close(fd); // refused: nothing was read or written
        self->refused++;
    }
}

static void s_resume(coord_fdguard_t *self, int64_t now_us)
{
    // libzmq takes a duplicate (ZMQ_USE_FD) and closes it on the next pause; ours stays.
    int fd = fcntl(self->listen_fd, F_DUPFD_CLOEXEC, 0);
    void *sock = zsock_resolve(self->agents);
    int none = -1;
    int rc = fd >= 0 ? zmq_setsockopt(sock, ZMQ_USE_FD, &fd, sizeof fd) : -1;
    rc = rc == 0 ? zmq_bind(sock, self->endpoint) : -1;
    (void) zmq_setsockopt(sock, ZMQ_USE_FD, &none, sizeof none); // later binds make their own
    if (rc != 0) {
        uint64_t n = 0;
        if (fd >= 0) {
            (void) close(fd);
        }
        if (jf_log_ratelimit_allow(&self->rl, &n)) {
            jf_log_warn("fdguard: cannot listen on %s again: %s; trying again next tick (%llu "
                        "more)",
                        self->endpoint, fd < 0 ? strerror(errno) : zmq_strerror(zmq_errno()),
                        (unsigned long long) n);
        }
        return;
    }
    self->paused = false;
    jf_log_notice("fdguard: %ld of %ld descriptors in use: accepting agent connections on %s "
                  "again after %.1f s (%llu refused meanwhile)",
                  self->used_fds, self->limit_fds, self->endpoint,
                  (double) (now_us - self->paused_since_us) / (double) JF_US_PER_S,
                  (unsigned long long) (self->refused - self->refused_at_pause));
}

void coord_fdguard_tick(coord_fdguard_t *self, int64_t now_us)
{
    s_read_events(self);
    if (self->paused) {
        s_refuse_queued(self);
    }
    self->limit_fds = s_limit_fds(); // an operator may change it with prlimit(1) while we run
    jf_err_t err = {0};
    if (coord_fdguard_count_entries(self->fd_dir, &self->used_fds, &err) != 0) {
        uint64_t n = 0;
        if (jf_log_ratelimit_allow(&self->rl, &n)) {
            jf_log_warn("fdguard: %s; keeping the current state (%llu more)", err.msg,
                        (unsigned long long) n);
        }
        return;
    }
    coord_fdguard_levels_t lv = coord_fdguard_levels(self->limit_fds);
    switch (
        coord_fdguard_decide(self->paused, self->paused_since_us, self->used_fds, &lv, now_us)) {
    case COORD_FDGUARD_PAUSE:
        s_pause(self, &lv, now_us);
        break;
    case COORD_FDGUARD_RESUME:
        s_resume(self, now_us);
        break;
    case COORD_FDGUARD_KEEP:
        break;
    }
    if (self->used_fds < lv.low_fds) {
        (void) coord_fdguard_spares_fill(); // put back what control accepts used, while there
                                            // is room
    }
}

json_t *coord_fdguard_status_json(const coord_fdguard_t *self, int64_t now_us)
{
    json_t *paused_s =
        self->paused ? json_real((double) (now_us - self->paused_since_us) / (double) JF_US_PER_S)
                     : json_null();
    return json_pack("{s:I, s:I, s:b, s:o, s:I, s:I, s:I, s:I, s:i, s:I, s:I}", "fd_used",
                     (json_int_t) self->used_fds, "fd_limit", (json_int_t) self->limit_fds,
                     "accepting_agents", !self->paused, "paused_s", paused_s, "pauses",
                     (json_int_t) self->pauses, "accepted", (json_int_t) self->accepted,
                     "handshake_failures", (json_int_t) self->handshake_failures, "refused",
                     (json_int_t) self->refused, "spares_held", coord_fdguard_spares_held(),
                     "control_spares_used", (json_int_t) coord_fdguard_spares_used(),
                     "control_accepts_deferred", (json_int_t) coord_fdguard_accepts_deferred());
}

void coord_fdguard_destroy(coord_fdguard_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    coord_fdguard_t *self = *self_p;
    if (self->monitor && self->agents) {
        (void) zmq_socket_monitor(zsock_resolve(self->agents), NULL, 0); // stop the events
    }
    zsock_destroy(&self->monitor);
    if (self->listen_fd >= 0) {
        (void) close(self->listen_fd);
    }
    if (self->fd_dir) {
        (void) closedir(self->fd_dir);
    }
    coord_fdguard_spares_release();
    free(self);
    *self_p = NULL;
}
