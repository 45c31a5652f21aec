/* Plan builders. Paths come from privhelper_paths only, so they always fit. */
#include "privhelper_plan.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

void privhelper_plan_init(privhelper_plan_t *plan)
{
    plan->n_steps = 0;
    plan->state_len = 0;
    plan->state[0] = '\0';
    plan->reply_slot = 0;
    plan->note[0] = '\0';
}

static privhelper_step_t *s_next(privhelper_plan_t *plan, privhelper_step_kind_t kind,
                                 jf_err_t *err)
{
    if (plan->n_steps == PRIVHELPER_STEPS_MAX) {
        jf_err_set(err, -ENOSPC, "more than %d steps in one request", PRIVHELPER_STEPS_MAX);
        return NULL;
    }
    privhelper_step_t *s = &plan->steps[plan->n_steps++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    return s;
}

int privhelper_plan_write(privhelper_plan_t *plan, const char *path, int64_t value, jf_err_t *err)
{
    privhelper_step_t *s = s_next(plan, PRIVHELPER_STEP_WRITE, err);
    if (!s) {
        return -ENOSPC;
    }
    (void) snprintf(s->path, sizeof s->path, "%s", path); // built within PRIVHELPER_PATH_MAX
    s->value = value;
    return 0;
}

int privhelper_plan_range(privhelper_plan_t *plan, const char *min_path, const char *max_path,
                          int64_t min, int64_t max, jf_err_t *err)
{
    privhelper_step_t *s = s_next(plan, PRIVHELPER_STEP_RANGE, err);
    if (!s) {
        return -ENOSPC;
    }
    (void) snprintf(s->path, sizeof s->path, "%s", min_path); // as above
    (void) snprintf(s->path2, sizeof s->path2, "%s", max_path);
    s->value = min;
    s->value2 = max;
    return 0;
}

int privhelper_plan_step(privhelper_plan_t *plan, privhelper_step_kind_t kind, int64_t value,
                         jf_err_t *err)
{
    privhelper_step_t *s = s_next(plan, kind, err);
    if (!s) {
        return -ENOSPC;
    }
    s->value = value;
    return 0;
}
