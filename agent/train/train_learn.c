/* The learner of a simulated run that trains for real (train_learn.h): dataset, loader and
 * torch session, one step per simulated minibatch. */
#include "train_learn.h"

#include "jf_torch.h"
#include "train_dataset.h"
#include "train_loader.h"
#include "train_sim.h"
#include "train_weights.h"

#include <errno.h>
#include <stdlib.h>

struct train_learn {
    train_run_opts_t opts;       // copy; strings borrowed from the caller
    train_dataset_t *dataset;    // owned
    train_loader_t *loader;      // owned
    jf_torch_session_t *session; // owned
    uint64_t extra_pass;         // loader stream of the next pass beyond an epoch's own
};

// The loader's fetch over the dataset (as train_run.c's): each sample its augmentation seed.
static int s_fetch(void *ctx, size_t index, float *ret_x, int64_t *ret_y, jf_err_t *err)
{
    const train_learn_t *self = ctx;
    train_dataset_req_t req = {.index = train_shard_global(&self->opts.shard, index),
                               .aug_seed = train_loader_sample_seed(self->loader, index)};
    return train_dataset_fetch(self->dataset, &req, ret_x, ret_y, err);
}

static int s_failed(const jf_err_t *err, int fallback)
{
    return err && err->code < 0 ? err->code : fallback;
}

static int s_check_shape(const train_learn_t *self, jf_torch_model_kind_t model, jf_err_t *err)
{
    jf_torch_shape_t want = {0};
    int rc = jf_torch_model_shape(model, &want, err);
    train_dataset_shape_t have = train_dataset_shape(self->dataset);
    if (rc == 0 && (have.channels != want.channels || have.height != want.height ||
                    have.width != want.width || have.classes != want.classes)) {
        rc = jf_err_set(err, -EINVAL, "--data '%.200s' holds %s, which model '%s' cannot train on",
                        self->opts.data_dir,
                        train_dataset_kind_name(train_dataset_kind(self->dataset)),
                        jf_torch_model_name(model));
    }
    return rc;
}

static int s_open_loader(train_learn_t *self, jf_err_t *err)
{
    size_t total = train_dataset_size(self->dataset);
    size_t samples = train_shard_size(&self->opts.shard, total);
    if (samples == 0) {
        return jf_err_set(err, -EINVAL, "--shard %d/%d: the dataset's %zu samples leave it empty",
                          self->opts.shard.index, self->opts.shard.count, total);
    }
    train_loader_opts_t lo = {
        .samples = samples,
        .sample_floats = train_dataset_sample_floats(self->dataset),
        .batch = self->opts.batch,
        .drop_last = true, // every real step can take as many samples as the model's minibatch
        .seed = self->opts.seed,
        .fetch = s_fetch,
        .fetch_ctx = self,
    };
    self->loader = train_loader_new(&lo, err);
    return self->loader ? 0 : s_failed(err, -EINVAL);
}

static int s_open_session(train_learn_t *self, jf_torch_model_kind_t model, jf_err_t *err)
{
    jf_torch_session_opts_t so = {.model = model,
                                  .device = JF_TORCH_DEVICE_CPU,
                                  .threads = self->opts.threads,
                                  .seed = self->opts.seed};
    self->session = jf_torch_session_new(&so, err);
    if (!self->session) {
        return s_failed(err, -EIO);
    }
    return self->opts.init_weights
               ? train_weights_load_file(self->session, self->opts.init_weights, err)
               : 0;
}

static int s_open_all(train_learn_t *self, jf_err_t *err)
{
    jf_torch_model_kind_t model = JF_TORCH_MODEL_LENET5;
    int rc = jf_torch_model_parse(self->opts.run.model, &model, err);
    if (rc < 0) {
        return rc;
    }
    self->dataset = train_dataset_open(self->opts.data_dir, err);
    rc = self->dataset ? 0 : s_failed(err, -EIO);
    rc = rc < 0 ? rc : s_check_shape(self, model, err);
    rc = rc < 0 ? rc : s_open_loader(self, err);
    return rc < 0 ? rc : s_open_session(self, model, err);
}

train_learn_t *train_learn_new(const train_run_opts_t *opts, jf_err_t *err)
{
    train_learn_t *self = calloc(1, sizeof *self);
    if (!self) {
        (void) jf_err_set(err, -ENOMEM, "learn: out of memory");
        return NULL;
    }
    self->opts = *opts;
    self->extra_pass = (uint64_t) (opts->epochs > 0 ? opts->epochs : 1);
    if (s_open_all(self, err) < 0) {
        train_learn_destroy(&self);
    }
    return self;
}

void train_learn_destroy(train_learn_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    train_learn_t *self = *self_p;
    train_loader_destroy(&self->loader);
    jf_torch_session_destroy(&self->session);
    train_dataset_destroy(&self->dataset);
    free(self);
    *self_p = NULL;
}

int train_learn_epoch_start(train_learn_t *self, int epoch, jf_err_t *err)
{
    return train_loader_epoch_start(self->loader, (uint64_t) epoch, err);
}

int train_learn_step(train_learn_t *self, size_t samples, double *ret_loss, jf_err_t *err)
{
    if (samples < 1 || samples > self->opts.batch) {
        return jf_err_set(err, -EINVAL, "learn: a step of %zu samples, expected 1..%zu", samples,
                          self->opts.batch);
    }
    const train_batch_t *batch = NULL;
    int rc = train_loader_next(self->loader, &batch, err);
    if (rc == 0 && !batch) { // the pass is over: a new shuffled one
        rc = train_loader_epoch_start(self->loader, self->extra_pass++, err);
        rc = rc < 0 ? rc : train_loader_next(self->loader, &batch, err);
    }
    if (rc < 0) {
        return rc;
    }
    if (!batch) {
        return jf_err_set(err, -EIO, "learn: the loader gave no minibatch after a new pass");
    }
    return jf_torch_session_step(self->session, batch->x, batch->y, samples, ret_loss, err);
}

int train_learn_finish(train_learn_t *self, jf_err_t *err)
{
    return self->opts.out_weights
               ? train_weights_save_file(self->session, self->opts.out_weights, err)
               : 0;
}

static int s_step_cb(void *ctx, size_t samples, double *ret_loss, jf_err_t *err)
{
    return train_learn_step(ctx, samples, ret_loss, err);
}

static int s_epoch_cb(void *ctx, int epoch, jf_err_t *err)
{
    return train_learn_epoch_start(ctx, epoch, err);
}

static int s_finish_cb(void *ctx, jf_err_t *err)
{
    return train_learn_finish(ctx, err);
}

int train_learn_exec_sim(const train_run_opts_t *opts, FILE *out, jf_err_t *err)
{
    train_sim_t *sim = train_sim_new(opts, out, err);
    train_learn_t *learn = sim ? train_learn_new(opts, err) : NULL;
    int rc = learn ? 0 : err->code;
    if (rc == 0) {
        train_sim_learner_t learner = {
            .step = s_step_cb, .epoch_start = s_epoch_cb, .finish = s_finish_cb, .ctx = learn};
        train_sim_set_learner(sim, &learner);
        rc = train_sim_exec(sim, err);
    }
    train_learn_destroy(&learn);
    train_sim_destroy(&sim);
    return rc;
}
