/* Agent session: socket, registration, heartbeats, incoming messages and the loop. */
#include "agent_session_internal.h"

#include "agent_options.h"

#include "jf_msg_run.h"
#include "jf_msg_session.h"
#include "jf_curve.h"
#include "jf_fleet_config.h"
#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int s_connect(agent_session_t *self, jf_err_t *err)
{
    zsock_destroy(&self->sock);
    self->sock = zsock_new(ZMQ_DEALER);
    if (!self->sock) {
        return jf_err_set(err, -ENOMEM, "session: cannot create a socket");
    }
    // No routing id: libzmq's generated one cannot collide with a stale connection's, and the
    // coordinator sends to the connection its hello was welcomed on (docs/protocol.md §1.3).
    if (self->cert) {
        // CURVE against the pinned key: a server without that key's secret cannot complete the
        // handshake (docs/protocol.md §1.7).
        zcert_apply(self->cert, self->sock);
        zsock_set_curve_serverkey(self->sock, zcert_public_txt(self->coordinator_cert));
    }
    zsock_set_maxmsgsize(self->sock, (int64_t) JF_MSG_MAX_BYTES_AGENT * JF_MSG_TRANSPORT_FACTOR);
    zsock_set_immediate(self->sock, 1); // during an outage sends fail visibly; the spool keeps data
    zsock_set_linger(self->sock, 0);
    zsock_set_reconnect_ivl(self->sock, 1000);
    zsock_set_reconnect_ivl_max(self->sock, 30000);
    // No ZMTP heartbeats: a PING the coordinator decodes after its input stopped at the receive
    // mark and after this side closed the connection makes libzmq 4.3.4 answer on a failed
    // connection and abort the coordinator (docs/protocol.md §1.5). A silent coordinator is
    // noticed by the application heartbeat (s_session_tick), which replaces the socket.
    if (zsock_connect(self->sock, "%s", self->endpoint) != 0) {
        return jf_err_set(err, -EINVAL, "session: cannot connect to '%s': %s", self->endpoint,
                          zmq_strerror(zmq_errno()));
    }
    return 0;
}

int agent_session_send_text(agent_session_t *self, const char *text, size_t len)
{
    if (zmq_send(zsock_resolve(self->sock), text, len, ZMQ_DONTWAIT) < 0) {
        return -errno;
    }
    self->last_tx_us = jf_clock_mono_us();
    return 0;
}

int agent_session_send(agent_session_t *self, json_t *msg)
{
    size_t len = 0;
    char *text = msg ? jf_msg_encode(msg, &len) : NULL;
    json_decref(msg);
    int rc = text ? agent_session_send_text(self, text, len) : -ENOMEM;
    free(text);
    return rc;
}

// Loads the keys unless the session is plaintext by choice; no key is no connection.
static int s_load_keys(agent_session_t *self, const agent_session_opts_t *opts, jf_err_t *err)
{
    if (opts->insecure_loopback) {
        return 0;
    }
    if (!opts->key_path || !opts->key_path[0] || !opts->coordinator_key_path ||
        !opts->coordinator_key_path[0]) {
        return jf_err_set(err, -EINVAL, "session: --coordinator-key FILE is required (or "
                                        "--insecure-loopback for a coordinator on 127.0.0.1)");
    }
    self->cert = jf_curve_load_pair(opts->key_path, err);
    self->coordinator_cert = self->cert ? jf_curve_load_public(opts->coordinator_key_path, err)
                                        : NULL;
    return self->coordinator_cert ? 0 : jf_err_prefix(err, "session: no usable CURVE keys "
                                                          "(jetfleet-agent --keygen makes one)");
}

