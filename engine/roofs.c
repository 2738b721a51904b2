#include "engine/roofs.h"

#include <string.h>

static const char *const math_names[GB_MATH_COUNT] = {
    [GB_MATH_FP32] = "fp32", [GB_MATH_FP64] = "fp64", [GB_MATH_TF32] = "tf32",
    [GB_MATH_FP16] = "fp16", [GB_MATH_BF16] = "bf16", [GB_MATH_FP8] = "fp8",
    [GB_MATH_INT8] = "int8",
};

const char *gb_math_name(gb_math math)
{
    return math >= 0 && math < GB_MATH_COUNT ? math_names[math] : "?";
}

int gb_math_parse(const char *name, gb_math *out)
{
    for (int i = 0; name && i < GB_MATH_COUNT; i++)
        if (strcmp(name, math_names[i]) == 0) {
            *out = (gb_math)i;
            return GB_OK;
        }
    return GB_EINVAL;
}

/* Dense operations per clock per SM (an FMA is two), by compute capability, from
 * NVIDIA's architecture whitepapers: CUDA cores for fp64 and fp32, tensor cores
 * for the rest; 0 where the architecture has no such unit. */
typedef struct sm_rates {
    int cc;
    double ops[GB_MATH_COUNT];
} sm_rates;

static const sm_rates rates[] = {
    /*          fp32, fp64, tf32,  fp16,  bf16,  fp8,   int8 */
    {70, {128, 64, 0, 1024, 0, 0, 0}},
    {75, {128, 4, 0, 1024, 0, 0, 2048}},
    {80, {128, 64, 1024, 2048, 2048, 0, 4096}},
    {86, {256, 4, 256, 512, 512, 0, 1024}},
    {89, {256, 4, 256, 512, 512, 1024, 1024}},
    {90, {256, 128, 2048, 4096, 4096, 8192, 8192}},
    {100, {256, 128, 4096, 8192, 8192, 16384, 16384}},
};

void gb_roofs_peaks(const gb_device_info *device, gb_roofs *out)
{
    memset(out, 0, sizeof *out);
    out->peak_gbps = device->peak_gbps;
    int cc = device->cc_major * 10 + device->cc_minor;
    double per_clock = (double)device->sms * device->sm_clock_khz * 1e3;
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        if (rates[i].cc != cc) continue;
        for (int m = 0; m < GB_MATH_COUNT; m++)
            out->peak_tflops[m] = rates[i].ops[m] * per_clock / 1e12;
    }
}
