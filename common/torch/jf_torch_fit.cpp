/* The libtorch shim's regression half (jf_torch_fit.h): least squares through
 * torch::linalg_lstsq in double precision, a small tanh MLP trained full-batch with Adam or
 * L-BFGS, and the phys forms of time and power fitted by L-BFGS.
 * Every extern "C" body catches every exception and returns a negative errno plus a message. */
#include "jf_torch_fit.h"

#include <ATen/Parallel.h>
#include <c10/util/Exception.h>
#include <torch/torch.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#define JF_TORCH_FIT_MSG_MAX       200 // longest libtorch message copied into an error
#define JF_TORCH_FIT_LBFGS_HISTORY 20  // L-BFGS curvature pairs kept

struct jf_torch_mlp {
    std::vector<int> sizes;    // input, hidden..., output
    torch::nn::Sequential net; // Linear (Tanh Linear)*
};

namespace
{

// Translates the exception being handled into err. Call only from inside a catch block.
int s_fail(jf_err_t *err, const char *where)
{
    std::string text;
    int code = -EIO;
    try {
        throw;
    } catch (const c10::Error &e) {
        text = e.what_without_backtrace();
    } catch (const std::bad_alloc &) {
        text = "out of memory";
        code = -ENOMEM;
    } catch (const std::exception &e) {
        text = e.what();
    } catch (...) {
        text = "unknown exception";
    }
    text = text.substr(0, std::min(text.find('\n'), (size_t) JF_TORCH_FIT_MSG_MAX));
    return jf_err_set(err, code, "torch: %s: %s", where, text.c_str());
}

bool s_all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!std::isfinite(v[i])) {
            return false;
        }
    }
    return true;
}

bool s_all_finite_f(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!std::isfinite(v[i])) {
            return false;
        }
    }
    return true;
}

// A tensor over the caller's floats (no copy; the caller's buffer outlives it).
torch::Tensor s_view(const float *v, size_t rows, int cols)
{
    return torch::from_blob(const_cast<float *>(v), {(int64_t) rows, (int64_t) cols},
                            torch::kFloat32);
}

torch::nn::Sequential s_build(const std::vector<int> &sizes)
{
    torch::nn::Sequential net;
    for (size_t i = 0; i + 1 < sizes.size(); i++) {
        if (i > 0) {
            net->push_back(torch::nn::Tanh());
        }
        net->push_back(torch::nn::Linear(sizes[i], sizes[i + 1]));
    }
    return net;
}

void s_train_adam(jf_torch_mlp_t *self, const torch::Tensor &xs, const torch::Tensor &ys,
                  const jf_torch_mlp_train_opts_t *opts)
{
    torch::optim::Adam opt(self->net->parameters(),
                           torch::optim::AdamOptions(opts->lr).weight_decay(opts->weight_decay));
    for (int e = 0; e < opts->epochs; e++) {
        opt.zero_grad();
        auto loss = torch::mse_loss(self->net->forward(xs), ys);
        loss.backward();
        opt.step();
    }
}

// Few but well-aimed steps: each iteration costs about one forward and backward pass (more
// during a line search), where Adam needs hundreds of small steps on a smooth small network.
void s_train_lbfgs(jf_torch_mlp_t *self, const torch::Tensor &xs, const torch::Tensor &ys,
                   const jf_torch_mlp_train_opts_t *opts)
{
    auto params = self->net->parameters();
    torch::optim::LBFGS opt(params, torch::optim::LBFGSOptions(opts->lr)
                                        .max_iter(opts->epochs)
                                        .max_eval(opts->epochs * 5 / 4)
                                        .history_size(JF_TORCH_FIT_LBFGS_HISTORY)
                                        .line_search_fn("strong_wolfe"));
    auto closure = [&]() {
        opt.zero_grad();
        auto loss = torch::mse_loss(self->net->forward(xs), ys);
        if (opts->weight_decay > 0.0) {
            for (const auto &p : params) {
                loss = loss + 0.5 * opts->weight_decay * p.pow(2).sum();
            }
        }
        loss.backward();
        return loss;
    };
    opt.step(closure);
}

} // namespace

