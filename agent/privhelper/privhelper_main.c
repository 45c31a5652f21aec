/* jetfleet-privhelper: the only jetfleet program that runs as root. Options (jft-privhelper-test
 * only), caller check, one request from stdin, privhelper_handle; "ok ..." on stdout and exit 0, or
 * one line on stderr and exit 2 (rejected: nothing written) or 1 (failed while applying). Every
 * request and its outcome goes to syslog. docs/privileges.md. */
#include "jf_log.h"
#include "jf_version.h"
#include "privhelper.h"
#include "privhelper_options.h"

#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

// CMake sets this per target: 0 for jetfleet-privhelper, the installed helper, and 1 only for
// jft-privhelper-test, which is never installed (docs/privileges.md §5).
#ifndef JF_PRIVHELPER_TEST_HOOKS
#error "JF_PRIVHELPER_TEST_HOOKS must be set by the target (agent/privhelper/CMakeLists.txt)"
#endif
static const bool s_test_hooks = JF_PRIVHELPER_TEST_HOOKS;

static const int s_exit_codes[] = {
    [PRIVHELPER_APPLIED] = 0, [PRIVHELPER_REJECTED] = 2, [PRIVHELPER_FAILED] = 1};

static void s_report(privhelper_outcome_t out, const char *request, const char *reply,
                     jf_err_t *err)
{
    char quoted[256];
    (void) jf_log_quote(request, quoted, sizeof quoted);
    if (out == PRIVHELPER_APPLIED) {
        printf("%s\n", reply);
        jf_log_notice("request '%s' from uid %u: %s", quoted, (unsigned) getuid(), reply);
        return;
    }
    for (char *nl = strchr(err->msg, '\n'); nl; nl = strchr(nl, '\n')) {
        *nl = ' '; // the reply on stderr is one line
    }
    const char *what = out == PRIVHELPER_REJECTED ? "rejected" : "failed";
    fprintf(stderr, "jetfleet-privhelper: %s: %s\n", what, err->msg);
    jf_log_write(out == PRIVHELPER_REJECTED ? JF_LOG_WARN : JF_LOG_ERROR,
                 "request '%s' from uid %u: %s: %s", quoted, (unsigned) getuid(), what, err->msg);
}

int main(int argc, char **argv)
{
    (void) umask(077);
    privhelper_options_t opts;
    jf_err_t err = {0};
    bool hooks = s_test_hooks && getauxval(AT_SECURE) == 0;
    if (privhelper_options_parse(argc, argv, hooks, &opts, &err) != 0) {
        fprintf(stderr, "jetfleet-privhelper: rejected: %s\n", err.msg);
        return s_exit_codes[PRIVHELPER_REJECTED];
    }
    if (opts.help || opts.version) {
        fputs(opts.help ? privhelper_options_usage() : "jetfleet-privhelper " JF_VERSION "\n",
              stdout);
        return 0;
    }
    jf_log_open("jetfleet-privhelper", JF_LOG_SINK_SYSLOG, JF_LOG_NOTICE);
    privhelper_config_t config = {.root = opts.root,
                                  .nvpmodel = opts.nvpmodel,
                                  .nvpmodel_timeout_us = PRIVHELPER_NVPMODEL_TIMEOUT_US};
    char request[PRIVHELPER_LINE_MAX + 2] = "", reply[PRIVHELPER_REPLY_MAX] = "";
    size_t len = 0;
    privhelper_outcome_t out = PRIVHELPER_REJECTED;
    privhelper_t *helper = NULL;
    if (privhelper_caller_check(&opts.caller, STDIN_FILENO, &err) == 0 &&
        privhelper_caller_read(STDIN_FILENO, request, sizeof request, &len,
                               PRIVHELPER_READ_TIMEOUT_US, &err) == 0) {
        helper = privhelper_new(&config, &err);
        out = helper ? privhelper_handle(helper, request, len, reply, sizeof reply, &err)
                     : PRIVHELPER_FAILED;
    }
    s_report(out, request, reply, &err);
    privhelper_destroy(&helper);
    jf_log_close();
    return s_exit_codes[out];
}
