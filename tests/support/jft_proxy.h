/* Test support: a TCP proxy on 127.0.0.1 that can be cut and healed, to partition one agent from
 * its coordinator (issue #11). A cut models a real partition: nothing crosses in either
 * direction and nothing is closed (no FIN or RST crosses a partition either); bytes already
 * written wait in the kernel's socket buffers, as in TCP's retransmission queue, and new
 * connections wait in the listen backlog, as a SYN would be retried. A heal resumes copying, so
 * a side that closed during the cut has its close delivered then, as TCP would. Not a model of
 * a partition long enough for TCP itself to give up (minutes). */
#ifndef JFT_PROXY_H
#define JFT_PROXY_H

#include <stdbool.h>

typedef struct jft_proxy jft_proxy_t;

// Starts a proxy thread listening on 127.0.0.1 (an ephemeral port) that forwards every
// connection to upstream ("tcp://127.0.0.1:PORT", loopback only). NULL on failure (a message
// on stderr). Release with jft_proxy_destroy.
jft_proxy_t *jft_proxy_new(const char *upstream);

// Stops the thread, closes every connection. Accepts NULL and *self_p == NULL.
void jft_proxy_destroy(jft_proxy_t **self_p);

// The proxy's endpoint for agents ("tcp://127.0.0.1:PORT"); borrowed.
const char *jft_proxy_endpoint(const jft_proxy_t *self);

// Cuts (true) or heals (false) every connection, present and future.
void jft_proxy_set_cut(jft_proxy_t *self, bool cut);

// Connections accepted so far.
int jft_proxy_connections(const jft_proxy_t *self);

#endif
