/* The libtorch shim loaded on first use (STYLE.md §8; docs/hacking.md "The shim, loaded late"):
 * the jetfleet CLI links this instead of jf_torch, so that a command that never fits a model or
 * counts a layer (status, sweeps, results, exports) does not pay libtorch's start-up, about 1.4 s
 * on a 2-core machine, most of it libtorch's static initialisers. Each function of jf_torch.h,
 * jf_torch_fit.h, jf_torch_flops.h and jf_torch_bench.h forwards to the same function of
 * libjetfleet-torch.so, which dlopen loads the first time one is called. Not for jetfleet-train,
 * which links the shim itself. */
#include "jf_torch.h"
#include "jf_torch_bench.h"
#include "jf_torch_fit.h"
#include "jf_torch_flops.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define S_SHIM_FILE "libjetfleet-torch.so"

// The pointer type of function f (each wrapper has the prototype of the function it forwards to).
#define S_FN(f) __typeof__(&f)

// The loaded shim. Process-wide like the dynamic loader's own state, so a file-scope exception to
// STYLE.md §12's rule on globals: written once, under s_once, then only read.
typedef struct s_shim {
    void *handle;  // dlopen's handle, NULL when the shim could not be loaded
    char why[256]; // then: why not, for every error record
} s_shim_t;

static s_shim_t s_shim;
static pthread_once_t s_once = PTHREAD_ONCE_INIT;

// dir/rel/S_SHIM_FILE (rel may be "") if it exists, opened; NULL otherwise.
static void *s_open_in(const char *dir, const char *rel)
{
    char path[PATH_MAX];
    int n = snprintf(path, sizeof path, "%s/%s%s%s", dir, rel, rel[0] ? "/" : "", S_SHIM_FILE);
    if (n < 0 || (size_t) n >= sizeof path || access(path, R_OK) != 0) {
        return NULL;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        (void) snprintf(s_shim.why, sizeof s_shim.why, "%.200s", dlerror());
    }
    return h;
}

// Beside the program (the build tree's bin/), then where `cmake --install` puts it relative to
// the installed programs (JF_TORCH_SHIM_REL, e.g. ../lib/x86_64-linux-gnu/jetfleet).
static void s_load(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        (void) snprintf(s_shim.why, sizeof s_shim.why, "cannot read /proc/self/exe: %s",
                        strerror(errno));
        return;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) {
        *slash = '\0';
    }
    s_shim.handle = s_open_in(exe, "");
    s_shim.handle = s_shim.handle ? s_shim.handle : s_open_in(exe, JF_TORCH_SHIM_REL);
    if (!s_shim.handle && !s_shim.why[0]) {
        (void) snprintf(s_shim.why, sizeof s_shim.why, "%s not found beside %.80s or in %.80s/%s",
                        S_SHIM_FILE, exe, exe, JF_TORCH_SHIM_REL);
    }
}

// A function without an error record (a name, a count, jf_torch_cost_minibatch, a destroy) takes
// what only a call with one could have produced (a parsed kind, a cost, a session), so it is
// reached only with the shim loaded and its stand-in result ("?", 0, nothing) is never used. The
// exceptions, jf_torch_bench_has_cuda and jf_torch_bench_name, answer false and "?" without the
// shim; the CLI does not call them.

// The shim's symbol name, loading the shim on first use; NULL with err (-ENOSYS) if the shim or
// the symbol cannot be had.
static void *s_symbol(const char *name, jf_err_t *err)
{
    (void) pthread_once(&s_once, s_load);
    if (!s_shim.handle) {
        jf_err_set(err, -ENOSYS, "libtorch shim: %s", s_shim.why);
        return NULL;
    }
    void *sym = dlsym(s_shim.handle, name);
    if (!sym) {
        jf_err_set(err, -ENOSYS, "libtorch shim: no symbol %s", name);
    }
    return sym;
}

int jf_torch_model_parse(const char *name, jf_torch_model_kind_t *ret_model, jf_err_t *err)
{
    S_FN(jf_torch_model_parse)
    fn = (S_FN(jf_torch_model_parse)) s_symbol("jf_torch_model_parse", err);
    return fn ? fn(name, ret_model, err) : -ENOSYS;
}