static void s_send_hello(agent_session_t *self, int64_t now_us)
{
    jf_hello_t h = {.board_type = agent_platform_board_type(self->platform),
                    .started_us = self->started_us};
    memcpy(h.name, self->name, sizeof h.name);
    (void) snprintf(h.platform, sizeof h.platform, "%s", agent_platform_name(self->platform));
    const jf_power_mode_t *modes = agent_platform_modes(self->platform, &h.n_modes);
    memcpy(h.modes, modes, h.n_modes * sizeof *modes);
    h.n_storage = self->n_storage;
    memcpy(h.storage, self->storage, sizeof h.storage);
    h.n_runs = agent_spool_inventory(self->spool, h.runs, JF_HELLO_RUNS_MAX);
    h.has_clocks = !self->hello_clocks_off && agent_session_hello_clocks(self, &h.clocks);
    json_t *sw = agent_platform_software(self->platform);
    // Says that this agent understands credit members (docs/protocol.md §5.3.6).
    (void) json_object_set_new(sw, JF_CREDIT_SOFTWARE_KEY, json_string("1"));
    int rc = agent_session_send(self, jf_msg_hello_new(self->next_id++, &h, sw));
    json_decref(sw);
    if (rc < 0) {
        // Not sent (no connection yet: ZMQ_IMMEDIATE), so not outstanding either: try again on
        // the next tick, so that the hello goes out as soon as the connection is up.
        self->hello_next_us = now_us + AGENT_TICK_MS * JF_US_PER_MS;
        return;
    }
    // Back off with jitter so a fleet restarting together does not knock in step.
    int64_t backoff = jf_hello_backoff_us(self->hello_tries);
    self->hello_next_us = now_us + backoff + (int64_t) (random() % (backoff / 4 + 1));
    self->hello_tries++;
    self->hello_sent_us = now_us;
}

// Forgets the session: the next tick sends one hello, retried with back-off until welcomed.
static void s_session_lost(agent_session_t *self)
{
    self->welcomed = false;
    self->hello_next_us = 0;
    self->hello_tries = 0;
    self->clock_echo_off = false; // the next coordinator may be a newer one
    self->hello_clocks_off = false;
}

static void s_on_welcome(agent_session_t *self, const jf_msg_t *msg)
{
    jf_welcome_t w;
    if (jf_msg_welcome_parse(msg->body, &w, NULL) != 0) {
        return; // validated by the decoder
    }
    if (self->welcomed && strcmp(w.session, self->session) == 0) {
        // The answer to a hello retry of a session we already have (docs/protocol.md §4.4):
        // rewinding the spool again would only resend what is in flight.
        jf_log_info("session: welcome for session %s again; already registered", w.session);
        return;
    }
    self->welcomed = true;
    self->hello_tries = 0;
    memcpy(self->session, w.session, sizeof self->session);
    self->heartbeat_us = w.heartbeat_us;
    self->heartbeat_timeout_us = w.heartbeat_timeout_us;
    agent_spool_set_window(self->spool, w.credit); // none granted: the default window
    for (size_t i = 0; i < w.n_resume; i++) {
        const jf_welcome_resume_t *r = &w.resume[i];
        if (r->action == JF_RESUME_CONTINUE) {
            agent_spool_rewind(self->spool, r->run, r->attempt, r->acked_seq);
        } else {
            agent_session_drop_run(self, r->run, r->attempt);
        }
    }
    jf_log_notice("session: registered as '%s' (session %s, epoch %lld, %zu runs resumed)",
                  self->name, w.session, (long long) w.coordinator_epoch, w.n_resume);
}

