/* DataLoader semantics with a ring of batch slots. Batch b lives in slot b % (window + 1), where
 * window = workers * prefetch; a worker may prepare batch b once b < handed + window (PyTorch sends
 * the next index request when it hands a batch out), and the extra slot holds the batch the
 * caller is computing on. One mutex and two condition variables guard the slot states. */
#include "train_loader.h"

#include "jf_rng.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// Streams of the augmentation keys: the top bit keeps them apart from the shuffle's (epoch).
#define S_AUG_STREAM_BASE (UINT64_C(1) << 63)

typedef enum s_slot_state {
    S_SLOT_FREE = 0, // nothing, or a batch the caller is done with
    S_SLOT_READY,    // batch `number` prepared
    S_SLOT_FAILED,   // preparing batch `number` failed; see err
} s_slot_state_t;

typedef struct s_slot {
    train_batch_t batch;  // what the caller sees; points into the buffers below
    size_t *indices;      // owned; opts.batch entries
    float *x;             // owned; opts.batch * sample_floats
    int64_t *y;           // owned; opts.batch entries
    size_t number;        // batch index this slot holds (guarded by lock)
    s_slot_state_t state; // guarded by lock
    jf_err_t err;         // the failure when state is S_SLOT_FAILED
} s_slot_t;

typedef struct s_worker {
    train_loader_t *loader; // borrowed; owns this worker
    size_t id;              // 0..workers-1
    pthread_t thread;
} s_worker_t;

struct train_loader {
    train_loader_opts_t opts;
    size_t batches;  // per epoch
    size_t window;   // batches prepared ahead: workers * prefetch (0 without workers)
    size_t *order;   // owned; sample order of the current epoch
    s_slot_t *slots; // owned; window + 1 slots
    size_t nslots;
    s_worker_t *workers; // owned; opts.workers entries
    size_t running;      // worker threads started and not yet joined
    bool in_epoch;       // an epoch is started and not finished
    pthread_mutex_t lock;
    pthread_cond_t ready_cv; // a slot became READY or FAILED
    pthread_cond_t space_cv; // handed grew, or stop was set
    size_t handed;           // batches handed to the caller this epoch (guarded by lock)
    bool stop;               // workers must end (guarded by lock)
    uint64_t aug_key;        // this epoch's augmentation key; written only while no worker runs
};

static int s_check_opts(const train_loader_opts_t *o, jf_err_t *err)
{
    if (o->samples < 1 || o->sample_floats < 1 || !o->fetch) {
        return jf_err_set(err, -EINVAL, "loader: samples, sample size and fetch are required");
    }
    if (o->batch < 1 || o->batch > TRAIN_LOADER_BATCH_MAX) {
        return jf_err_set(err, -EINVAL, "loader: batch must be in 1..%d, got %zu",
                          TRAIN_LOADER_BATCH_MAX, o->batch);
    }
    if (o->workers < 0 || o->workers > TRAIN_LOADER_WORKERS_MAX) {
        return jf_err_set(err, -EINVAL, "loader: workers must be in 0..%d, got %d",
                          TRAIN_LOADER_WORKERS_MAX, o->workers);
    }
    if (o->prefetch < 0 || o->prefetch > TRAIN_LOADER_PREFETCH_MAX) {
        return jf_err_set(err, -EINVAL, "loader: prefetch must be in 1..%d, got %d",
                          TRAIN_LOADER_PREFETCH_MAX, o->prefetch);
    }
    if (o->drop_last && o->samples < o->batch) {
        return jf_err_set(err, -EINVAL,
                          "loader: %zu samples make no whole minibatch of %zu with "
                          "drop_last",
                          o->samples, o->batch);
    }
    return 0;
}

static size_t s_count_batches(const train_loader_opts_t *o)
{
    size_t n = o->drop_last ? o->samples / o->batch : (o->samples + o->batch - 1) / o->batch;
    return o->max_batches > 0 && o->max_batches < n ? o->max_batches : n;
}