const char *jf_torch_model_name(jf_torch_model_kind_t model)
{
    S_FN(jf_torch_model_name)
    fn = (S_FN(jf_torch_model_name)) s_symbol("jf_torch_model_name", NULL);
    return fn ? fn(model) : "?";
}

int jf_torch_model_shape(jf_torch_model_kind_t model, jf_torch_shape_t *ret_shape, jf_err_t *err)
{
    S_FN(jf_torch_model_shape)
    fn = (S_FN(jf_torch_model_shape)) s_symbol("jf_torch_model_shape", err);
    return fn ? fn(model, ret_shape, err) : -ENOSYS;
}

int jf_torch_device_parse(const char *name, jf_torch_device_kind_t *ret_device, jf_err_t *err)
{
    S_FN(jf_torch_device_parse)
    fn = (S_FN(jf_torch_device_parse)) s_symbol("jf_torch_device_parse", err);
    return fn ? fn(name, ret_device, err) : -ENOSYS;
}

jf_torch_session_t *jf_torch_session_new(const jf_torch_session_opts_t *opts, jf_err_t *err)
{
    S_FN(jf_torch_session_new)
    fn = (S_FN(jf_torch_session_new)) s_symbol("jf_torch_session_new", err);
    return fn ? fn(opts, err) : NULL;
}

void jf_torch_session_destroy(jf_torch_session_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    S_FN(jf_torch_session_destroy)
    fn = (S_FN(jf_torch_session_destroy)) s_symbol("jf_torch_session_destroy", NULL);
    if (fn) {
        fn(self_p);
    }
}

int jf_torch_session_step(jf_torch_session_t *self, const float *x, const int64_t *y, size_t batch,
                          double *ret_loss, jf_err_t *err)
{
    S_FN(jf_torch_session_step)
    fn = (S_FN(jf_torch_session_step)) s_symbol("jf_torch_session_step", err);
    return fn ? fn(self, x, y, batch, ret_loss, err) : -ENOSYS;
}

int jf_torch_session_infer(jf_torch_session_t *self, const float *x, size_t batch, jf_err_t *err)
{
    S_FN(jf_torch_session_infer)
    fn = (S_FN(jf_torch_session_infer)) s_symbol("jf_torch_session_infer", err);
    return fn ? fn(self, x, batch, err) : -ENOSYS;
}

const char *jf_torch_session_device_name(const jf_torch_session_t *self)
{
    S_FN(jf_torch_session_device_name)
    fn = (S_FN(jf_torch_session_device_name)) s_symbol("jf_torch_session_device_name", NULL);
    return fn ? fn(self) : "?";
}

jf_torch_model_kind_t jf_torch_session_model(const jf_torch_session_t *self)
{
    S_FN(jf_torch_session_model)
    fn = (S_FN(jf_torch_session_model)) s_symbol("jf_torch_session_model", NULL);
    return fn ? fn(self) : (jf_torch_model_kind_t){0};
}

int jf_torch_info_read(jf_torch_info_t *ret_info, jf_err_t *err)
{
    S_FN(jf_torch_info_read) fn = (S_FN(jf_torch_info_read)) s_symbol("jf_torch_info_read", err);
    return fn ? fn(ret_info, err) : -ENOSYS;
}

int jf_torch_session_weights_save(jf_torch_session_t *self, void **ret_bytes, size_t *ret_len,
                                  jf_err_t *err)
{
    S_FN(jf_torch_session_weights_save)
    fn = (S_FN(jf_torch_session_weights_save)) s_symbol("jf_torch_session_weights_save", err);
    return fn ? fn(self, ret_bytes, ret_len, err) : -ENOSYS;
}

int jf_torch_session_weights_load(jf_torch_session_t *self, const void *bytes, size_t len,
                                  jf_err_t *err)
{
    S_FN(jf_torch_session_weights_load)
    fn = (S_FN(jf_torch_session_weights_load)) s_symbol("jf_torch_session_weights_load", err);
    return fn ? fn(self, bytes, len, err) : -ENOSYS;
}

int jf_torch_weights_average(const void *const *blobs, const size_t *lens, const double *w,
                             size_t n, void **ret_bytes, size_t *ret_len, jf_err_t *err)
{
    S_FN(jf_torch_weights_average)
    fn = (S_FN(jf_torch_weights_average)) s_symbol("jf_torch_weights_average", err);
    return fn ? fn(blobs, lens, w, n, ret_bytes, ret_len, err) : -ENOSYS;
}