static void s_on_error(agent_session_t *self, const jf_msg_t *msg)
{
    char code[JF_IDENT_MAX + 1] = {0}, detail[JF_MSG_TEXT_MAX + 1] = {0};
    (void) jf_msg_error_parse(msg->body, code, sizeof code, detail, sizeof detail, NULL);
    json_t *re = json_object_get(msg->body, "re");
    if (json_is_integer(re) &&
        agent_session_fetch_on_error(self, json_integer_value(re), code, detail)) {
        return; // the run whose weights were asked for is refused, saying why
    }
    if (strcmp(code, JF_MSG_E_NOT_REGISTERED) == 0) {
        // One hello per lost session (docs/protocol.md §4.4): every message in flight when the
        // session was lost draws its own not_registered, and a hello is already outstanding
        // (or due) for all of them; it is retried after the hello timeout, not per error.
        if (self->welcomed) {
            jf_log_notice("session: the coordinator has no session for us; registering again");
            s_session_lost(self);
        } else if (self->hello_tries == 1 && self->hello_sent_us > 0 &&
                   jf_clock_mono_us() - self->hello_sent_us >= JF_HELLO_RETRY_FIRST_US) {
            // The coordinator answers but our first hello, older than the first retry step,
            // went unanswered (lost with a connection, or sent while it was stopped): the
            // first retry goes now rather than at the end of its step. Only the first: a
            // coordinator that leaves two hellos unanswered is busy, and the back-off waits.
            self->hello_next_us = 0;
        }
        return;
    }
    if (strcmp(code, JF_MSG_E_BAD_FIELD) == 0 && !self->welcomed && !self->hello_clocks_off &&
        strstr(detail, AGENT_HELLO_CLOCKS_REFUSED) != NULL) {
        // An older coordinator does not know the hello's clocks (§4.1.1): register without them,
        // at once (the refused hello is not outstanding: no welcome will answer it).
        jf_log_notice("session: the coordinator does not know the hello's clocks member; "
                      "registering without it");
        self->hello_clocks_off = true;
        self->hello_next_us = 0;
        self->hello_tries = 0;
        return;
    }
    if (strcmp(code, JF_MSG_E_BAD_FIELD) == 0 && strstr(detail, AGENT_CLOCK_REFUSED) != NULL) {
        // An older coordinator: its strict decoder does not know the clock members (§4.2.1).
        if (!self->clock_echo_off) {
            jf_log_notice("session: the coordinator does not know the heartbeat clock members; "
                          "answering its heartbeats without them until the next registration");
        }
        self->clock_echo_off = true;
        return;
    }
    char q[256] = {0};
    jf_log_warn("session: coordinator reports %s: %s", code, jf_log_quote(detail, q, sizeof q));
}

static void s_on_ack(agent_session_t *self, const jf_msg_t *msg)
{
    jf_msg_run_ref_t ref;
    int64_t credit = 0;
    if (jf_msg_run_ref_parse(msg->body, &ref, NULL) == 0 &&
        jf_msg_credit_parse(msg->body, &credit, NULL) == 0) {
        agent_spool_ack(self->spool, ref.run, ref.attempt, ref.seq);
        if (credit > 0) {
            agent_spool_set_window(self->spool, credit);
        }
    }
}

// Answers at once, so the coordinator (and a test) can see this loop is alive, with the clock
// members of docs/protocol.md §4.2.1 so that it can estimate our clock offset.
static void s_answer_heartbeat(agent_session_t *self, const jf_msg_t *msg)
{
    int64_t recv_us = jf_clock_wall_us() + self->clock_shift_us;
    jf_heartbeat_t in = {0};
    jf_heartbeat_t out = {0};
    if (!self->clock_echo_off && jf_msg_heartbeat_parse(msg->body, &in, NULL) == 0) {
        out = (jf_heartbeat_t){.has_echo = true, .echo_t_us = in.t_us, .recv_t_us = recv_us};
    }
    out.t_us = jf_clock_wall_us() + self->clock_shift_us;
    (void) agent_session_send(self, jf_msg_heartbeat_clock_new(self->next_id++, NULL, &out));
}

static void s_dispatch(agent_session_t *self, const jf_msg_t *msg)
{
    switch (msg->type) {
    case JF_MSG_WELCOME:
        s_on_welcome(self, msg);
        break;
    case JF_MSG_HEARTBEAT:
        s_answer_heartbeat(self, msg);
        break;
    case JF_MSG_RUN_ASSIGN:
        agent_session_on_assign(self, msg);
        break;
    case JF_MSG_RUN_CANCEL:
        agent_session_on_cancel(self, msg);
        break;
    case JF_MSG_ACK:
        s_on_ack(self, msg);
        break;
    case JF_MSG_ERROR:
        s_on_error(self, msg);
        break;
    case JF_MSG_BLOB_DATA:
        agent_session_on_blob_data(self, msg);
        break;
    default:
        break; // the decoder admits only the types above towards an agent
    }
}

static void s_receive_one(agent_session_t *self, zmsg_t *m)
{
    zframe_t *f = zmsg_first(m);
    jf_msg_t msg = {0};
    const char *code = NULL;
    int64_t id = -1;
    jf_err_t err = {0};
    if (zmsg_size(m) != 1) {
        code = JF_MSG_E_BAD_FRAMES;
        jf_err_set(&err, -EPROTO, "a message is exactly one frame holding a JSON object");
    } else if (jf_msg_decode(zframe_data(f), zframe_size(f), JF_MSG_TO_AGENT,
                             JF_MSG_MAX_BYTES_AGENT, &msg, &code, &id, &err) == 0) {
        self->last_rx_us = jf_clock_mono_us();
        s_dispatch(self, &msg);
        jf_msg_fini(&msg);
        return;
    }
    uint64_t n = 0;
    if (jf_log_ratelimit_allow(&self->rl_bad, &n)) {
        jf_log_warn("session: invalid message from the coordinator: %s; answered with error "
                    "(%llu more suppressed)",
                    err.msg, (unsigned long long) n);
    }
    (void) agent_session_send(self, jf_msg_error_new(self->next_id++, id, code, err.msg));
}