extern "C" int jf_torch_lstsq(const double *x, size_t n, size_t p, const double *y, double ridge,
                              double *ret_coef, jf_err_t *err)
{
    if (p == 0 || n < p || n > JF_TORCH_FIT_ROWS_MAX || !(ridge >= 0.0)) {
        return jf_err_set(err, -EINVAL,
                          "lstsq: need rows >= columns >= 1 and ridge >= 0, got %zu x %zu, "
                          "ridge %g",
                          n, p, ridge);
    }
    if (!s_all_finite(x, n * p) || !s_all_finite(y, n)) {
        return jf_err_set(err, -EINVAL, "lstsq: a value is not finite");
    }
    try {
        at::set_num_threads(1);
        auto opts = torch::TensorOptions().dtype(torch::kFloat64);
        // The ridge term as extra rows sqrt(ridge)*I with target 0: the same minimiser as the
        // regularised normal equations, without squaring the condition number.
        auto a = torch::zeros({(int64_t) (n + p), (int64_t) p}, opts);
        auto b = torch::zeros({(int64_t) (n + p), 1}, opts);
        a.narrow(0, 0, (int64_t) n)
            .copy_(torch::from_blob(const_cast<double *>(x), {(int64_t) n, (int64_t) p}, opts));
        b.narrow(0, 0, (int64_t) n)
            .copy_(torch::from_blob(const_cast<double *>(y), {(int64_t) n, 1}, opts));
        a.narrow(0, (int64_t) n, (int64_t) p)
            .copy_(torch::eye((int64_t) p, opts) * std::sqrt(ridge));
        auto sol = std::get<0>(torch::linalg_lstsq(a, b, c10::nullopt, std::string("gelsd")));
        auto c = sol.narrow(0, 0, (int64_t) p).contiguous();
        std::memcpy(ret_coef, c.data_ptr<double>(), p * sizeof(double));
        return s_all_finite(ret_coef, p) ? 0 : jf_err_set(err, -EIO, "lstsq: solution not finite");
    } catch (...) {
        return s_fail(err, "lstsq");
    }
}

extern "C" jf_torch_mlp_t *jf_torch_mlp_new(const int *sizes, int n_sizes, uint64_t seed,
                                            jf_err_t *err)
{
    if (n_sizes < 2 || n_sizes > JF_TORCH_FIT_LAYERS_MAX) {
        jf_err_set(err, -EINVAL, "mlp: need 2..%d layer sizes, got %d", JF_TORCH_FIT_LAYERS_MAX,
                   n_sizes);
        return nullptr;
    }
    for (int i = 0; i < n_sizes; i++) {
        if (sizes[i] < 1 || sizes[i] > JF_TORCH_FIT_WIDTH_MAX) {
            jf_err_set(err, -EINVAL, "mlp: layer %d has %d units, expected 1..%d", i, sizes[i],
                       JF_TORCH_FIT_WIDTH_MAX);
            return nullptr;
        }
    }
    try {
        at::set_num_threads(1);
        torch::manual_seed(seed);
        auto m = std::make_unique<jf_torch_mlp>();
        m->sizes.assign(sizes, sizes + n_sizes);
        m->net = s_build(m->sizes);
        m->net->to(torch::kFloat32);
        return m.release();
    } catch (...) {
        s_fail(err, "mlp new");
        return nullptr;
    }
}

extern "C" void jf_torch_mlp_destroy(jf_torch_mlp_t **self_p)
{
    if (self_p && *self_p) {
        delete *self_p;
        *self_p = nullptr;
    }
}

extern "C" int jf_torch_mlp_inputs(const jf_torch_mlp_t *self)
{
    return self->sizes.front();
}

extern "C" int jf_torch_mlp_outputs(const jf_torch_mlp_t *self)
{
    return self->sizes.back();
}

extern "C" size_t jf_torch_mlp_param_count(const jf_torch_mlp_t *self)
{
    size_t n = 0;
    for (const auto &p : self->net->parameters()) {
        n += (size_t) p.numel();
    }
    return n;
}

extern "C" int jf_torch_mlp_params(const jf_torch_mlp_t *self, float *ret_params, size_t count,
                                   jf_err_t *err)
{
    if (count != jf_torch_mlp_param_count(self)) {
        return jf_err_set(err, -EINVAL, "mlp: %zu parameters asked for, the network has %zu", count,
                          jf_torch_mlp_param_count(self));
    }
    try {
        size_t at = 0;
        for (const auto &p : self->net->parameters()) {
            auto c = p.detach().contiguous();
            std::memcpy(ret_params + at, c.data_ptr<float>(), (size_t) c.numel() * sizeof(float));
            at += (size_t) c.numel();
        }
        return 0;
    } catch (...) {
        return s_fail(err, "mlp params");
    }
}

