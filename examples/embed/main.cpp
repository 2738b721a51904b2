// A C++ program that gets its GEMM configuration from gpubench at run time: on the
// first call for a shape it tunes gpubench's fp32 SGEMM (templates/sgemm.cuh, the
// space of examples/gemm.lua, checked against templates/gemm_ref.cuh), and from
// then on, in this run or any later one, the cache answers. README.md in this
// folder says how to build and run it.
//
//   embed M N K [M N K ...]   the configuration for each shape, tuning those the
//                             cache does not hold
//
// Exit status: 0 when every shape has a configuration, 1 when one could not be
// tuned (the message says why), 2 for a usage error, 3 when there is no GPU to
// tune on and the cache has nothing near.
#include <gpubench/gpubench.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

// The shape and configuration fields as C++ values.
int64_t get(const gpubench_fields *f, const char *name)
{
    int64_t v = 0;
    gpubench_fields_get_int(f, name, &v);
    return v;
}

int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// ---- the kernel: what examples/gemm.lua declares --------------------------------

int gemm_args(void *, const gpubench_fields *s, gpubench_args *a, gpubench_error *)
{
    const int64_t m = get(s, "M"), n = get(s, "N"), k = get(s, "K");
    const int64_t a_dims[] = {m, k}, b_dims[] = {k, n}, c_dims[] = {m, n};
    gpubench_args_tensor(a, "f32", 2, a_dims, "randn");
    gpubench_args_tensor(a, "f32", 2, b_dims, "randn");
    gpubench_args_tensor(a, "f32", 2, c_dims, "output");
    gpubench_args_i32(a, static_cast<int32_t>(m));
    gpubench_args_i32(a, static_cast<int32_t>(n));
    gpubench_args_i32(a, static_cast<int32_t>(k));
    return GPUBENCH_OK;
}

int gemm_launch(void *, const gpubench_fields *c, const gpubench_fields *s, gpubench_launch *out,
                gpubench_error *)
{
    out->grid[0] = static_cast<uint32_t>(cdiv(get(s, "N"), get(c, "BN")));
    out->grid[1] = static_cast<uint32_t>(cdiv(get(s, "M"), get(c, "BM")));
    out->block[0] = static_cast<uint32_t>((get(c, "BM") / get(c, "TM")) *
                                          (get(c, "BN") / get(c, "TN")));
    return GPUBENCH_OK;
}

// The constraints of examples/gemm.lua: 128 to 256 threads, warps that tile the
// block, thread tiles at most twice as tall as wide (or wide as tall), and both
// slices of both tiles in 48 KiB.
int gemm_constraint(void *, const gpubench_fields *c, int *keep, gpubench_error *)
{
    const int64_t bm = get(c, "BM"), bn = get(c, "BN"), bk = get(c, "BK");
    const int64_t tm = get(c, "TM"), tn = get(c, "TN");
    const int64_t threads = (bm / tm) * (bn / tn);
    const int64_t wide = bn / tn < 8 ? bn / tn : 8;
    *keep = threads >= 128 && threads <= 256 && (bn / tn) % wide == 0 &&
            (bm / tm) % (32 / wide) == 0 && tm <= 2 * tn && tn <= 2 * tm &&
            2 * 4 * bk * (bm + bn) <= 48 * 1024;
    return GPUBENCH_OK;
}

int gemm_work(void *, const gpubench_fields *s, double *flops, double *bytes, gpubench_error *)
{
    const double m = get(s, "M"), n = get(s, "N"), k = get(s, "K");
    *flops = 2 * m * n * k;
    *bytes = 4 * (m * k + k * n + m * n);
    return GPUBENCH_OK;
}

int ref_launch(void *, const gpubench_fields *, const gpubench_fields *s, gpubench_launch *out,
               gpubench_error *)
{
    out->grid[0] = static_cast<uint32_t>(cdiv(get(s, "N"), 16));
    out->grid[1] = static_cast<uint32_t>(cdiv(get(s, "M"), 16));
    out->block[0] = out->block[1] = 16;
    return GPUBENCH_OK;
}

struct kernel_deleter {
    void operator()(gpubench_kernel *k) const { gpubench_kernel_free(k); }
};
struct session_deleter {
    void operator()(gpubench_session *s) const { gpubench_session_close(s); }
};
struct fields_deleter {
    void operator()(gpubench_fields *f) const { gpubench_fields_free(f); }
};
using kernel_ptr = std::unique_ptr<gpubench_kernel, kernel_deleter>;
using fields_ptr = std::unique_ptr<gpubench_fields, fields_deleter>;

