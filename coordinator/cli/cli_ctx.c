/* CLI context: config, read-only store, control requests. */
#include "cli_ctx.h"

#include "coord_db.h"
#include "jf_msg.h"

#include <czmq.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const jf_fleet_config_t *cli_ctx_fleet(cli_ctx_t *self, jf_err_t *err)
{
    if (!self->fleet) {
        self->fleet = jf_fleet_config_load(self->config_path, err);
    }
    return self->fleet;
}

coord_store_t *cli_store_open(const char *path, bool read_only, jf_err_t *err)
{
    if (!coord_db_is_postgres_uri(path) && access(path, F_OK) != 0) {
        jf_err_set(err, -ENOENT, "no store at %s (has the coordinator run with this fleet.yaml?)",
                   path);
        return NULL;
    }
    return coord_store_open(path, read_only, err);
}

coord_store_t *cli_ctx_store(cli_ctx_t *self, jf_err_t *err)
{
    if (self->store) {
        return self->store;
    }
    const jf_fleet_config_t *fleet = self->store_path ? NULL : cli_ctx_fleet(self, err);
    const char *path = self->store_path ? self->store_path : fleet ? fleet->coord.store_path : NULL;
    self->store = path ? cli_store_open(path, true, err) : NULL;
    return self->store;
}

static int s_await_reply(zsock_t *sock, int64_t id, json_t **ret_data, jf_err_t *err)
{
    zpoller_t *poller = zpoller_new(sock, NULL);
    zmsg_t *m = poller && zpoller_wait(poller, CLI_REPLY_TIMEOUT_MS) ? zmsg_recv(sock) : NULL;
    zpoller_destroy(&poller);
    if (!m) {
        return jf_err_set(err, -ETIMEDOUT,
                          "the coordinator did not answer within %d s "
                          "(is jetfleet-coordinator running?)",
                          CLI_REPLY_TIMEOUT_MS / 1000);
    }
    zframe_t *f = zmsg_first(m);
    jf_msg_t msg = {0};
    const char *code = NULL;
    int64_t rid = -1;
    int rc = jf_msg_decode(zframe_data(f), zframe_size(f), JF_MSG_TO_CLI, JF_MSG_MAX_BYTES_COORD,
                           &msg, &code, &rid, err);
    zmsg_destroy(&m);
    if (rc != 0) {
        return jf_err_prefix(err, "bad reply from the coordinator");
    }
    if (msg.type == JF_MSG_ERROR) {
        const char *detail = json_string_value(json_object_get(msg.body, "detail"));
        rc = jf_err_set(err, -EPROTO, "%s", detail ? detail : "the coordinator refused");
    } else if (json_integer_value(json_object_get(msg.body, "re")) != id) {
        rc = jf_err_set(err, -EPROTO, "reply to another request");
    } else {
        *ret_data = json_incref(json_object_get(msg.body, "data"));
    }
    jf_msg_fini(&msg);
    return rc;
}

int cli_ctx_request(cli_ctx_t *self, json_t *msg, json_t **ret_data, jf_err_t *err)
{
    const jf_fleet_config_t *fleet = cli_ctx_fleet(self, err);
    size_t len = 0;
    char *text = msg ? jf_msg_encode(msg, &len) : NULL;
    int64_t id = json_integer_value(json_object_get(msg, "id"));
    json_decref(msg);
    if (!fleet || !text) {
        free(text);
        return fleet ? jf_err_set(err, -ENOMEM, "out of memory") : -EINVAL;
    }
    zsock_t *sock = zsock_new(ZMQ_DEALER);
    int rc = -ENOMEM;
    if (sock) {
        zsock_set_linger(sock, 0);
        rc = zsock_connect(sock, "%s", fleet->coord.control_endpoint) == 0 &&
                     zmq_send(zsock_resolve(sock), text, len, 0) == (int) len
                 ? s_await_reply(sock, id, ret_data, err)
                 : jf_err_set(err, -EIO, "cannot reach the coordinator at %s",
                              fleet->coord.control_endpoint);
    }
    zsock_destroy(&sock);
    free(text);
    return rc;
}

void cli_ctx_fini(cli_ctx_t *self)
{
    coord_store_destroy(&self->store);
    jf_fleet_config_destroy(&self->fleet);
}

char **cli_getopt_argv(const char *verb, int argc, char **argv)
{
    char **nargv = calloc((size_t) argc + 2, sizeof *nargv);
    if (nargv) {
        nargv[0] = (char *) verb; // getopt_long never writes argv[0]
        memcpy(nargv + 1, argv, (size_t) argc * sizeof *argv);
    }
    return nargv;
}
