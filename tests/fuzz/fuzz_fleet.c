/* libFuzzer target: the fleet.yaml loader (common/jf_fleet_config.c over libyaml). Any input
 * gives a config or an error with a position, never a crash, leak or undefined behaviour. */
#include "jf_fleet_config.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jf_err_t err = {0};
    jf_fleet_config_t *fleet =
        jf_fleet_config_parse((const char *) data, size, "fuzz.yaml", "/nonexistent", &err);
    jf_fleet_config_destroy(&fleet);
    return 0;
}
