/* Store: sweeps imported from CSV files (docs/import.md). Imported runs are done runs of attempt
 * 1 with their operating point in the custom_* columns, so coord_store_obs_each and the tables
 * read them like a fleet's; the spec columns nothing measured are placeholders (docs/import.md,
 * "Placeholders"). Parsing the file is coord_import.c's job; this file only speaks SQL. */
#include "coord_store_internal.h"

#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define S_IMPORT_ATTEMPT 1 // imported runs have one attempt

int coord_store_import_sweep(coord_store_t *self, const char *name, const char *file,
                             const char *origin, jf_err_t *err)
{
    int64_t fleet = 0;
    int rc = coord_store_scalar(
        self, "SELECT count(*) FROM sweeps WHERE name = ? AND source <> 'imported'",
        COORD_BINDS(coord_text(name)), &fleet, err);
    if (rc == 0 && fleet > 0) {
        return jf_err_set(err, -EEXIST,
                          "a sweep named '%s' was submitted to the fleet; import under another "
                          "--sweep-name",
                          name);
    }
    int64_t now = jf_clock_wall_us();
    return rc ? rc
              : coord_store_exec(
                    self,
                    "INSERT INTO sweeps(name, file, yaml, description, submitted_us, updated_us,"
                    " source, origin) VALUES(?1, ?2, '', 'imported from ' || ?2, ?3, ?3,"
                    " 'imported', ?4) ON CONFLICT(name) DO UPDATE SET file = ?2,"
                    " description = 'imported from ' || ?2, updated_us = ?3, origin = ?4",
                    COORD_BINDS(coord_text(name), coord_text(file), coord_int(now),
                                coord_text(origin)),
                    err);
}

// The board row: new boards are stored as imported and offline; a fleet board's name, or an
// imported board of another type, is refused (one name, one board).
static int s_board(coord_store_t *self, const coord_import_run_t *run, jf_err_t *err)
{
    int64_t clash = 0;
    int rc = coord_store_scalar(
        self,
        "SELECT count(*) FROM boards WHERE name = ?1 AND (platform <> 'imported' OR type <> ?2)",
        COORD_BINDS(coord_text(run->board), coord_text(run->board_type)), &clash, err);
    if (rc == 0 && clash > 0) {
        return jf_err_set(err, -EEXIST,
                          "board '%s' is already in the store as a fleet board or with another "
                          "type than '%s'; give imported boards their own names",
                          run->board, run->board_type);
    }
    int64_t now = jf_clock_wall_us();
    return rc ? rc
              : coord_store_exec(self,
                                 "INSERT INTO boards(name, type, platform, facts, online,"
                                 " first_seen_us, last_change_us) VALUES(?1, ?2, 'imported', NULL,"
                                 " 0, ?3, ?3) ON CONFLICT(name) DO NOTHING",
                                 COORD_BINDS(coord_text(run->board), coord_text(run->board_type),
                                             coord_int(now)),
                                 err);
}

// The run's power label, as a fleet run with the same custom point would have it.
static void s_power_label(const coord_import_run_t *run, char *buf, size_t size)
{
    jf_run_spec_t spec = {.custom = {.n_cores = run->cores,
                                     .cpu_hz = run->cpu_hz,
                                     .gpu_hz = run->gpu_hz,
                                     .emc_hz = run->emc_hz}};
    (void) snprintf(spec.power_mode, sizeof spec.power_mode, "%s", run->power_mode);
    jf_run_spec_power_label(&spec, buf, size);
}

// Placeholders (docs/import.md): model and dataset 'imported', power_mode_id -1, prefetch,
// threads, seed, telemetry_hz and timeout_us 0, drop_caches 0. created_us is the import time.
static int s_run_row(coord_store_t *self, const coord_import_run_t *run, int64_t n_epochs,
                     jf_err_t *err)
{
    char power[JF_RUN_POWER_LABEL_MAX + 1];
    s_power_label(run, power, sizeof power);
    return coord_store_exec(
        self,
        "INSERT INTO runs(id, ord, board, workload, model, dataset, epochs, power_mode_id,"
        " power_mode, storage, workers, prefetch, batch_size, repeat, threads, seed, drop_caches,"
        " telemetry_hz, timeout_us, state, attempt, created_us, custom_cores, custom_cpu_hz,"
        " custom_gpu_hz, custom_emc_hz, power) VALUES(?1, ?2, ?3, ?4, 'imported', 'imported', ?5,"
        " -1, ?6, ?7, ?8, 0, ?9, ?10, 0, 0, 0, 0, 0, 'done', 1, ?11, ?12, ?13, ?14, ?15, ?16)"
        " ON CONFLICT(id) DO UPDATE SET ord = ?2, epochs = ?5, power_mode = ?6, power = ?16,"
        " state = 'done', attempt = 1",
        COORD_BINDS(coord_text(run->id), coord_int(run->ord), coord_text(run->board),
                    coord_text(run->workload), coord_int(n_epochs), coord_text(run->power_mode),
                    coord_text(run->storage), coord_int(run->workers), coord_int(run->batch_size),
                    coord_int(run->repeat), coord_int(jf_clock_wall_us()), coord_int(run->cores),
                    coord_int(run->cpu_hz), coord_int(run->gpu_hz), coord_int(run->emc_hz),
                    coord_text(power)),
        err);
}

// samples is a placeholder 0: the file does not say how many samples an epoch had.
static int s_epoch_row(coord_store_t *self, const char *run, const coord_import_epoch_t *e,
                       jf_err_t *err)
{
    return coord_store_exec(
        self,
        "INSERT INTO epochs(run, attempt, epoch, warmup, e2e_us, fetch_stall_us, compute_us,"
        " samples, energy_mj, avg_power_mw) VALUES(?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
        COORD_BINDS(coord_text(run), coord_int(S_IMPORT_ATTEMPT), coord_int(e->epoch),
                    coord_int(e->epoch == 0), coord_int(e->e2e_us), coord_int(e->fetch_stall_us),
                    coord_int(e->compute_us), coord_real(e->energy_mj),
                    coord_real(e->avg_power_mw)),
        err);
}

int coord_store_import_run(coord_store_t *self, const char *sweep, const coord_import_run_t *run,
                           const coord_import_epoch_t *epochs, size_t n, jf_err_t *err)
{
    int rc = s_board(self, run, err);
    rc = rc ? rc : s_run_row(self, run, (int64_t) n, err);
    // A re-import replaces what an earlier import stored for the run (same id: same file row
    // keys), so importing a file twice leaves the store as importing it once.
    rc = rc ? rc
            : coord_store_exec(self, "DELETE FROM epochs WHERE run = ?",
                               COORD_BINDS(coord_text(run->id)), err);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = s_epoch_row(self, run->id, &epochs[i], err);
    }
    return rc ? rc
              : coord_store_exec(
                    self,
                    "INSERT INTO sweep_runs(sweep, run, ord) VALUES(?, ?, ?)"
                    " ON CONFLICT(sweep, run) DO UPDATE SET ord = excluded.ord",
                    COORD_BINDS(coord_text(sweep), coord_text(run->id), coord_int(run->ord)), err);
}