static void s_drain(agent_session_t *self)
{
    for (int i = 0; i < 256 && (zsock_events(self->sock) & ZMQ_POLLIN); i++) {
        zmsg_t *m = zmsg_recv(self->sock);
        if (!m) {
            return;
        }
        s_receive_one(self, m);
        zmsg_destroy(&m);
    }
}

static int s_pump_send(const char *text, size_t len, void *arg)
{
    return agent_session_send_text(arg, text, len);
}

static void s_session_tick(agent_session_t *self, int64_t now_us)
{
    if (self->welcomed && now_us - self->last_rx_us > self->heartbeat_timeout_us) {
        // Paranoid Pirate: a silent coordinator means a new socket and a new registration.
        jf_log_warn("session: nothing from the coordinator for %lld ms; reconnecting",
                    (long long) ((now_us - self->last_rx_us) / JF_US_PER_MS));
        s_session_lost(self);
        jf_err_t err = {0};
        if (s_connect(self, &err) != 0) {
            jf_log_error("%s", err.msg);
        }
    }
    if (!self->welcomed && now_us >= self->hello_next_us) {
        self->last_rx_us = now_us;
        s_send_hello(self, now_us);
    }
    if (!self->welcomed) {
        return;
    }
    (void) agent_spool_pump(self->spool, now_us, s_pump_send, self);
    if (now_us - self->last_tx_us >= self->heartbeat_us) {
        (void) agent_session_send(
            self, jf_msg_heartbeat_new(self->next_id++,
                                       self->run.active ? self->run.spec.run_id : NULL));
    }
}

int agent_session_run(agent_session_t *self, volatile sig_atomic_t *stop, jf_err_t *err)
{
    (void) err;
    jf_log_notice("session: agent '%s' (%s) connecting to %s", self->name,
                  agent_platform_name(self->platform), self->endpoint);
    while (!*stop) {
        zmq_pollitem_t items[4] = {{zsock_resolve(self->sock), 0, ZMQ_POLLIN, 0},
                                   {agent_sampler_handle(self->sampler), 0, ZMQ_POLLIN, 0},
                                   {agent_worker_handle(self->worker), 0, ZMQ_POLLIN, 0},
                                   {NULL, -1, ZMQ_POLLIN, 0}};
        int n = 3;
        if (self->run.runner && agent_runner_fd(self->run.runner) >= 0) {
            items[3].fd = agent_runner_fd(self->run.runner);
            n = 4;
        }
        (void) zmq_poll(items, n, AGENT_TICK_MS); // EINTR from a signal: the loop rechecks stop
        s_drain(self);
        agent_session_on_worker(self);
        agent_session_on_sampler(self);
        int64_t now_us = jf_clock_mono_us();
        agent_session_run_tick(self, now_us);
        agent_session_fetch_tick(self, now_us);
        s_session_tick(self, now_us);
    }
    jf_log_notice("session: stopping");
    return 0;
}

// The media's configured mounts, for the storage check before each run.
static void s_copy_mounts(agent_session_t *self, const agent_session_opts_t *opts)
{
    for (size_t i = 0; i < opts->n_storage; i++) {
        const char *m = opts->storage_mount ? opts->storage_mount[i] : "";
        (void) snprintf(self->storage_mount[i], sizeof self->storage_mount[i], "%s", m);
        if (!self->storage_mount[i][0]) {
            jf_log_notice("storage: medium '%s' has no configured mount (--storage): runs on it "
                          "are not checked to read from it",
                          self->storage[i].medium);
        }
    }
}

