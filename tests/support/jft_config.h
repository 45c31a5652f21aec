/* Test support: fleet files from the fixtures, loaded through the real parser (for the unit tests
 * of the fleet file and the sweeps that read them). Fails the running cmocka test on error. */
#ifndef JFT_CONFIG_H
#define JFT_CONFIG_H

#include "jf_fleet_config.h"

// Loads $JF_FIXTURES/rel; fails the test with the parser's file:line:col message if it cannot.
// Caller owns the result; release with jf_fleet_config_destroy.
jf_fleet_config_t *jft_fleet_fixture(const char *rel);

#endif
