/* Test support: fleet files from the fixtures (jft_config.h). */
#include "jft_config.h"

#include "jft_fs.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

jf_fleet_config_t *jft_fleet_fixture(const char *rel)
{
    char path[PATH_MAX] = {0};
    jft_fixture(rel, path);
    jf_err_t err = {0};
    jf_fleet_config_t *fleet = jf_fleet_config_load(path, &err);
    if (!fleet) {
        fail_msg("%s: %s", rel, err.msg);
    }
    return fleet;
}
