/* `jetfleet concurrent search` (cli_cmd_concurrent.c; docs/concurrent.md "The command"): the
 * space it searches and the runs it makes. */
#ifndef CLI_CONCURRENT_H
#define CLI_CONCURRENT_H

#define CLI_CONCURRENT_CPU_STRIDE 4 // every 4th CPU clock step, counted down from the top
#define CLI_CONCURRENT_GPU_STRIDE 2 // every 2nd GPU clock step, counted down from the top
#define CLI_CONCURRENT_EPOCHS     2 // per profile run: the warm-up epoch and one measured

#endif
