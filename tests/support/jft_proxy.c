/* Test support: the cuttable TCP proxy (jft_proxy.h). One thread copies bytes both ways with
 * poll; while cut it neither reads, writes nor accepts. */
#include "jft_proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define S_PAIRS_MAX  64    // connections held at once
#define S_TICK_MS    20    // how soon a cut, a heal or a stop is noticed
#define S_CHUNK_SIZE 65536 // bytes copied per read

typedef struct s_pair {
    int fd[2]; // [0] the accepted side (agent), [1] the upstream side; -1 when closed
} s_pair_t;

struct jft_proxy {
    int listen_fd;
    struct sockaddr_in upstream;
    char endpoint[64];
    s_pair_t pairs[S_PAIRS_MAX];
    atomic_bool cut;
    atomic_bool stop;
    atomic_int accepted;
    pthread_t thread;
    bool started;
};

static void s_pair_close(s_pair_t *p)
{
    for (int k = 0; k < 2; k++) {
        if (p->fd[k] >= 0) {
            (void) close(p->fd[k]);
            p->fd[k] = -1;
        }
    }
}

static void s_accept(jft_proxy_t *self)
{
    int in = accept(self->listen_fd, NULL, NULL);
    if (in < 0) {
        return;
    }
    int up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (up < 0 || connect(up, (struct sockaddr *) &self->upstream, sizeof self->upstream) != 0) {
        // The coordinator is not there: close, as a refused connection would end.
        (void) close(in);
        if (up >= 0) {
            (void) close(up);
        }
        return;
    }
    for (size_t i = 0; i < S_PAIRS_MAX; i++) {
        if (self->pairs[i].fd[0] < 0) {
            self->pairs[i] = (s_pair_t){.fd = {in, up}};
            atomic_fetch_add(&self->accepted, 1);
            return;
        }
    }
    (void) close(in);
    (void) close(up);
}

// Copies what one side has to the other; closes the pair on end of file or an error.
static void s_copy(s_pair_t *p, int from, char *buf)
{
    ssize_t n = recv(p->fd[from], buf, S_CHUNK_SIZE, 0);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            return;
        }
        s_pair_close(p);
        return;
    }
    for (ssize_t off = 0; off < n;) {
        // Blocking on loopback: both daemons read all the time. MSG_NOSIGNAL: a peer that
        // closed gives EPIPE, not a signal that kills the test.
        ssize_t w = send(p->fd[1 - from], buf + off, (size_t) (n - off), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            s_pair_close(p);
            return;
        }
        off += w;
    }
}

static void s_tick(jft_proxy_t *self, char *buf)
{
    struct pollfd pfd[1 + 2 * S_PAIRS_MAX];
    size_t owner[1 + 2 * S_PAIRS_MAX];
    size_t n = 0;
    pfd[n++] = (struct pollfd){.fd = self->listen_fd, .events = POLLIN};
    for (size_t i = 0; i < S_PAIRS_MAX; i++) {
        for (int k = 0; k < 2 && self->pairs[i].fd[0] >= 0; k++) {
            owner[n] = i;
            pfd[n++] = (struct pollfd){.fd = self->pairs[i].fd[k], .events = POLLIN};
        }
    }
    if (poll(pfd, n, S_TICK_MS) <= 0 || atomic_load(&self->cut)) {
        return;
    }
    if (pfd[0].revents) {
        s_accept(self);
    }
    for (size_t j = 1; j < n; j++) {
        s_pair_t *p = &self->pairs[owner[j]];
        if (pfd[j].revents && p->fd[0] >= 0) {
            s_copy(p, pfd[j].fd == p->fd[0] ? 0 : 1, buf);
        }
    }
}

static void *s_run(void *arg)
{
    jft_proxy_t *self = arg;
    char *buf = malloc(S_CHUNK_SIZE);
    while (buf && !atomic_load(&self->stop)) {
        if (atomic_load(&self->cut)) {
            // The partition: nothing read, written or accepted.
            (void) poll(NULL, 0, S_TICK_MS);
            continue;
        }
        s_tick(self, buf);
    }
    free(buf);
    return NULL;
}

static int s_listen(jft_proxy_t *self, const char *upstream)
{
    int port = 0;
    if (sscanf(upstream, "tcp://127.0.0.1:%d", &port) != 1 || port <= 0 || port > 65535) {
        fprintf(stderr, "proxy: upstream '%s' is not tcp://127.0.0.1:PORT\n", upstream);
        return -EINVAL;
    }
    self->upstream = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port)};
    self->upstream.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct sockaddr_in me = {.sin_family = AF_INET};
    me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof me;
    self->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (self->listen_fd < 0 || bind(self->listen_fd, (struct sockaddr *) &me, sizeof me) != 0 ||
        listen(self->listen_fd, 16) != 0 ||
        getsockname(self->listen_fd, (struct sockaddr *) &me, &len) != 0) {
        fprintf(stderr, "proxy: cannot listen on 127.0.0.1: %s\n", strerror(errno));
        return -errno;
    }
    (void) snprintf(self->endpoint, sizeof self->endpoint, "tcp://127.0.0.1:%d",
                    (int) ntohs(me.sin_port));
    return 0;
}

jft_proxy_t *jft_proxy_new(const char *upstream)
{
    jft_proxy_t *self = calloc(1, sizeof *self);
    if (!self) {
        return NULL;
    }
    self->listen_fd = -1;
    for (size_t i = 0; i < S_PAIRS_MAX; i++) {
        self->pairs[i] = (s_pair_t){.fd = {-1, -1}};
    }
    if (s_listen(self, upstream) != 0 || pthread_create(&self->thread, NULL, s_run, self) != 0) {
        jft_proxy_destroy(&self);
        return NULL;
    }
    self->started = true;
    return self;
}

void jft_proxy_destroy(jft_proxy_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    jft_proxy_t *self = *self_p;
    atomic_store(&self->stop, true);
    if (self->started) {
        (void) pthread_join(self->thread, NULL);
    }
    for (size_t i = 0; i < S_PAIRS_MAX; i++) {
        s_pair_close(&self->pairs[i]);
    }
    if (self->listen_fd >= 0) {
        (void) close(self->listen_fd);
    }
    free(self);
    *self_p = NULL;
}

const char *jft_proxy_endpoint(const jft_proxy_t *self)
{
    return self->endpoint;
}

void jft_proxy_set_cut(jft_proxy_t *self, bool cut)
{
    atomic_store(&self->cut, cut);
}

int jft_proxy_connections(const jft_proxy_t *self)
{
    return atomic_load(&self->accepted);
}
