/* Test support: a Jetson's filesystem for a real jetfleet-agent with --platform jetson and the
 * test build of jetfleet-privhelper, laid out in a directory: the privhelper fixture tree (power
 * files, state directory, nvpmodel status), the sysfs fixture tree over it, the board's nvpmodel
 * conf, and this machine's mount table and disk counters (the dataset really is here). */
#ifndef JFT_JETSON_H
#define JFT_JETSON_H

#include <stddef.h>

// Lays out the tree of board type (a fixture directory name, "xavier-nx") under root, which must
// not exist yet. 0 or -errno.
int jft_jetson_tree_make(const char *root, const char *type);

// Every regular file below dir/rel with its contents, sorted by path, as one string (caller
// frees): what a test compares before and after something that must leave the tree unchanged.
// NULL on error.
char *jft_jetson_tree_text(const char *dir, const char *rel);

#endif