extern "C" int jf_torch_mlp_set_params(jf_torch_mlp_t *self, const float *params, size_t count,
                                       jf_err_t *err)
{
    if (count != jf_torch_mlp_param_count(self)) {
        return jf_err_set(err, -EINVAL, "mlp: %zu parameters given, the network has %zu", count,
                          jf_torch_mlp_param_count(self));
    }
    if (!s_all_finite_f(params, count)) {
        return jf_err_set(err, -EINVAL, "mlp: a parameter is not finite");
    }
    try {
        torch::NoGradGuard no_grad;
        size_t at = 0;
        for (auto &p : self->net->parameters()) {
            auto src =
                torch::from_blob(const_cast<float *>(params + at), p.sizes(), torch::kFloat32);
            p.copy_(src);
            at += (size_t) p.numel();
        }
        return 0;
    } catch (...) {
        return s_fail(err, "mlp set params");
    }
}

extern "C" jf_torch_mlp_t *jf_torch_mlp_clone(const jf_torch_mlp_t *src, jf_err_t *err)
{
    jf_torch_mlp_t *m = jf_torch_mlp_new(src->sizes.data(), (int) src->sizes.size(), 0, err);
    try {
        std::vector<float> p(m ? jf_torch_mlp_param_count(src) : 0);
        if (m && (jf_torch_mlp_params(src, p.data(), p.size(), err) != 0 ||
                  jf_torch_mlp_set_params(m, p.data(), p.size(), err) != 0)) {
            jf_torch_mlp_destroy(&m);
        }
    } catch (...) {
        s_fail(err, "mlp clone");
        jf_torch_mlp_destroy(&m);
    }
    return m;
}

extern "C" int jf_torch_mlp_train(jf_torch_mlp_t *self, const float *x, const float *y, size_t n,
                                  const jf_torch_mlp_train_opts_t *opts, uint64_t seed,
                                  jf_err_t *err)
{
    if (n == 0 || n > JF_TORCH_FIT_ROWS_MAX || opts->epochs < 1 || !(opts->lr > 0.0) ||
        !(opts->weight_decay >= 0.0) ||
        (opts->optim != JF_TORCH_MLP_ADAM && opts->optim != JF_TORCH_MLP_LBFGS)) {
        return jf_err_set(err, -EINVAL,
                          "mlp train: need rows >= 1, epochs >= 1, lr > 0, weight decay >= 0; "
                          "got %zu rows, %d epochs, lr %g, weight decay %g",
                          n, opts->epochs, opts->lr, opts->weight_decay);
    }
    int in = self->sizes.front();
    int out = self->sizes.back();
    if (!s_all_finite_f(x, n * (size_t) in) || !s_all_finite_f(y, n * (size_t) out)) {
        return jf_err_set(err, -EINVAL, "mlp train: a value is not finite");
    }
    try {
        at::set_num_threads(1);
        torch::manual_seed(seed);
        auto xs = s_view(x, n, in);
        auto ys = s_view(y, n, out);
        self->net->train();
        if (opts->optim == JF_TORCH_MLP_LBFGS) {
            s_train_lbfgs(self, xs, ys, opts);
        } else {
            s_train_adam(self, xs, ys, opts);
        }
        return 0;
    } catch (...) {
        return s_fail(err, "mlp train");
    }
}

extern "C" int jf_torch_mlp_predict(jf_torch_mlp_t *self, const float *x, size_t n, float *ret_y,
                                    jf_err_t *err)
{
    try {
        torch::NoGradGuard no_grad;
        self->net->eval();
        auto out = self->net->forward(s_view(x, n, self->sizes.front())).contiguous();
        std::memcpy(ret_y, out.data_ptr<float>(), (size_t) out.numel() * sizeof(float));
        return 0;
    } catch (...) {
        return s_fail(err, "mlp predict");
    }
}

// ---- Physical parametric regression (jf_torch_fit.h, docs/analysis.md "Physical models") ----

#define JF_TORCH_PHYS_SOFT_L1 0.05 // soft-L1 scale of the log residual: about 5 % (the docs)