int jf_torch_weights_flatten(const void *bytes, size_t len, double **ret_values, size_t *ret_n,
                             jf_err_t *err)
{
    S_FN(jf_torch_weights_flatten)
    fn = (S_FN(jf_torch_weights_flatten)) s_symbol("jf_torch_weights_flatten", err);
    return fn ? fn(bytes, len, ret_values, ret_n, err) : -ENOSYS;
}

int jf_torch_lstsq(const double *x, size_t n, size_t p, const double *y, double ridge,
                   double *ret_coef, jf_err_t *err)
{
    S_FN(jf_torch_lstsq) fn = (S_FN(jf_torch_lstsq)) s_symbol("jf_torch_lstsq", err);
    return fn ? fn(x, n, p, y, ridge, ret_coef, err) : -ENOSYS;
}

jf_torch_mlp_t *jf_torch_mlp_new(const int *sizes, int n_sizes, uint64_t seed, jf_err_t *err)
{
    S_FN(jf_torch_mlp_new) fn = (S_FN(jf_torch_mlp_new)) s_symbol("jf_torch_mlp_new", err);
    return fn ? fn(sizes, n_sizes, seed, err) : NULL;
}

void jf_torch_mlp_destroy(jf_torch_mlp_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    S_FN(jf_torch_mlp_destroy)
    fn = (S_FN(jf_torch_mlp_destroy)) s_symbol("jf_torch_mlp_destroy", NULL);
    if (fn) {
        fn(self_p);
    }
}

jf_torch_mlp_t *jf_torch_mlp_clone(const jf_torch_mlp_t *src, jf_err_t *err)
{
    S_FN(jf_torch_mlp_clone) fn = (S_FN(jf_torch_mlp_clone)) s_symbol("jf_torch_mlp_clone", err);
    return fn ? fn(src, err) : NULL;
}

int jf_torch_mlp_inputs(const jf_torch_mlp_t *self)
{
    S_FN(jf_torch_mlp_inputs)
    fn = (S_FN(jf_torch_mlp_inputs)) s_symbol("jf_torch_mlp_inputs", NULL);
    return fn ? fn(self) : 0;
}

int jf_torch_mlp_outputs(const jf_torch_mlp_t *self)
{
    S_FN(jf_torch_mlp_outputs)
    fn = (S_FN(jf_torch_mlp_outputs)) s_symbol("jf_torch_mlp_outputs", NULL);
    return fn ? fn(self) : 0;
}

int jf_torch_mlp_train(jf_torch_mlp_t *self, const float *x, const float *y, size_t n,
                       const jf_torch_mlp_train_opts_t *opts, uint64_t seed, jf_err_t *err)
{
    S_FN(jf_torch_mlp_train) fn = (S_FN(jf_torch_mlp_train)) s_symbol("jf_torch_mlp_train", err);
    return fn ? fn(self, x, y, n, opts, seed, err) : -ENOSYS;
}

int jf_torch_mlp_predict(jf_torch_mlp_t *self, const float *x, size_t n, float *ret_y,
                         jf_err_t *err)
{
    S_FN(jf_torch_mlp_predict)
    fn = (S_FN(jf_torch_mlp_predict)) s_symbol("jf_torch_mlp_predict", err);
    return fn ? fn(self, x, n, ret_y, err) : -ENOSYS;
}

size_t jf_torch_mlp_param_count(const jf_torch_mlp_t *self)
{
    S_FN(jf_torch_mlp_param_count)
    fn = (S_FN(jf_torch_mlp_param_count)) s_symbol("jf_torch_mlp_param_count", NULL);
    return fn ? fn(self) : 0;
}

int jf_torch_mlp_params(const jf_torch_mlp_t *self, float *ret_params, size_t count, jf_err_t *err)
{
    S_FN(jf_torch_mlp_params) fn = (S_FN(jf_torch_mlp_params)) s_symbol("jf_torch_mlp_params", err);
    return fn ? fn(self, ret_params, count, err) : -ENOSYS;
}

int jf_torch_mlp_set_params(jf_torch_mlp_t *self, const float *params, size_t count, jf_err_t *err)
{
    S_FN(jf_torch_mlp_set_params)
    fn = (S_FN(jf_torch_mlp_set_params)) s_symbol("jf_torch_mlp_set_params", err);
    return fn ? fn(self, params, count, err) : -ENOSYS;
}