static int s_alloc(train_loader_t *self, jf_err_t *err)
{
    const train_loader_opts_t *o = &self->opts;
    self->order = calloc(o->samples, sizeof *self->order);
    self->slots = calloc(self->nslots, sizeof *self->slots);
    self->workers = calloc((size_t)o->workers + 1, sizeof *self->workers);
    if (!self->order || !self->slots || !self->workers) {
        return jf_err_set(err, -ENOMEM, "loader: out of memory");
    }
    for (size_t i = 0; i < self->nslots; i++) {
        s_slot_t *s = &self->slots[i];
        s->indices = calloc(o->batch, sizeof *s->indices);
        s->x = calloc(o->batch * o->sample_floats, sizeof *s->x);
        s->y = calloc(o->batch, sizeof *s->y);
        if (!s->indices || !s->x || !s->y) {
            return jf_err_set(err, -ENOMEM,
                              "loader: out of memory for %zu batch buffers of %zu "
                              "floats",
                              self->nslots, o->batch * o->sample_floats);
        }
    }
    return 0;
}

train_loader_t *train_loader_new(const train_loader_opts_t *opts, jf_err_t *err)
{
    if (s_check_opts(opts, err) < 0) {
        return NULL;
    }
    train_loader_t *self = calloc(1, sizeof *self);
    if (!self) {
        (void)jf_err_set(err, -ENOMEM, "loader: out of memory");
        return NULL;
    }
    self->opts = *opts;
    if (self->opts.prefetch == 0) {
        self->opts.prefetch = TRAIN_LOADER_PREFETCH_DEFAULT;
    }
    self->batches = s_count_batches(&self->opts);
    self->window = (size_t)self->opts.workers * (size_t)self->opts.prefetch;
    self->nslots = self->window + 1;
    (void)pthread_mutex_init(&self->lock, NULL); // default attributes: cannot fail on Linux
    (void)pthread_cond_init(&self->ready_cv, NULL);
    (void)pthread_cond_init(&self->space_cv, NULL);
    if (s_alloc(self, err) < 0) {
        train_loader_destroy(&self);
    }
    return self;
}

// Tells the workers to stop and joins them. Idempotent.
static void s_epoch_stop(train_loader_t *self)
{
    (void)pthread_mutex_lock(&self->lock);
    self->stop = true;
    (void)pthread_cond_broadcast(&self->space_cv);
    (void)pthread_mutex_unlock(&self->lock);
    for (size_t i = 0; i < self->running; i++) {
        (void)pthread_join(self->workers[i].thread, NULL); // our own joinable threads
    }
    self->running = 0;
    self->in_epoch = false;
}

void train_loader_destroy(train_loader_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    train_loader_t *self = *self_p;
    s_epoch_stop(self);
    for (size_t i = 0; self->slots && i < self->nslots; i++) {
        free(self->slots[i].indices);
        free(self->slots[i].x);
        free(self->slots[i].y);
    }
    free(self->slots);
    free(self->workers);
    free(self->order);
    (void)pthread_cond_destroy(&self->space_cv);
    (void)pthread_cond_destroy(&self->ready_cv);
    (void)pthread_mutex_destroy(&self->lock);
    free(self);
    *self_p = NULL;
}

size_t train_loader_batches_per_epoch(const train_loader_t *self)
{
    return self->batches;
}

// Prepares batch number b into slot s: fetches and preprocesses each of its samples.
static int s_fill(const train_loader_t *self, s_slot_t *s, size_t b, jf_err_t *err)
{
    const train_loader_opts_t *o = &self->opts;
    size_t first = b * o->batch;
    size_t n = o->samples - first < o->batch ? o->samples - first : o->batch;
    for (size_t j = 0; j < n; j++) {
        size_t index = self->order[first + j];
        s->indices[j] = index;
        int rc = o->fetch(o->fetch_ctx, index, s->x + j * o->sample_floats, &s->y[j], err);
        if (rc < 0) {
            return rc;
        }
    }
    s->batch =
        (train_batch_t){.index = b, .samples = n, .indices = s->indices, .x = s->x, .y = s->y};
    return 0;
}

// Waits until batch b may be prepared; false if the epoch is stopping. Called with lock held.
static bool s_wait_for_space(train_loader_t *self, size_t b)
{
    while (!self->stop && b >= self->handed + self->window) {
        (void)pthread_cond_wait(&self->space_cv, &self->lock);
    }
    return !self->stop;
}

