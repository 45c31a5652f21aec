/* Test support: CURVE keys for a fleet (jft_keys.h). */
#include "jft_keys.h"

#include "jft_fs.h"
#include "jft_proc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cmocka.h>

#define S_KEYGEN_MS 30000

void jft_keys_coordinator(jft_fleet_t *f)
{
    char bin[PATH_MAX], out[PATH_MAX];
    jft_bin("jetfleet-coordinator", bin);
    (void) snprintf(out, sizeof out, "%s/coordinator-keygen.log", f->dir);
    char *argv[] = {bin, "--config", f->config, "--keygen", NULL};
    assert_int_equal(jft_run(argv, out, S_KEYGEN_MS * jft_timeout_scale(), NULL), 0);
    f->curve = true;
}

void jft_keys_coordinator_public(const jft_fleet_t *f, char *out)
{
    char path[PATH_MAX + 32];
    (void) snprintf(path, sizeof path, "%s/keys/coordinator", f->data_dir);
    zcert_t *cert = zcert_load(path);
    assert_non_null(cert);
    (void) snprintf(out, 41, "%s", zcert_public_txt(cert));
    zcert_destroy(&cert);
}

void jft_keys_agent_accepted(jft_fleet_t *f, const char *name)
{
    char bin[PATH_MAX], state[PATH_MAX], key[PATH_MAX + 16], out[PATH_MAX], dst[PATH_MAX];
    jft_bin("jetfleet-agent", bin);
    (void) snprintf(state, sizeof state, JFT_FLEET_AGENT_STATE_FMT, f->dir, name);
    (void) mkdir(state, 0700);
    (void) snprintf(key, sizeof key, "%s/agent.key", state);
    (void) snprintf(out, sizeof out, "%s/keygen-%s.log", f->dir, name);
    char *argv[] = {bin, "--keygen", "--name", (char *) name, "--key", key, NULL};
    assert_int_equal(jft_run(argv, out, S_KEYGEN_MS * jft_timeout_scale(), NULL), 0);
    char *text = jft_read_file(key, NULL);
    assert_non_null(text);
    (void) snprintf(dst, sizeof dst, "state/keys/accepted/%s", name);
    char path[PATH_MAX];
    assert_int_equal(jft_fleet_write(f, dst, text, path), 0);
    free(text);
}

zcert_t *jft_keys_agent_cert(const jft_fleet_t *f, const char *name)
{
    char key[PATH_MAX + 64];
    (void) snprintf(key, sizeof key, JFT_FLEET_AGENT_STATE_FMT "/agent.key", f->dir, name);
    zcert_t *cert = zcert_load(key);
    assert_non_null(cert);
    return cert;
}
