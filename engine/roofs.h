/*
 * A device's roofs: the peak memory bandwidth and, per kind of math, the peak
 * operations per second, worked out from its clocks and units (theoretical), and
 * the ceilings measured on it. The reports put a kernel's figures against them:
 * percent of peak, and which roof of the roofline it sits under.
 */
#ifndef GB_ENGINE_ROOFS_H
#define GB_ENGINE_ROOFS_H

#include "base/error.h"
#include "engine/device.h"

/* What the flops of a kernel run on, for its compute roof: CUDA cores (fp64,
 * fp32) or tensor cores (tf32, fp16, bf16, fp8, int8). */
typedef enum gb_math {
    GB_MATH_FP32, /* the default */
    GB_MATH_FP64,
    GB_MATH_TF32,
    GB_MATH_FP16,
    GB_MATH_BF16,
    GB_MATH_FP8,
    GB_MATH_INT8,
    GB_MATH_COUNT
} gb_math;

const char *gb_math_name(gb_math math);
/* GB_EINVAL for a name that is none of them. */
int gb_math_parse(const char *name, gb_math *out);

/* The device's roofs: theoretical peaks from its clocks and units, and ceilings
 * measured on it (0 where unknown). */
typedef struct gb_roofs {
    double peak_gbps;                  /* memory clock x bus width */
    double peak_tflops[GB_MATH_COUNT]; /* SMs x units x peak SM clock; 0: unknown arch */
    double ceiling_gbps;               /* measured: the best copy bandwidth */
    double ceiling_tflops[GB_MATH_COUNT];
} gb_roofs;

/* The theoretical peaks of a device (compute capabilities 7.0 to 10.x are known;
 * others have peak_gbps only). */
void gb_roofs_peaks(const gb_device_info *device, gb_roofs *out);

#endif
