/* The training loop of jetfleet-train: per minibatch, time waiting for the loader (fetch stall)
 * and the torch step (compute); per epoch, time end to end including the loader's start-up.
 * Owns the dataset, session, loader and records; the records module does the output. */
#include "train_run.h"

#include "jf_rng.h"
#include "jf_torch.h"
#include "jf_units.h"
#include "train_conc.h"
#include "train_dataset.h"
#include "train_loader.h"
#include "train_records.h"
#include "train_weights.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct train_run {
    train_run_opts_t opts;       // copy; strings borrowed from the caller
    FILE *out;                   // borrowed; record lines
    train_dataset_t *dataset;    // owned
    train_loader_t *loader;      // owned
    jf_torch_session_t *session; // owned
    train_records_t *records;    // owned
    // A concurrent run (opts.run.concurrent; docs/concurrent.md): the inference model's session,
    // one inference minibatch of synthetic requests in its input shape, the requests' queue.
    jf_torch_session_t *infer; // owned; NULL: a training run alone
    float *infer_x;            // owned
    train_conc_t *conc;        // owned
};

#define S_CONC_STREAM UINT64_C(0x434f4e4300000000) // "CONC": mixed into the arrivals' seed

// The code a constructor left in err, or fallback when err is NULL.
static int s_failed(const jf_err_t *err, int fallback)
{
    return err && err->code < 0 ? err->code : fallback;
}

// The loader's fetch function over the run's dataset (ctx is the run): the loader gives each
// sample of each epoch its own augmentation seed. self->loader is set before any epoch starts.
static int s_fetch(void *ctx, size_t index, float *ret_x, int64_t *ret_y, jf_err_t *err)
{
    const train_run_t *self = ctx;
    train_dataset_req_t req = {.index = train_shard_global(&self->opts.shard, index),
                               .aug_seed = train_loader_sample_seed(self->loader, index)};
    return train_dataset_fetch(self->dataset, &req, ret_x, ret_y, err);
}

// The samples the run trains on: the dataset's, or its shard's (--shard K/N).
static int s_shard_samples(const train_run_t *self, size_t *ret_samples, jf_err_t *err)
{
    size_t total = train_dataset_size(self->dataset);
    size_t n = train_shard_size(&self->opts.shard, total);
    if (n == 0) {
        return jf_err_set(err, -EINVAL, "--shard %d/%d: the dataset's %zu samples leave it empty",
                          self->opts.shard.index, self->opts.shard.count, total);
    }
    *ret_samples = n;
    return 0;
}

static bool s_shape_fits(const jf_torch_shape_t *want, const train_dataset_shape_t *have)
{
    return have->channels == want->channels && have->height == want->height &&
           have->width == want->width && have->classes == want->classes;
}

// The dataset kind whose samples fit a model's input, for messages.
static const char *s_kind_for(const jf_torch_shape_t *want)
{
    for (int k = TRAIN_DATASET_MNIST; k <= TRAIN_DATASET_GLD23K; k++) {
        train_dataset_shape_t shape = train_dataset_kind_shape((train_dataset_kind_t)k);
        if (s_shape_fits(want, &shape)) {
            return train_dataset_kind_name((train_dataset_kind_t)k);
        }
    }
    return "no dataset kind";
}

// Models and datasets pair by sample shape and class count: lenet5 with mnist, resnet18 and
// vgg11 with cifar10, mobilenetv3 with gld23k.
static int s_check_shape(const train_run_t *self, jf_torch_model_kind_t model, jf_err_t *err)
{
    jf_torch_shape_t want = {0};
    int rc = jf_torch_model_shape(model, &want, err);
    if (rc < 0) {
        return rc;
    }
    train_dataset_shape_t have = train_dataset_shape(self->dataset);
    if (!s_shape_fits(&want, &have)) {
        return jf_err_set(err, -EINVAL,
                          "model '%s' needs %dx%dx%d input with %d classes (%s), but '%.200s' "
                          "holds %s with %dx%dx%d and %d classes",
                          jf_torch_model_name(model), want.channels, want.height, want.width,
                          want.classes, s_kind_for(&want), self->opts.data_dir,
                          train_dataset_kind_name(train_dataset_kind(self->dataset)), have.channels,
                          have.height, have.width, have.classes);
    }
    return 0;
}

