/* libFuzzer target: the sweep loader and expander (common/jf_sweep*.c) against the study's lab
 * (tests/fixtures/yaml/good/fleet-lab.yaml, loaded once). Any input gives runs or an error with
 * a position, never a crash, leak or undefined behaviour. */
#include "jf_fleet_config.h"
#include "jf_sweep.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static jf_fleet_config_t *s_fleet; // the lab every input expands against; lives for the process

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void) argc;
    (void) argv;
    jf_err_t err = {0};
    s_fleet = jf_fleet_config_load(JF_FUZZ_FLEET, &err);
    if (!s_fleet) {
        fprintf(stderr, "fuzz_sweep: cannot load %s: %s\n", JF_FUZZ_FLEET, err.msg);
        exit(1); // a broken harness, not a finding
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    jf_err_t err = {0};
    jf_sweep_t *sweep = jf_sweep_parse((const char *) data, size, "fuzz.yaml", s_fleet, &err);
    jf_sweep_destroy(&sweep);
    return 0;
}
