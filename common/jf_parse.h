/* Checked parsing of numbers, durations and sizes from text (argv, YAML scalars, sysfs values).
 * Every function rejects empty input, trailing junk and out-of-range values. Not for JSON. */
#ifndef JF_PARSE_H
#define JF_PARSE_H

#include "jf_err.h"

#include <stdbool.h>
#include <stdint.h>

// Parses a base-10 integer in [min, max] into *ret_value. Returns 0, or -EINVAL with err naming
// the text and the range.
int jf_parse_i64(const char *text, int64_t min, int64_t max, int64_t *ret_value, jf_err_t *err);

// Parses a finite decimal number in [min, max]. Returns 0 or -EINVAL.
int jf_parse_double(const char *text, double min, double max, double *ret_value, jf_err_t *err);

// Parses a duration "<number><unit>" with unit us, ms, s, m or h (a bare number is an error, so
// the unit is always explicit) into microseconds in [min_us, max_us]. Returns 0 or -EINVAL.
int jf_parse_duration_us(const char *text, int64_t min_us, int64_t max_us, int64_t *ret_us,
                         jf_err_t *err);

// Parses a frequency into whole Hz in [min_hz, max_hz]: a bare integer is Hz ("1190400000"), a
// number with a unit Hz, kHz, MHz or GHz (any case) is scaled ("1190.4MHz", "1.9GHz"). A value
// that is not whole Hz is an error. Returns 0 or -EINVAL.
int jf_parse_freq_hz(const char *text, int64_t min_hz, int64_t max_hz, int64_t *ret_hz,
                     jf_err_t *err);

// Parses "true"/"false" (also "yes"/"no", "on"/"off"). Returns 0 or -EINVAL.
int jf_parse_bool(const char *text, bool *ret_value, jf_err_t *err);

// True if text is a valid identifier for names that travel on the wire or into file names:
// ^[a-z0-9][a-z0-9._-]{0,63}$ with no "..". Board names, sweep names, run ids, media names.
bool jf_parse_is_ident(const char *text);

#define JF_IDENT_MAX 64 // longest identifier accepted by jf_parse_is_ident, without the NUL

#endif