int jf_torch_model_cost(jf_torch_model_kind_t model, jf_torch_cost_t *ret_cost, jf_err_t *err)
{
    S_FN(jf_torch_model_cost) fn = (S_FN(jf_torch_model_cost)) s_symbol("jf_torch_model_cost", err);
    return fn ? fn(model, ret_cost, err) : -ENOSYS;
}

int jf_torch_layer_cost(const jf_torch_layer_t *layer, jf_torch_cost_t *ret_cost, jf_err_t *err)
{
    S_FN(jf_torch_layer_cost) fn = (S_FN(jf_torch_layer_cost)) s_symbol("jf_torch_layer_cost", err);
    return fn ? fn(layer, ret_cost, err) : -ENOSYS;
}

void jf_torch_cost_minibatch(const jf_torch_cost_t *cost, int batch, jf_torch_work_t *ret_work)
{
    S_FN(jf_torch_cost_minibatch)
    fn = (S_FN(jf_torch_cost_minibatch)) s_symbol("jf_torch_cost_minibatch", NULL);
    if (fn) {
        fn(cost, batch, ret_work);
    } else {
        *ret_work = (jf_torch_work_t){0};
    }
}

jf_torch_bench_t *jf_torch_bench_new(jf_torch_bench_kind_t kind, jf_torch_device_kind_t device,
                                     int threads, jf_err_t *err)
{
    S_FN(jf_torch_bench_new) fn = (S_FN(jf_torch_bench_new)) s_symbol("jf_torch_bench_new", err);
    return fn ? fn(kind, device, threads, err) : NULL;
}

void jf_torch_bench_destroy(jf_torch_bench_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    S_FN(jf_torch_bench_destroy)
    fn = (S_FN(jf_torch_bench_destroy)) s_symbol("jf_torch_bench_destroy", NULL);
    if (fn) {
        fn(self_p);
    }
}

jf_torch_bench_work_t jf_torch_bench_work_of(const jf_torch_bench_t *self)
{
    S_FN(jf_torch_bench_work_of)
    fn = (S_FN(jf_torch_bench_work_of)) s_symbol("jf_torch_bench_work_of", NULL);
    return fn ? fn(self) : (jf_torch_bench_work_t){0};
}

int jf_torch_bench_step(jf_torch_bench_t *self, jf_err_t *err)
{
    S_FN(jf_torch_bench_step) fn = (S_FN(jf_torch_bench_step)) s_symbol("jf_torch_bench_step", err);
    return fn ? fn(self, err) : -ENOSYS;
}

bool jf_torch_bench_has_cuda(void)
{
    S_FN(jf_torch_bench_has_cuda)
    fn = (S_FN(jf_torch_bench_has_cuda)) s_symbol("jf_torch_bench_has_cuda", NULL);
    return fn ? fn() : false;
}

const char *jf_torch_bench_name(jf_torch_bench_kind_t kind, jf_torch_device_kind_t device)
{
    S_FN(jf_torch_bench_name)
    fn = (S_FN(jf_torch_bench_name)) s_symbol("jf_torch_bench_name", NULL);
    return fn ? fn(kind, device) : "?";
}

int jf_torch_phys_fit(jf_torch_phys_form_t form, const double *x, const double *y, size_t n,
                      double scale, const double *starts, size_t n_starts, int max_iter,
                      double *ret_params, double *ret_loss, size_t *ret_start, jf_err_t *err)
{
    S_FN(jf_torch_phys_fit) fn = (S_FN(jf_torch_phys_fit)) s_symbol("jf_torch_phys_fit", err);
    return fn ? fn(form, x, y, n, scale, starts, n_starts, max_iter, ret_params, ret_loss,
                   ret_start, err)
              : -ENOSYS;
}

int jf_torch_phys_predict(jf_torch_phys_form_t form, const double *params, double scale,
                          const double *x, size_t n, double *ret_y, jf_err_t *err)
{
    S_FN(jf_torch_phys_predict)
    fn = (S_FN(jf_torch_phys_predict)) s_symbol("jf_torch_phys_predict", err);
    return fn ? fn(form, params, scale, x, n, ret_y, err) : -ENOSYS;
}