// The platform's power-mode handle (NULL on a host), or none with power_error saying why.
static agent_power_t *s_power_handle(agent_session_t *self, const char *const *helper)
{
    agent_power_t *power = NULL;
    jf_err_t err = {0};
    if (agent_platform_power_new(self->platform, helper, &power, &err) != 0) {
        (void) snprintf(self->power_error, sizeof self->power_error,
                        "this board cannot switch power modes: %.200s", err.msg);
        jf_log_error("power: %s; runs will be refused as infeasible", err.msg);
    }
    if (power && !helper) {
        jf_log_notice("power: no privileged helper configured (--privhelper): a run is accepted "
                      "only in the power mode already in force, and nothing is changed");
    }
    self->has_power = power != NULL;
    self->has_helper = helper != NULL;
    agent_session_power_tables(self, power);
    return power;
}

// The platform's power handle goes to the worker, its telemetry reader to the sampler.
static int s_start_threads(agent_session_t *self, const agent_session_opts_t *opts, jf_err_t *err)
{
    char words[PATH_MAX];
    const char *argv[AGENT_OPTIONS_HELPER_WORDS_MAX + 1] = {NULL};
    bool has_helper = opts->helper_command && opts->helper_command[0];
    if (has_helper && agent_options_split_command(opts->helper_command, words, sizeof words, argv,
                                                  AGENT_OPTIONS_HELPER_WORDS_MAX, err) < 0) {
        return -EINVAL;
    }
    agent_power_t *power = s_power_handle(self, has_helper ? argv : NULL);
    const char *rail = agent_platform_input_rail(self->platform);
    (void) snprintf(self->input_rail, sizeof self->input_rail, "%s", rail ? rail : "");
    agent_worker_opts_t wo = {.power_p = &power, .helper_argv = has_helper ? argv : NULL,
                              .proc_root = opts->proc_root, .sysfs_root = opts->sysfs_root};
    self->worker = agent_worker_new(&wo, err);
    agent_power_destroy(&power); // still ours only if the worker did not start
    agent_sysfs_t *reader = agent_platform_take_reader(self->platform);
    agent_sampler_opts_t so = {.reader_p = &reader, .proc_root = opts->proc_root,
                               .tegrastats = agent_platform_tegrastats(self->platform)};
    self->sampler = self->worker ? agent_sampler_new(&so, err) : NULL;
    agent_sysfs_destroy(&reader); // still ours only if the sampler did not start
    return self->worker && self->sampler ? 0 : -ENOMEM;
}

// Streams reopened without a final message and not re-attached lost their trainer with the
// previous agent process (or never wrote it to a file): each gets its run.failed now, so the
// coordinator records the attempt as failed once.
static int s_end_orphans(agent_session_t *self, jf_err_t *err)
{
    int ended = agent_spool_end_orphans(self->spool, &self->next_id, err);
    if (ended > 0) {
        jf_log_warn("spool: %d run attempt(s) were running when the agent stopped; reporting "
                    "them failed (crashed), after their spooled results", ended);
    }
    return ended < 0 ? ended : 0;
}

// Containers of this board's runs that no run of this agent holds (docs/containers.md, "Ending
// a container run"): left by an earlier agent process whose run was not re-attached (its
// trainer gone, its spool lost, or its stream an orphan), they are removed now; a container
// whose run was re-attached is kept. A listing that fails is logged, and start-up goes on.
static void s_remove_stale_containers(agent_session_t *self)
{
    if (self->container.n_words == 0) {
        return;
    }
    static char names[AGENT_STALE_CONTAINERS_MAX][AGENT_CONTAINER_NAME_MAX];
    size_t n = 0;
    jf_err_t err = {0};
    if (agent_container_list(&self->container, self->name, names, AGENT_STALE_CONTAINERS_MAX, &n,
                             AGENT_CONTAINER_LIST_MS, &err) != 0) {
        jf_log_warn("%s; containers an earlier agent left are not looked for", err.msg);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (self->run.active && strcmp(names[i], self->run.container) == 0) {
            continue; // the re-attached run's
        }
        jf_log_notice("container: removing %s, left by an earlier agent (no run of this agent "
                      "holds it)",
                      names[i]);
        if (agent_container_remove(&self->container, names[i], &err) != 0) {
            jf_log_warn("%s", err.msg);
        }
    }
}

