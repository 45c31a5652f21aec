/* jetfleet keys list | accept NAME [--board BOARD] | reject NAME | revoke NAME | release BOARD:
 * moves agent key
 * files between the states under <data_dir>/keys (docs/protocol.md §1.7). A running coordinator
 * sees the move on its next look at the directories (coord_auth_refresh, within 100 ms). */
#include "cli_cmds.h"
#include "jf_curve.h"
#include "jf_parse.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char s_usage[] = "usage: jetfleet keys list | accept NAME [--board BOARD] | "
                              "reject NAME | revoke NAME | release BOARD";
static const char *const s_states[] = {"accepted", "pending", "rejected", "revoked", "quarantined"};

static void s_path(const char *keys, const char *state, const char *name, char *out, size_t size)
{
    if (snprintf(out, size, "%s/%s/%s", keys, state, name) >= (int) (size)) {
        (out)[0] = '\0'; // too long: an empty path fails to open, visibly
    }
}

static void s_list_state(const char *keys, const char *state)
{
    char dir[PATH_MAX + 16], path[PATH_MAX + 96];
    if (snprintf(dir, sizeof dir, "%s/%s", keys, state) >= (int) (sizeof dir)) {
        (dir)[0] = '\0'; // too long: an empty path fails to open, visibly
    }
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (!jf_parse_is_ident(e->d_name)) {
            continue;
        }
        s_path(keys, state, e->d_name, path, sizeof path);
        zcert_t *cert = jf_curve_load_public(path, NULL);
        const char *from = cert ? zcert_meta(cert, "address") : NULL;
        const char *why = cert ? zcert_meta(cert, "reason") : NULL;
        printf("%-9s %-24s %s%s%s%s%s\n", state, e->d_name,
               cert ? zcert_public_txt(cert) : "(unreadable)", from ? "  from " : "",
               from ? from : "", why ? "  reason: " : "", why ? why : "");
        zcert_destroy(&cert);
    }
    if (d) {
        closedir(d);
    }
}

// Moves keys/<from>/name to keys/<to>/as (with board metadata when accepting), refusing to
// replace a key that is there.
static int s_move(const char *keys, const char *from, const char *name, const char *to,
                  const char *as)
{
    char src[PATH_MAX + 96], dst[PATH_MAX + 96], tmp[PATH_MAX + 112];
    s_path(keys, from, name, src, sizeof src);
    s_path(keys, to, as, dst, sizeof dst);
    jf_err_t err = {0};
    zcert_t *cert = jf_curve_load_public(src, &err);
    if (!cert) {
        return cli_fail(CLI_EXIT_ERROR, "no %s key '%s': %s", from, name, err.msg);
    }
    struct stat st;
    if (stat(dst, &st) == 0) {
        zcert_destroy(&cert);
        return cli_fail(CLI_EXIT_ERROR, "%s: a key is there already; revoke or remove it first",
                        dst);
    }
    // A fresh file: the key, where it came from and its board; a quarantine reason stays behind.
    byte no_secret[32] = {0};
    zcert_t *moved = zcert_new_from(zcert_public_key(cert), no_secret);
    const char *from_addr = zcert_meta(cert, "address");
    if (moved && from_addr) {
        zcert_set_meta(moved, "address", "%s", from_addr);
    }
    zcert_destroy(&cert);
    cert = moved;
    if (!cert) {
        return cli_fail(CLI_EXIT_ERROR, "out of memory");
    }
    zcert_set_meta(cert, "board", "%s", as);
    if (snprintf(tmp, sizeof tmp, "%s/%s/.%s.tmp", keys, to, as) >= (int) (sizeof tmp)) {
        (tmp)[0] = '\0'; // too long: an empty path fails to open, visibly
    }
    // Written whole under another name, then renamed: the coordinator never reads half a key.
    int rc = zcert_save_public(cert, tmp);
    zcert_destroy(&cert);
    if (rc != 0 || rename(tmp, dst) != 0 || unlink(src) != 0) {
        (void) unlink(tmp);
        return cli_fail(CLI_EXIT_ERROR, "cannot move %s to %s: %s", src, dst, strerror(errno));
    }
    printf("%s %s -> %s/%s\n", name, from, to, as);
    return CLI_EXIT_OK;
}

// accept takes a pending (or rejected, or revoked) key; the others have one source state.
static int s_accept(const char *keys, const char *name, const char *board)
{
    char path[PATH_MAX + 96];
    for (size_t i = 1; i < sizeof s_states / sizeof s_states[0]; i++) {
        s_path(keys, s_states[i], name, path, sizeof path);
        if (access(path, F_OK) == 0) {
            return s_move(keys, s_states[i], name, "accepted", board ? board : name);
        }
    }
    return cli_fail(CLI_EXIT_ERROR, "no pending, rejected, revoked or quarantined key '%s' in %s",
                    name, keys);
}

static int s_verb(const char *keys, int argc, char **argv)
{
    const char *verb = argv[0];
    if (strcmp(verb, "list") == 0 && argc == 1) {
        for (size_t i = 0; i < sizeof s_states / sizeof s_states[0]; i++) {
            s_list_state(keys, s_states[i]);
        }
        return CLI_EXIT_OK;
    }
    bool board_opt = argc == 4 && strcmp(argv[2], "--board") == 0;
    if ((argc != 2 && !(board_opt && strcmp(verb, "accept") == 0)) || !jf_parse_is_ident(argv[1]) ||
        (board_opt && !jf_parse_is_ident(argv[3]))) {
        return cli_fail(CLI_EXIT_USAGE, "%s (names: lower-case letters, digits, '-')", s_usage);
    }
    if (strcmp(verb, "accept") == 0) {
        return s_accept(keys, argv[1], board_opt ? argv[3] : NULL);
    }
    if (strcmp(verb, "reject") == 0) {
        return s_move(keys, "pending", argv[1], "rejected", argv[1]);
    }
    if (strcmp(verb, "release") == 0) {
        // The coordinator sees the key back in accepted/ and lets the board register again
        // (docs/protocol.md §1.9).
        return s_move(keys, "quarantined", argv[1], "accepted", argv[1]);
    }
    if (strcmp(verb, "revoke") == 0) {
        return s_move(keys, "accepted", argv[1], "revoked", argv[1]);
    }
    return cli_fail(CLI_EXIT_USAGE, "%s", s_usage);
}

int cli_cmd_keys(cli_ctx_t *ctx, int argc, char **argv)
{
    if (argc < 1) {
        return cli_fail(CLI_EXIT_USAGE, "%s", s_usage);
    }
    jf_err_t err = {0};
    const jf_fleet_config_t *fleet = cli_ctx_fleet(ctx, &err);
    if (!fleet) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    char keys[PATH_MAX + 8];
    if (snprintf(keys, sizeof keys, "%s/keys", fleet->coord.data_dir) >= (int) (sizeof keys)) {
        (keys)[0] = '\0'; // too long: an empty path fails to open, visibly
    }
    return s_verb(keys, argc, argv);
}
