/* The platform's run interface (agent_platform_run.h): dispatch to an implementation's run
 * operations, and what a real machine does where it has none: a Jetson or a host runs the
 * trainer on the dataset's files in the monotonic clock and has nothing modelled to update.
 * The sim board's operations are agent_platform_sim_run.c. */
#include "agent_platform_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int agent_platform_trainer_add(agent_platform_trainer_t *trainer, jf_err_t *err, const char *fmt,
                               ...)
{
    size_t room = sizeof trainer->buf - trainer->used;
    bool program = trainer->program == NULL;
    if (!program && trainer->n_args == AGENT_PLATFORM_TRAINER_ARGS_MAX) {
        return jf_err_set(err, -ENOSPC, "trainer: more than %d arguments",
                          AGENT_PLATFORM_TRAINER_ARGS_MAX);
    }
    char *at = trainer->buf + trainer->used;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(at, room, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t) n >= room) {
        return jf_err_set(err, -ENOSPC, "trainer: its arguments exceed %zu bytes",
                          sizeof trainer->buf);
    }
    trainer->used += (size_t) n + 1;
    if (program) {
        trainer->program = at;
    } else {
        trainer->args[trainer->n_args++] = at;
    }
    return 0;
}

// A real machine's trainer: the agent's jetfleet-train on the dataset's files, on the threads
// the run asks for and the best device it finds.
static int s_real_trainer(const agent_platform_run_t *run, agent_platform_trainer_t *t,
                          jf_err_t *err)
{
    int rc = agent_platform_trainer_add(t, err, "%s", run->train_bin);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--data");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%s", run->dataset_dir);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--threads");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%d", run->spec->threads);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--device");
    return rc ? rc : agent_platform_trainer_add(t, err, "auto");
}

int agent_platform_trainer(const agent_platform_t *self, const agent_platform_run_t *run,
                           agent_platform_trainer_t *ret_trainer, jf_err_t *err)
{
    const agent_platform_run_ops_t *ops = self->ops->run;
    ret_trainer->program = NULL;
    ret_trainer->n_args = 0;
    ret_trainer->used = 0;
    if (ops && ops->trainer) {
        return ops->trainer(self, run, ret_trainer, err);
    }
    return s_real_trainer(run, ret_trainer, err);
}

void agent_platform_timing(const agent_platform_t *self, agent_platform_timing_t *ret_timing)
{
    const agent_platform_run_ops_t *ops = self->ops->run;
    *ret_timing = (agent_platform_timing_t){.own_clock = false, .speed = 1.0};
    (void) snprintf(ret_timing->time_base, sizeof ret_timing->time_base, "monotonic");
    if (ops && ops->timing) {
        ops->timing(self, ret_timing);
    }
}

bool agent_platform_has_dataset_files(const agent_platform_t *self)
{
    return !self->ops->run || self->ops->run->dataset_files;
}

bool agent_platform_prepare_run(agent_platform_t *self, const jf_run_spec_t *spec,
                                agent_platform_prepared_t *ret_prepared)
{
    const agent_platform_run_ops_t *ops = self->ops->run;
    return ops && ops->prepare_run && ops->prepare_run(self, spec, ret_prepared);
}

json_t *agent_platform_power_record(const agent_platform_t *self, const jf_run_spec_t *spec)
{
    const agent_platform_run_ops_t *ops = self->ops->run;
    if (ops && ops->power_record) {
        return ops->power_record(self, spec);
    }
    // Nothing was switched (a host's DEFAULT) and there is nothing to read back.
    return json_pack("{s:i, s:s}", "mode_id", spec->power_mode_id, "mode_name", spec->power_mode);
}

int agent_platform_clock_tables(const agent_platform_t *self, agent_power_tables_t *ret_tables,
                                jf_err_t *err)
{
    const agent_platform_run_ops_t *ops = self->ops->run;
    if (ops && ops->clock_tables) {
        return ops->clock_tables(self, ret_tables, err);
    }
    return jf_err_set(err, -ENOTSUP, "no power handle");
}

int agent_platform_trainer_line(agent_platform_t *self, const char *dataset, const json_t *line,
                                agent_platform_line_t *ret_line, jf_err_t *err)
{
    const agent_platform_run_ops_t *ops = self->ops->run;
    *ret_line = (agent_platform_line_t){0};
    return ops && ops->trainer_line ? ops->trainer_line(self, dataset, line, ret_line, err) : 0;
}

int agent_platform_tick(agent_platform_t *self, int64_t now_us, jf_err_t *err)
{
    const agent_platform_run_ops_t *ops = self->ops->run;
    return ops && ops->tick ? ops->tick(self, now_us, err) : 0;
}

int agent_platform_run_end(agent_platform_t *self, jf_err_t *err)
{
    const agent_platform_run_ops_t *ops = self->ops->run;
    return ops && ops->run_end ? ops->run_end(self, err) : 0;
}
