/* jetfleet report: one self-contained HTML file with a sweep's figures (coord_report.h;
 * docs/report.md). Reads the store only; writes FILE through FILE.part and a rename, so a failed
 * run leaves no half-written page. */
#include "cli_analysis.h"
#include "cli_cmds.h"
#include "coord_report.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_USAGE    "usage: jetfleet report --sweep NAME -o FILE.html [--run RUN_ID]"
#define S_PATH_MAX 4096

typedef struct s_args {
    const char *sweep, *out, *run;
} s_args_t;

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const struct option opts[] = {{"sweep", required_argument, NULL, 's'},
                                         {"output", required_argument, NULL, 'o'},
                                         {"run", required_argument, NULL, 'r'},
                                         {NULL, 0, NULL, 0}};
    char **nargv = cli_getopt_argv("report", argc, argv);
    bool ok = nargv != NULL;
    optind = 0; // restart getopt fully: it has parsed another command's words before
    *a = (s_args_t){0};
    for (int c; ok && (c = getopt_long(argc + 1, nargv, "o:", opts, NULL)) != -1;) {
        const char **dst = c == 's' ? &a->sweep : c == 'o' ? &a->out : c == 'r' ? &a->run : NULL;
        ok = dst != NULL;
        if (ok) {
            *dst = optarg;
        }
    }
    free(nargv);
    return ok && optind == argc + 1 && a->sweep && a->out ? 0 : -1;
}

// Writes the page to path through path.part. 0 or a negative errno with err.
static int s_write(const json_t *data, const char *path, jf_err_t *err)
{
    char part[S_PATH_MAX];
    if (snprintf(part, sizeof part, "%s.part", path) >= (int) sizeof part) {
        return jf_err_set(err, -EINVAL, "-o: path too long");
    }
    FILE *f = fopen(part, "w");
    if (!f) {
        return jf_err_set(err, -errno, "cannot write '%.200s': %s", part, strerror(errno));
    }
    int rc = coord_report_write_html(data, f, err);
    if (fclose(f) != 0 && rc == 0) {
        rc = jf_err_set(err, -EIO, "cannot write '%.200s': %s", part, strerror(errno));
    }
    if (rc == 0 && rename(part, path) != 0) {
        rc = jf_err_set(err, -errno, "cannot rename '%.200s' to '%.200s': %s", part, path,
                        strerror(errno));
    }
    if (rc != 0) {
        (void) remove(part); // the error above is what the user needs; a leftover is not
    }
    return rc;
}

// "report=FILE figures=N with_data=M simulated=S": what the page holds, as name=value.
static void s_print_summary(const json_t *data, const char *path)
{
    size_t i, with_data = 0, sim = 0;
    json_t *fig;
    json_array_foreach(json_object_get(data, "figures"), i, fig)
    {
        with_data += json_object_get(fig, "no_data") ? 0 : 1;
        sim += json_is_true(json_object_get(fig, "simulated")) ? 1 : 0;
    }
    printf("report=%s figures=%zu with_data=%zu simulated=%zu\n", path,
           json_array_size(json_object_get(data, "figures")), with_data, sim);
}

int cli_cmd_report(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a;
    if (s_parse(argc, argv, &a) != 0) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    coord_store_t *store = NULL;
    coord_validity_opts_t vopts = {0};
    int rc = cli_analysis_store(ctx, &store, &vopts);
    if (rc != CLI_EXIT_OK) {
        return rc;
    }
    jf_err_t err = {0};
    coord_report_opts_t opts = {.sweep = a.sweep, .run = a.run, .valid = &vopts};
    json_t *data = coord_report_data(store, &opts, &err);
    if (!data) {
        return cli_fail(CLI_EXIT_ERROR, "report: %s", err.msg);
    }
    rc = s_write(data, a.out, &err);
    if (rc == 0) {
        s_print_summary(data, a.out);
    }
    json_decref(data);
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "report: %s", err.msg);
}