// Test builds only (JF_AGENT_TEST_HOOKS; tests/integration/clock_offset_test.c):
// JF_TEST_CLOCK_SHIFT_US shifts the wall clocks in this agent's answers to heartbeats (§4.2.1),
// so a test can give a board a known clock offset on one host. An installed agent ignores it.
#if !JF_AGENT_TEST_HOOKS
static int64_t s_test_clock_shift_us(void)
{
    return 0;
}
#else
static int64_t s_test_clock_shift_us(void)
{
    const char *text = getenv(AGENT_CLOCK_SHIFT_ENV);
    int64_t shift_us = 0;
    if (!text) {
        return 0;
    }
    if (jf_parse_i64(text, -AGENT_CLOCK_SHIFT_MAX_US, AGENT_CLOCK_SHIFT_MAX_US, &shift_us, NULL)) {
        jf_log_warn("session: ignoring %s='%.32s': not an integer within +-1 hour; no shift",
                    AGENT_CLOCK_SHIFT_ENV, text);
        return 0;
    }
    jf_log_warn("session: %s=%lld: clocks in heartbeat answers shifted (test only)",
                AGENT_CLOCK_SHIFT_ENV, (long long) shift_us);
    return shift_us;
}
#endif

agent_session_t *agent_session_new(const agent_session_opts_t *opts, jf_err_t *err)
{
    if (!jf_parse_is_ident(opts->name) || opts->n_storage > JF_HELLO_STORAGE_MAX) {
        jf_err_set(err, -EINVAL, "session: invalid board name or too many storage media");
        return NULL;
    }
    agent_session_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "session: out of memory");
        return NULL;
    }
    (void) snprintf(self->name, sizeof self->name, "%s", opts->name);
    (void) snprintf(self->endpoint, sizeof self->endpoint, "%s", opts->endpoint);
    (void) snprintf(self->train_bin, sizeof self->train_bin, "%s", opts->train_bin);
    if (agent_container_parse(opts->container_command, &self->container, err) != 0) {
        free(self);
        return NULL;
    }
    self->n_storage = opts->n_storage;
    memcpy(self->storage, opts->storage, opts->n_storage * sizeof *opts->storage);
    self->platform = opts->platform;
    self->next_id = 1;
    self->started_us = jf_clock_wall_us();
    self->clock_shift_us = s_test_clock_shift_us();
    self->heartbeat_us = JF_DEFAULT_HEARTBEAT_US;
    self->heartbeat_timeout_us = JF_DEFAULT_HB_TIMEOUT_US;
    srandom((unsigned) (jf_clock_mono_us() ^ (int64_t) getpid()));
    s_copy_mounts(self, opts);
    self->spool = agent_spool_new(&opts->spool, err);
    // Re-attaching needs the sampler; the orphans' run.failed must be spooled before the hello,
    // which leaves from the loop.
    if (!self->spool || s_load_keys(self, opts, err) != 0 || s_connect(self, err) != 0 ||
        s_start_threads(self, opts, err) != 0 || agent_session_run_reattach(self) < 0 ||
        s_end_orphans(self, err) != 0) {
        agent_session_destroy(&self);
    }
    if (self) {
        s_remove_stale_containers(self);
    }
    return self;
}

// At exit the board must not stay in a run's power mode (docs/privileges.md).
static void s_restore_at_exit(agent_session_t *self)
{
    agent_worker_reply_t *reply = malloc(sizeof *reply);
    if (!self->worker || !self->has_power || !reply) {
        free(reply);
        return;
    }
    int rc = agent_worker_restore_wait(self->worker, AGENT_RESTORE_WAIT_US, reply);
    if (rc != 0) {
        jf_log_error("power: the worker did not restore the board's clock state in time");
    } else if (!reply->ok) {
        jf_log_error("power: restoring the board's clock state at exit failed: %s", reply->detail);
    }
    free(reply);
}

void agent_session_destroy(agent_session_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    agent_session_t *self = *self_p;
    agent_session_trainer_stopping(self); // run_fini stops the trainer
    agent_session_run_fini(self);
    agent_session_fetch_fini(self);
    s_restore_at_exit(self);
    agent_worker_destroy(&self->worker);
    agent_sampler_destroy(&self->sampler);
    agent_spool_destroy(&self->spool);
    zsock_destroy(&self->sock);
    zcert_destroy(&self->cert);
    zcert_destroy(&self->coordinator_cert);
    free(self);
    *self_p = NULL;
}
