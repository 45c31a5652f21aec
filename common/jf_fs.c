/* mkdir -p for data directories and dataset output directories. */
#include "jf_fs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int s_mkdir_one(const char *path, mode_t mode, jf_err_t *err)
{
    if (mkdir(path, mode) == 0) {
        return 0;
    }
    int e = errno;
    struct stat st = {0};
    if (e == EEXIST && stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            return 0;
        }
        return jf_err_set(err, -ENOTDIR, "%s: exists and is not a directory", path);
    }
    return jf_err_set(err, -e, "%s: cannot create directory: %s", path, strerror(e));
}

int jf_fs_mkdir_p(const char *dir, mode_t mode, jf_err_t *err)
{
    char path[PATH_MAX] = {0};
    int n = snprintf(path, sizeof path, "%s", dir ? dir : "");
    if (n <= 0 || (size_t) n >= sizeof path) {
        return jf_err_set(err, -ENAMETOOLONG, "directory name empty or too long");
    }
    // Create each parent in turn: cut the string at every '/' after the first character.
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') {
            continue;
        }
        *p = '\0';
        int rc = s_mkdir_one(path, mode, err);
        *p = '/';
        if (rc < 0) {
            return rc;
        }
    }
    return s_mkdir_one(path, mode, err);
}