static int s_open_session(train_run_t *self, jf_torch_model_kind_t model, jf_err_t *err)
{
    jf_torch_session_opts_t so = {
        .model = model, .threads = self->opts.threads, .seed = self->opts.seed};
    int rc = jf_torch_device_parse(self->opts.device ? self->opts.device : "cpu", &so.device, err);
    if (rc < 0) {
        return rc;
    }
    self->session = jf_torch_session_new(&so, err);
    if (!self->session) {
        return s_failed(err, -EIO);
    }
    return self->opts.init_weights
               ? train_weights_load_file(self->session, self->opts.init_weights, err)
               : 0;
}

// A concurrent run's inference: a session of the inference model on the training's device, in
// evaluation mode; the requests' inputs are seeded uniform noise in the model's input shape (a
// dense network's forward pass costs the same whatever the pixels), one minibatch of them reused
// for every request.
static int s_open_infer(train_run_t *self, jf_err_t *err)
{
    const jf_run_concurrent_t *c = &self->opts.run.concurrent;
    jf_torch_session_opts_t so = {.threads = self->opts.threads, .seed = self->opts.seed + 1};
    jf_torch_shape_t shape = {0};
    int rc = jf_torch_model_parse(c->infer_model, &so.model, err);
    rc = rc < 0 ? rc : jf_torch_model_shape(so.model, &shape, err);
    rc = rc < 0 ? rc
                : jf_torch_device_parse(self->opts.device ? self->opts.device : "cpu", &so.device,
                                        err);
    if (rc < 0) {
        return rc;
    }
    if (c->infer_batch < 1 || c->infer_batch > JF_TORCH_BATCH_MAX) {
        return jf_err_set(err, -EINVAL, "--infer-batch must be in 1..%d, got %d",
                          JF_TORCH_BATCH_MAX, c->infer_batch);
    }
    size_t floats = (size_t) shape.channels * (size_t) shape.height * (size_t) shape.width *
                    (size_t) c->infer_batch;
    self->infer_x = malloc(floats * sizeof *self->infer_x);
    if (!self->infer_x) {
        return jf_err_set(err, -ENOMEM, "run: out of memory for %d inference inputs",
                          c->infer_batch);
    }
    jf_rng_t rng;
    jf_rng_seed(&rng, self->opts.seed, S_CONC_STREAM);
    for (size_t i = 0; i < floats; i++) {
        self->infer_x[i] = (float) jf_rng_uniform(&rng);
    }
    train_conc_opts_t co = {.batch = c->infer_batch,
                            .rate_per_s = c->rate_per_s,
                            .budget_us = c->budget_us,
                            .seed = self->opts.seed ^ S_CONC_STREAM};
    self->conc = train_conc_new(&co, err);
    if (!self->conc) {
        return s_failed(err, -EINVAL);
    }
    self->infer = jf_torch_session_new(&so, err);
    return self->infer ? 0 : s_failed(err, -EIO);
}

static int s_open_loader(train_run_t *self, jf_err_t *err)
{
    const train_run_opts_t *o = &self->opts;
    size_t samples = 0;
    int rc = s_shard_samples(self, &samples, err);
    if (rc < 0) {
        return rc;
    }
    train_loader_opts_t lo = {
        .samples = samples,
        .sample_floats = train_dataset_sample_floats(self->dataset),
        .batch = o->batch,
        .workers = o->workers,
        .prefetch = o->prefetch,
        .drop_last = o->drop_last,
        .seed = o->seed,
        .max_batches = o->max_batches,
        .fetch = s_fetch,
        .fetch_ctx = self,
    };
    self->loader = train_loader_new(&lo, err);
    return self->loader ? 0 : s_failed(err, -EINVAL);
}

