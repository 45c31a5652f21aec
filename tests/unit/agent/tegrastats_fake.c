/* jft-fake-tegrastats: stands in for /usr/bin/tegrastats in tests of the agent's tegrastats
 * fallback. Takes exactly `--interval <ms>`, as the agent runs it, and prints the lines of
 * <its own directory>/tegrastats.log (a copy of a tests/fixtures/tegrastats log) one per
 * interval, starting at once and repeating the file forever. Each start appends
 * "pid <pid> interval <ms>" to <its directory>/tegrastats.calls, and every line printed is
 * followed by a noise line on stderr, which the agent must not let into its log. Test use
 * only: run it through a symlink in a test's temporary directory. */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S_LINES_MAX 64
#define S_LINE_MAX  4096

static int s_load(const char *path, char lines[][S_LINE_MAX + 2], int *ret_n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "fake tegrastats: cannot open '%s': %s\n", path, strerror(errno));
        return -1;
    }
    int n = 0;
    while (n < S_LINES_MAX && fgets(lines[n], S_LINE_MAX + 1, f)) {
        size_t len = strlen(lines[n]);
        if (len > 0 && lines[n][len - 1] != '\n') {
            lines[n][len] = '\n'; // the file's last line; room was kept for it
            lines[n][len + 1] = '\0';
        }
        n += lines[n][0] != '\n';
    }
    fclose(f);
    *ret_n = n;
    return n > 0 ? 0 : -1;
}

static int s_write_all(int fd, const char *text)
{
    size_t len = strlen(text);
    while (len > 0) {
        ssize_t w = write(fd, text, len);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return -1;
        }
        text += w;
        len -= (size_t) w;
    }
    return 0;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    long ms = argc == 3 && strcmp(argv[1], "--interval") == 0 ? strtol(argv[2], &end, 10) : -1;
    if (ms <= 0 || !end || *end) {
        fprintf(stderr, "usage: tegrastats --interval <ms>\n");
        return 2;
    }
    char self[PATH_MAX], dir[PATH_MAX], path[PATH_MAX + 32];
    (void) snprintf(self, sizeof self, "%s", argv[0]);
    (void) snprintf(dir, sizeof dir, "%s", dirname(self));
    static char lines[S_LINES_MAX][S_LINE_MAX + 2];
    int n = 0;
    (void) snprintf(path, sizeof path, "%s/tegrastats.log", dir);
    if (s_load(path, lines, &n) != 0) {
        return 1;
    }
    (void) snprintf(path, sizeof path, "%s/tegrastats.calls", dir);
    FILE *calls = fopen(path, "a");
    if (calls) {
        fprintf(calls, "pid %ld interval %ld\n", (long) getpid(), ms);
        fclose(calls);
    }
    struct timespec period = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    for (long i = 0;; i++) {
        if (s_write_all(STDOUT_FILENO, lines[i % n]) != 0) {
            return 0; // the reader is gone
        }
        (void) s_write_all(STDERR_FILENO, "fake tegrastats: stderr noise\n");
        (void) nanosleep(&period, NULL);
    }
}