static void *s_worker_main(void *arg)
{
    s_worker_t *w = arg;
    train_loader_t *self = w->loader;
    size_t step = (size_t)self->opts.workers;
    for (size_t b = w->id; b < self->batches; b += step) {
        (void)pthread_mutex_lock(&self->lock);
        bool go = s_wait_for_space(self, b);
        (void)pthread_mutex_unlock(&self->lock);
        if (!go) {
            break;
        }
        s_slot_t *s = &self->slots[b % self->nslots];
        jf_err_t err = {0};
        int rc = s_fill(self, s, b, &err);
        if (rc < 0 && err.code == 0) {
            err.code = rc; // a fetch function that did not fill err still reports its code
        }
        (void)pthread_mutex_lock(&self->lock);
        s->number = b;
        s->err = err;
        s->state = rc < 0 ? S_SLOT_FAILED : S_SLOT_READY;
        (void)pthread_cond_broadcast(&self->ready_cv);
        (void)pthread_mutex_unlock(&self->lock);
        if (rc < 0) {
            break; // the caller reports it when it reaches batch b
        }
    }
    return NULL;
}

static int s_start_workers(train_loader_t *self, jf_err_t *err)
{
    for (size_t i = 0; i < (size_t)self->opts.workers; i++) {
        self->workers[i] = (s_worker_t){.loader = self, .id = i};
        int rc = pthread_create(&self->workers[i].thread, NULL, s_worker_main, &self->workers[i]);
        if (rc != 0) {
            s_epoch_stop(self);
            return jf_err_set(err, -rc, "loader: cannot start worker %zu: %s", i, strerror(rc));
        }
        self->running++;
    }
    return 0;
}

int train_loader_epoch_start(train_loader_t *self, uint64_t epoch, jf_err_t *err)
{
    s_epoch_stop(self);
    for (size_t i = 0; i < self->opts.samples; i++) {
        self->order[i] = i;
    }
    jf_rng_t rng;
    jf_rng_seed(&rng, self->opts.seed, epoch);
    jf_rng_shuffle(&rng, self->order, self->opts.samples);
    jf_rng_seed(&rng, self->opts.seed, S_AUG_STREAM_BASE | epoch);
    self->aug_key = jf_rng_next(&rng);
    for (size_t i = 0; i < self->nslots; i++) {
        self->slots[i].state = S_SLOT_FREE;
    }
    self->handed = 0;
    self->stop = false; // no worker runs now, so no lock is needed
    self->in_epoch = true;
    return s_start_workers(self, err);
}

uint64_t train_loader_sample_seed(const train_loader_t *self, size_t index)
{
    jf_rng_t rng;
    jf_rng_seed(&rng, self->aug_key, index);
    return jf_rng_next(&rng);
}

// Waits for batch b from the workers; hands it out and frees the previous batch's slot.
static int s_take(train_loader_t *self, size_t b, const train_batch_t **ret_batch, jf_err_t *err)
{
    s_slot_t *s = &self->slots[b % self->nslots];
    (void)pthread_mutex_lock(&self->lock);
    while (s->state == S_SLOT_FREE || s->number != b) {
        (void)pthread_cond_wait(&self->ready_cv, &self->lock);
    }
    bool failed = s->state == S_SLOT_FAILED;
    if (b > 0) {
        self->slots[(b - 1) % self->nslots].state = S_SLOT_FREE;
    }
    self->handed = b + 1;
    (void)pthread_cond_broadcast(&self->space_cv);
    (void)pthread_mutex_unlock(&self->lock);
    if (failed) {
        *err = s->err;
        s_epoch_stop(self);
        return err->code;
    }
    *ret_batch = &s->batch;
    return 0;
}

int train_loader_next(train_loader_t *self, const train_batch_t **ret_batch, jf_err_t *err)
{
    if (!self->in_epoch) {
        return jf_err_set(err, -EINVAL, "loader: no epoch started");
    }
    size_t b = self->handed;
    if (b >= self->batches) {
        s_epoch_stop(self);
        *ret_batch = NULL;
        return 0;
    }
    if (self->opts.workers > 0) {
        jf_err_t local = {0};
        return s_take(self, b, ret_batch, err ? err : &local);
    }
    int rc = s_fill(self, &self->slots[0], b, err);
    if (rc < 0) {
        self->in_epoch = false;
        return rc;
    }
    self->handed = b + 1;
    *ret_batch = &self->slots[0].batch;
    return 0;
}