namespace
{

// (a^k + b^k)^(1/k) for positive a, b, in log space: a smooth max, the sharper the larger k.
torch::Tensor s_smax(const torch::Tensor &a, const torch::Tensor &b, const torch::Tensor &k)
{
    return torch::exp(torch::logsumexp(torch::stack({k * torch::log(a), k * torch::log(b)}), 0) /
                      k);
}

// The time form and its parts. x: n x 4 (cores, CPU, GPU, EMC GHz), p: 7 parameters, each on a
// log scale (the sharpnesses as 1 + e^p) so that none needs a sign constraint.
//   CPU time  = e^p0 / (f_cpu · c_eff), c_eff = cores · n0 / (cores + n0), n0 = e^p4 (the cores
//               the CPU side can use: a saturating count)
//   GPU time  = e^p1 / f_gpu; memory time = e^p2 / f_emc; device = smax(GPU, memory, 1 + e^p6)
//   time      = smax(CPU, device, 1 + e^p5) + e^p3 (a fixed cost)
struct s_time_parts {
    torch::Tensor t, cpu, gpu, mem, c_eff;
};

s_time_parts s_time(const torch::Tensor &x, const torch::Tensor &p)
{
    auto c = x.select(1, 0);
    auto n0 = torch::exp(p[4]);
    auto c_eff = c * n0 / (c + n0);
    auto cpu = torch::exp(p[0]) / (x.select(1, 1) * c_eff);
    auto gpu = torch::exp(p[1]) / x.select(1, 2);
    auto mem = torch::exp(p[2]) / x.select(1, 3);
    auto dev = s_smax(gpu, mem, 1.0 + torch::exp(p[6]));
    auto t = s_smax(cpu, dev, 1.0 + torch::exp(p[5])) + torch::exp(p[3]);
    return {t, cpu, gpu, mem, c_eff};
}

// The power form: p[0..6] a latent time form whose parts give each unit's share u of the time,
//   P = e^q0 + (e^q1 u_cpu c_eff + e^q2 + e^q9 cores) f_cpu^(1+e^q7)
//       + (e^q3 u_gpu + e^q4) f_gpu^(1+e^q8) + (e^q5 u_mem + e^q6) f_emc
// with q = p[7..16]: static power, then per unit C V^2 f (V rising with f: a power of f above 1;
// the memory's taken as linear) times a part that follows the unit's load and one that does not
// (clock tree, leakage, a process spinning on the GPU). The CPU's load is in busy cores (its
// share of the time times the cores it can use: an idle core is clock-gated), its leakage in
// online cores.
torch::Tensor s_power(const torch::Tensor &x, const torch::Tensor &p)
{
    auto tp = s_time(x, p.narrow(0, 0, JF_TORCH_PHYS_TIME_PARAMS));
    auto q = p.narrow(0, JF_TORCH_PHYS_TIME_PARAMS,
                      JF_TORCH_PHYS_POWER_PARAMS - JF_TORCH_PHYS_TIME_PARAMS);
    auto fc = x.select(1, 1);
    auto fg = x.select(1, 2);
    auto fe = x.select(1, 3);
    auto cpu_w = torch::exp(q[1]) * (tp.cpu / tp.t) * tp.c_eff + torch::exp(q[2]) +
                 torch::exp(q[9]) * x.select(1, 0);
    auto cpu_v = torch::pow(fc, 1.0 + torch::exp(q[7])); // C V^2 f of one core
    auto gpu_v = torch::pow(fg, 1.0 + torch::exp(q[8]));
    return torch::exp(q[0]) + cpu_w * cpu_v +
           (torch::exp(q[3]) * (tp.gpu / tp.t) + torch::exp(q[4])) * gpu_v +
           (torch::exp(q[5]) * (tp.mem / tp.t) + torch::exp(q[6])) * fe;
}

torch::Tensor s_phys(jf_torch_phys_form_t form, const torch::Tensor &x, const torch::Tensor &p)
{
    return form == JF_TORCH_PHYS_TIME ? s_time(x, p).t : s_power(x, p);
}

// Mean soft-L1 of the log residuals: quadratic below about 5 %, linear above (a few bad modes in
// a real table must not bend the whole surface).
torch::Tensor s_phys_loss(jf_torch_phys_form_t form, const torch::Tensor &x,
                          const torch::Tensor &log_y, const torch::Tensor &p)
{
    auto r = (torch::log(s_phys(form, x, p)) - log_y) / JF_TORCH_PHYS_SOFT_L1;
    return (2.0 * (torch::sqrt(1.0 + r * r) - 1.0)).mean();
}

// One L-BFGS descent from start; the final loss (NaN or infinite when it diverged).
double s_phys_descend(jf_torch_phys_form_t form, const torch::Tensor &x, const torch::Tensor &log_y,
                      torch::Tensor &p, int max_iter)
{
    p.requires_grad_(true);
    torch::optim::LBFGS opt({p}, torch::optim::LBFGSOptions(1.0)
                                     .max_iter(max_iter)
                                     .max_eval(max_iter * 5 / 4)
                                     .tolerance_grad(1e-10)
                                     .tolerance_change(1e-14)
                                     .history_size(JF_TORCH_FIT_LBFGS_HISTORY)
                                     .line_search_fn("strong_wolfe"));
    auto closure = [&]() {
        opt.zero_grad();
        auto loss = s_phys_loss(form, x, log_y, p);
        loss.backward();
        return loss;
    };
    opt.step(closure);
    torch::NoGradGuard ng;
    return s_phys_loss(form, x, log_y, p).item<double>();
}

torch::Tensor s_phys_x(const double *x, size_t n)
{
    return torch::from_blob(const_cast<double *>(x), {(int64_t) n, JF_TORCH_PHYS_INPUTS},
                            torch::kFloat64)
        .clone();
}

} // namespace

