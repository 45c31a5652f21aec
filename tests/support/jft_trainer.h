/* Test support: a trainer seen from outside the agent — its process (pid, start time, the file
 * its stdout goes to), the records in its output file, and the agent's spool file read directly
 * once the agent has stopped (docs/protocol.md §4.4.1). For the agent's trainer-handling tests. */
#ifndef JFT_TRAINER_H
#define JFT_TRAINER_H

#include <stddef.h>

// Field 22 of /proc/PID/stat (the start time in clock ticks since boot) of a live process that is
// not a zombie; 0 if there is none.
long long jft_trainer_start_ticks(long long pid);

// The pid of a live process whose standard output is the file at path (a trainer writing its
// records there); 0 if there is none.
long long jft_trainer_pid_by_stdout(const char *path);

// Into out (PATH_MAX): the path of the first trainer output file (trainer-*.jsonl) in dir. 0, or
// -ENOENT.
int jft_trainer_find_output(const char *dir, char *out);

// The keys of the last records an agent spooled (the read mark of its spool's trainer row).
typedef struct jft_trainer_mark {
    long long epoch;    // the last epoch record's epoch; -1: none
    long long mb_epoch; // the last minibatch record's (epoch, index); -1: none
    long long mb_index;
} jft_trainer_mark_t;

// Record lines (kind minibatch or epoch) in a trainer's output text above mark (NULL: all).
long long jft_trainer_records(const char *text, size_t len, const jft_trainer_mark_t *mark);

// The read mark of the trainer row of attempt in the spool file at path. 0 or -1.
int jft_trainer_spool_mark(const char *path, long long attempt, jft_trainer_mark_t *ret_mark);

// One integer from an SQLite file (an agent's spool once the agent has stopped); -1 on error,
// with a line on stderr.
long long jft_trainer_sqlite_int(const char *db_path, const char *sql);

// The boot clock (CLOCK_BOOTTIME, the clock /proc's start times count on) in ms, and a start time
// in clock ticks on it in ms.
long long jft_trainer_boot_ms(void);
long long jft_trainer_ticks_ms(long long ticks);

#endif