static int s_open_records(train_run_t *self, jf_err_t *err)
{
    jf_torch_info_t info = {0};
    int rc = jf_torch_info_read(&info, err);
    if (rc < 0) {
        return rc;
    }
    const train_run_opts_t *o = &self->opts;
    train_records_params_t p = {
        .model = self->session ? jf_torch_model_name(jf_torch_session_model(self->session))
                               : "none",
        .dataset = train_dataset_kind_name(train_dataset_kind(self->dataset)),
        .device = self->session ? jf_torch_session_device_name(self->session) : "none",
        .loader_only = o->loader_only,
        .blas = info.blas,
        .torch_version = info.torch_version,
        .threads = info.threads,
        .workers = o->workers,
        .prefetch = o->prefetch > 0 ? o->prefetch : TRAIN_LOADER_PREFETCH_DEFAULT,
        .batch = o->batch,
        .epochs = o->epochs,
        .seed = o->seed,
        .drop_last = o->drop_last,
        .samples = train_shard_size(&o->shard, train_dataset_size(self->dataset)),
        .batches_per_epoch = train_loader_batches_per_epoch(self->loader),
    };
    self->records = train_records_new(&p, self->out, err);
    return self->records ? 0 : s_failed(err, -ENOMEM);
}

static int s_open_all(train_run_t *self, jf_err_t *err)
{
    if (self->opts.epochs < 1) {
        return jf_err_set(err, -EINVAL, "run: epochs must be at least 1, got %d",
                          self->opts.epochs);
    }
    bool model_run = !self->opts.loader_only;
    jf_torch_model_kind_t model = JF_TORCH_MODEL_LENET5;
    int rc = model_run ? jf_torch_model_parse(self->opts.run.model, &model, err) : 0;
    if (rc < 0) {
        return rc;
    }
    self->dataset = train_dataset_open(self->opts.data_dir, err);
    rc = self->dataset ? 0 : s_failed(err, -EIO);
    rc = rc < 0 || !model_run ? rc : s_check_shape(self, model, err);
    rc = rc < 0 ? rc : s_open_loader(self, err);
    rc = rc < 0 || !model_run ? rc : s_open_session(self, model, err);
    bool concurrent = self->opts.run.concurrent.infer_model[0] != '\0';
    if (rc == 0 && concurrent && !model_run) {
        rc = jf_err_set(err, -EINVAL,
                        "--infer-model: a loader-only run has no training to "
                        "serve inference beside");
    }
    rc = rc < 0 || !concurrent ? rc : s_open_infer(self, err);
    return rc < 0 ? rc : s_open_records(self, err);
}

train_run_t *train_run_new(const train_run_opts_t *opts, FILE *out, jf_err_t *err)
{
    train_run_t *self = calloc(1, sizeof *self);
    if (!self) {
        (void)jf_err_set(err, -ENOMEM, "run: out of memory");
        return NULL;
    }
    self->opts = *opts;
    self->out = out;
    if (s_open_all(self, err) < 0) {
        train_run_destroy(&self);
    }
    return self;
}

void train_run_destroy(train_run_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    train_run_t *self = *self_p;
    train_records_destroy(&self->records);
    train_loader_destroy(&self->loader); // joins the workers before the dataset closes
    jf_torch_session_destroy(&self->session);
    jf_torch_session_destroy(&self->infer);
    train_conc_destroy(&self->conc);
    free(self->infer_x);
    train_dataset_destroy(&self->dataset);
    free(self);
    *self_p = NULL;
}

