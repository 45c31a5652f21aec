/* Test support: raw ZeroMQ peers. */
#include "jft_zmq.h"

#include "jf_units.h"

#include <string.h>

static unsigned char s_last_route[255]; // routing id of the last message read on a ROUTER
static size_t s_last_route_len;

zsock_t *jft_dealer_new(const char *endpoint, const char *identity)
{
    return jft_dealer_new_raw(endpoint, identity, identity ? strlen(identity) : 0);
}

zsock_t *jft_dealer_new_raw(const char *endpoint, const void *identity, size_t len)
{
    zsock_t *s = zsock_new(ZMQ_DEALER);
    if (!s) {
        return NULL;
    }
    zsock_set_linger(s, 0);
    if ((len > 0 && zmq_setsockopt(zsock_resolve(s), ZMQ_ROUTING_ID, identity, len) != 0) ||
        zsock_connect(s, "%s", endpoint) != 0) {
        zsock_destroy(&s);
    }
    return s;
}

zsock_t *jft_curve_dealer_new(const char *endpoint, const char *identity, zcert_t *cert,
                              const char *server_key)
{
    zsock_t *s = zsock_new(ZMQ_DEALER);
    if (!s) {
        return NULL;
    }
    zsock_set_linger(s, 0);
    if (identity) {
        zsock_set_identity(s, identity);
    }
    zcert_apply(cert, s);
    zsock_set_curve_serverkey(s, server_key);
    if (zsock_connect(s, "%s", endpoint) != 0) {
        zsock_destroy(&s);
    }
    return s;
}

zsock_t *jft_router_new_in(const char *dir)
{
    zsock_t *s = zsock_new(ZMQ_ROUTER);
    if (s) {
        zsock_set_linger(s, 0);
        if (zsock_bind(s, "ipc://%s/router.sock", dir) < 0) {
            zsock_destroy(&s);
        }
    }
    return s;
}

// The routing frame of a send on sock: identity, or on a ROUTER without one the last peer's.
static int s_send_route(zsock_t *sock, const char *identity)
{
    void *h = zsock_resolve(sock);
    if (identity) {
        return zmq_send(h, identity, strlen(identity), ZMQ_SNDMORE) < 0 ? -1 : 0;
    }
    if (zsock_type(sock) != ZMQ_ROUTER) {
        return 0;
    }
    return s_last_route_len == 0 || zmq_send(h, s_last_route, s_last_route_len, ZMQ_SNDMORE) < 0
               ? -1
               : 0;
}

int jft_send_raw(zsock_t *sock, const char *identity, const void *data, size_t len)
{
    if (s_send_route(sock, identity) != 0) {
        return -1;
    }
    return zmq_send(zsock_resolve(sock), data, len, 0) == (int) len ? 0 : -1;
}

int jft_send_frames(zsock_t *sock, const char *identity, const char *const frames[], size_t n)
{
    void *h = zsock_resolve(sock);
    if (n == 0 || s_send_route(sock, identity) != 0) {
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(frames[i]);
        if (zmq_send(h, frames[i], len, i + 1 < n ? ZMQ_SNDMORE : 0) != (int) len) {
            return -1;
        }
    }
    return 0;
}

json_t *jft_recv_json(zsock_t *sock, int timeout_ms, char **ret_identity)
{
    zpoller_t *p = zpoller_new(sock, NULL);
    zmsg_t *m = p && zpoller_wait(p, timeout_ms) ? zmsg_recv(sock) : NULL;
    zpoller_destroy(&p);
    if (!m) {
        return NULL;
    }
    zframe_t *id = zsock_type(sock) == ZMQ_ROUTER ? zmsg_first(m) : NULL;
    if (id && zframe_size(id) <= sizeof s_last_route) {
        s_last_route_len = zframe_size(id);
        memcpy(s_last_route, zframe_data(id), s_last_route_len);
    }
    if (ret_identity && zsock_type(sock) == ZMQ_ROUTER) {
        *ret_identity = id ? zframe_strdup(id) : NULL;
    }
    zframe_t *body = zmsg_last(m);
    json_t *j = body ? json_loadb((const char *) zframe_data(body), zframe_size(body), 0, NULL)
                     : NULL;
    zmsg_destroy(&m);
    return j;
}

json_t *jft_recv_type(zsock_t *sock, const char *type, int timeout_ms, char **ret_identity)
{
    int64_t deadline = jf_clock_mono_us() + (int64_t) timeout_ms * 1000;
    while (jf_clock_mono_us() < deadline) {
        int left = (int) ((deadline - jf_clock_mono_us()) / 1000) + 1;
        char *id = NULL;
        json_t *j = jft_recv_json(sock, left, &id);
        const char *t = json_string_value(json_object_get(j, "type"));
        if (t && strcmp(t, type) == 0) {
            if (ret_identity) {
                *ret_identity = id;
            } else {
                free(id);
            }
            return j;
        }
        free(id);
        json_decref(j);
    }
    return NULL;
}