extern "C" int jf_torch_phys_fit(jf_torch_phys_form_t form, const double *x, const double *y,
                                 size_t n, double scale, const double *starts, size_t n_starts,
                                 int max_iter, double *ret_params, double *ret_loss,
                                 size_t *ret_start, jf_err_t *err)
{
    int np = jf_torch_phys_params(form);
    if (np == 0 || n == 0 || n > JF_TORCH_FIT_ROWS_MAX || n_starts == 0 || max_iter < 1 ||
        !(scale > 0.0) || !std::isfinite(scale)) {
        return jf_err_set(err, -EINVAL, "phys fit: bad form, sizes or scale");
    }
    for (size_t i = 0; i < n; i++) {
        if (!(y[i] > 0.0) || !std::isfinite(y[i]) || !s_all_finite(x + i * 4, 4) ||
            !(x[i * 4] > 0 && x[i * 4 + 1] > 0 && x[i * 4 + 2] > 0 && x[i * 4 + 3] > 0)) {
            return jf_err_set(err, -EINVAL, "phys fit: row %zu has a non-positive value", i);
        }
    }
    try {
        at::set_num_threads(1);
        auto xs = s_phys_x(x, n);
        auto log_y = torch::log(
            torch::from_blob(const_cast<double *>(y), {(int64_t) n}, torch::kFloat64) / scale);
        double best = INFINITY;
        for (size_t s = 0; s < n_starts; s++) {
            auto p = torch::from_blob(const_cast<double *>(starts + s * np), {np}, torch::kFloat64)
                         .clone();
            double loss = s_phys_descend(form, xs, log_y, p, max_iter);
            auto pd = p.detach().contiguous();
            if (std::isfinite(loss) && loss < best &&
                s_all_finite(pd.data_ptr<double>(), (size_t) np)) {
                best = loss;
                std::memcpy(ret_params, pd.data_ptr<double>(), np * sizeof(double));
                *ret_start = s;
            }
        }
        *ret_loss = best;
        return std::isfinite(best) ? 0
                                   : jf_err_set(err, -EIO,
                                                "phys fit: no start reached a finite "
                                                "loss");
    } catch (...) {
        return s_fail(err, "phys fit");
    }
}

extern "C" int jf_torch_phys_predict(jf_torch_phys_form_t form, const double *params, double scale,
                                     const double *x, size_t n, double *ret_y, jf_err_t *err)
{
    int np = jf_torch_phys_params(form);
    if (np == 0 || n > JF_TORCH_FIT_ROWS_MAX) {
        return jf_err_set(err, -EINVAL, "phys predict: bad form or size");
    }
    try {
        torch::NoGradGuard ng;
        auto p = torch::from_blob(const_cast<double *>(params), {np}, torch::kFloat64);
        auto y = (s_phys(form, s_phys_x(x, n), p) * scale).contiguous();
        std::memcpy(ret_y, y.data_ptr<double>(), n * sizeof(double));
        return s_all_finite(ret_y, n) ? 0
                                      : jf_err_set(err, -EINVAL,
                                                   "phys predict: not finite (an "
                                                   "input outside the form's range)");
    } catch (...) {
        return s_fail(err, "phys predict");
    }
}