// One minibatch: the torch step, timed, and its record.
static int s_step(train_run_t *self, const train_batch_t *batch, int64_t stall_us, jf_err_t *err)
{
    double loss = NAN; // loader only: no loss (written as null)
    int64_t t0 = jf_clock_mono_us();
    int rc = self->session ? jf_torch_session_step(self->session, batch->x, batch->y,
                                                   batch->samples, &loss, err)
                           : 0;
    if (rc < 0) {
        return rc;
    }
    train_minibatch_rec_t rec = {.index = batch->index,
                                 .samples = batch->samples,
                                 .fetch_stall_us = stall_us,
                                 .compute_us = jf_clock_mono_us() - t0,
                                 .loss = loss};
    return train_records_minibatch(self->records, &rec, err);
}

// A concurrent run's turn at a minibatch boundary: the full inference minibatches of the requests
// waiting now (those arriving meanwhile wait for the next turn, so training is never starved);
// with rest, after the epoch's last training minibatch, the partial one too. The turn's time
// outside the forward passes counts as hand-over time.
static int s_serve(train_run_t *self, bool rest, jf_err_t *err)
{
    if (!self->conc) {
        return 0;
    }
    int64_t t0 = jf_clock_mono_us();
    int rc = train_conc_arrive(self->conc, t0, err);
    size_t batch = (size_t) self->opts.run.concurrent.infer_batch, waiting = 0;
    int64_t infer_sum_us = 0;
    bool served = false;
    while (rc == 0 && (waiting = train_conc_waiting(self->conc)) > 0 &&
           (rest || waiting >= batch)) {
        size_t n = waiting < batch ? waiting : batch;
        int64_t t1 = jf_clock_mono_us();
        rc = jf_torch_session_infer(self->infer, self->infer_x, n, err);
        int64_t t2 = jf_clock_mono_us();
        if (rc == 0) {
            train_conc_served(self->conc, n, t2, t2 - t1);
            infer_sum_us += t2 - t1;
            served = true;
        }
    }
    if (served) {
        train_conc_switched(self->conc, jf_clock_mono_us() - t0 - infer_sum_us);
    }
    return rc;
}

static int s_run_epoch(train_run_t *self, int epoch, jf_err_t *err)
{
    int64_t start_us = jf_clock_mono_us();
    train_records_epoch_begin(self->records, epoch);
    if (self->conc) {
        train_conc_epoch_begin(self->conc, epoch, start_us);
    }
    int rc = train_loader_epoch_start(self->loader, (uint64_t)epoch, err);
    while (rc == 0) {
        const train_batch_t *batch = NULL;
        rc = s_serve(self, false, err);
        int64_t wait_us = jf_clock_mono_us();
        rc = rc < 0 ? rc : train_loader_next(self->loader, &batch, err);
        if (rc < 0 || !batch) {
            break;
        }
        rc = s_step(self, batch, jf_clock_mono_us() - wait_us, err);
    }
    rc = rc < 0 ? rc : s_serve(self, true, err);
    if (rc == 0 && self->conc) {
        jf_epoch_concurrent_t c;
        train_conc_epoch_end(self->conc, &c);
        train_records_epoch_concurrent(self->records, &c);
    }
    return rc < 0 ? rc : train_records_epoch_end(self->records, jf_clock_mono_us() - start_us, err);
}

static int s_epoch_cb(void *ctx, int epoch, jf_err_t *err)
{
    return s_run_epoch(ctx, epoch, err);
}

// After the last epoch: the final weights to --out-weights, before the done line says so.
static int s_finish_cb(void *ctx, jf_err_t *err)
{
    const train_run_t *self = ctx;
    return self->opts.out_weights && self->session
               ? train_weights_save_file(self->session, self->opts.out_weights, err)
               : 0;
}

int train_run_exec(train_run_t *self, jf_err_t *err)
{
    train_run_driver_t d = {.opts = &self->opts, .out = self->out, .records = self->records,
                            .epoch = s_epoch_cb, .ctx = self, .finish = s_finish_cb};
    return train_run_drive(&d, err);
}