// Declares gemm_f32 (the name examples/gemm.lua tunes under, so both share the
// cache's entries); NULL with err set on failure.
kernel_ptr declare(gpubench_error *err)
{
    gpubench_kernel *raw = nullptr, *ref = nullptr;
    if (gpubench_kernel_new("gemm_f32", &raw, err)) return nullptr;
    kernel_ptr k(raw);
    const int64_t bm[] = {64, 128}, bn[] = {64, 128, 256}, bk[] = {8, 16};
    const int64_t tm[] = {4, 8}, tn[] = {4, 8, 16};
    const int outputs[] = {2};
    gpubench_callbacks cb = {};
    cb.args = gemm_args;
    cb.launch = gemm_launch;
    cb.constraint = gemm_constraint;
    cb.work = gemm_work;
    gpubench_callbacks ref_cb = {};
    ref_cb.launch = ref_launch;
    if (gpubench_kernel_template(raw, "sgemm.cuh", err) ||
        gpubench_kernel_entry(raw, "sgemm<${BM},${BN},${BK},${TM},${TN}>", err) ||
        gpubench_kernel_param_ints(raw, "BM", bm, 2, err) ||
        gpubench_kernel_param_ints(raw, "BN", bn, 3, err) ||
        gpubench_kernel_param_ints(raw, "BK", bk, 2, err) ||
        gpubench_kernel_param_ints(raw, "TM", tm, 2, err) ||
        gpubench_kernel_param_ints(raw, "TN", tn, 3, err) ||
        gpubench_kernel_check(raw, outputs, 1, 1e-3, 1e-3, 0, err) ||
        gpubench_kernel_callbacks(raw, &cb, err) ||
        gpubench_kernel_new("gemm_f32_ref", &ref, err))
        return nullptr;
    kernel_ptr reference(ref);
    if (gpubench_kernel_template(ref, "gemm_ref.cuh", err) ||
        gpubench_kernel_entry(ref, "gemm_ref_f32", err) ||
        gpubench_kernel_callbacks(ref, &ref_cb, err) ||
        gpubench_kernel_reference(raw, ref, err))
        return nullptr;
    reference.release(); // the kernel owns it now
    return k;
}

fields_ptr shape(int64_t m, int64_t n, int64_t k)
{
    gpubench_fields *f = nullptr;
    if (gpubench_fields_new(&f)) return nullptr;
    gpubench_fields_set_int(f, "M", m);
    gpubench_fields_set_int(f, "N", n);
    gpubench_fields_set_int(f, "K", k);
    return fields_ptr(f);
}

std::string text(const gpubench_fields *f)
{
    char buf[256];
    gpubench_fields_text(f, buf, sizeof buf);
    return buf;
}

// The configuration for a shape: the cache's entry for it, else a tune now. The
// nearest entry would also do for a program in a hurry; this one tunes instead,
// unless there is no GPU to tune on.
int configuration(gpubench_session *s, const gpubench_kernel *k, const gpubench_fields *shape,
                  bool gpu, gpubench_best *out, const char **how, gpubench_error *err)
{
    int rc = gpubench_lookup(s, k, shape, out, err);
    if (rc == GPUBENCH_OK && (out->match == GPUBENCH_EXACT || !gpu)) {
        *how = out->match == GPUBENCH_EXACT ? "from the cache" : "the nearest in the cache";
        return rc;
    }
    gpubench_best_clear(out);
    if (!gpu) return rc;
    *how = "tuned now";
    return gpubench_tune(s, k, shape, nullptr, out, err);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 4 || (argc - 1) % 3 != 0) {
        std::fprintf(stderr, "usage: %s M N K [M N K ...]\n", argv[0]);
        return 2;
    }
    gpubench_error err = {};
    gpubench_session_options o;
    gpubench_session_options_init(&o);
    o.log = stderr; // the tuner's warnings
    gpubench_session *raw = nullptr;
    if (gpubench_session_open(&o, &raw, &err)) {
        std::fprintf(stderr, "embed: %s\n", err.message);
        return 1;
    }
    std::unique_ptr<gpubench_session, session_deleter> session(raw);
    kernel_ptr gemm = declare(&err);
    if (!gemm) {
        std::fprintf(stderr, "embed: %s\n", err.message);
        return 1;
    }
    // The GPU's fingerprint, so that the cache answers for this GPU (a cache copied
    // from other machines may hold several); without a GPU, the cache alone answers.
    char device[320] = "";
    bool gpu = gpubench_session_device(session.get(), device, sizeof device, &err) == 0;
    if (!gpu) std::fprintf(stderr, "embed: %s; answering from the cache alone\n", err.message);
    int status = 0;
    for (int i = 1; i + 2 < argc; i += 3) {
        fields_ptr s = shape(std::atoll(argv[i]), std::atoll(argv[i + 1]), std::atoll(argv[i + 2]));
        gpubench_best best = {};
        const char *how = "";
        int rc = s ? configuration(session.get(), gemm.get(), s.get(), gpu, &best, &how, &err)
                   : GPUBENCH_ENOMEM;
        if (rc) {
            std::fprintf(stderr, "embed: %s: %s\n", text(s.get()).c_str(), err.message);
            status = gpu ? 1 : 3;
            continue;
        }
        std::printf("%s  %s  %.4f ms  (%s)\n", text(s.get()).c_str(), text(best.config).c_str(),
                    best.median_ms, how);
        gpubench_best_clear(&best);
    }
    return status;
}
