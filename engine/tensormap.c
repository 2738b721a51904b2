#include "engine/tensormap.h"

#include "engine/driver.h"

#include <stdint.h>
#include <string.h>

/* TMA's limits (cuTensorMapEncodeTiled): dimensions of at most 2^32 elements,
 * strides that are multiples of 16 bytes below 2^40, boxes of at most 256 per
 * dimension whose innermost run is whole 16-byte units. */
#define TMA_MAX_DIM    ((int64_t)1 << 32)
#define TMA_MAX_STRIDE ((int64_t)1 << 40)
#define TMA_ALIGN      16
#define TMA_MAX_BOX    256

static int data_type(gb_dtype dtype, CUtensorMapDataType *out)
{
    switch (dtype) {
    case GB_DT_F64:
        *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
        return GB_OK;
    case GB_DT_F32:
        *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
        return GB_OK;
    case GB_DT_F16:
        *out = CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
        return GB_OK;
    case GB_DT_BF16:
        *out = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
        return GB_OK;
    case GB_DT_FP8_E4M3:
    case GB_DT_FP8_E5M2:
    case GB_DT_I8:
    case GB_DT_U8: /* bytes: the kernel reads them as what they are */
        *out = CU_TENSOR_MAP_DATA_TYPE_UINT8;
        return GB_OK;
    case GB_DT_I32:
        *out = CU_TENSOR_MAP_DATA_TYPE_INT32;
        return GB_OK;
    case GB_DT_U32:
        *out = CU_TENSOR_MAP_DATA_TYPE_UINT32;
        return GB_OK;
    case GB_DT_I64:
        *out = CU_TENSOR_MAP_DATA_TYPE_INT64;
        return GB_OK;
    default:
        return GB_EINVAL;
    }
}

static int swizzle_bytes(gb_swizzle s)
{
    return s == GB_SWIZZLE_32B ? 32 : s == GB_SWIZZLE_64B ? 64 : s == GB_SWIZZLE_128B ? 128 : 0;
}

/* The map's dims and element strides, outermost first: its own, or the tensor's
 * dims packed. */
static void view_dims(const gb_arg *map, const gb_arg *t, int64_t dims[], int64_t strides[])
{
    const int64_t *src = map->n_dims ? map->dims : t->dims;
    int rank = map->n_dims ? map->n_dims : t->n_dims;
    int64_t packed = 1;
    for (int i = rank - 1; i >= 0; i--) {
        dims[i] = src[i];
        strides[i] = map->n_strides ? map->strides[i] : packed;
        packed *= src[i];
    }
}

/* The rules on each dimension, in the script's order (i = 0 the outermost). */
static int check_dims(const gb_arg *map, const gb_arg *t, const int64_t dims[],
                      const int64_t strides[], int rank, gb_err *err)
{
    size_t elem = gb_dtype_bytes(t->dtype);
    const char *dt = gb_dtype_name(t->dtype);
    int64_t last = 0; /* the view's last element */
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1 || dims[i] > TMA_MAX_DIM)
            return gb_err_set(err, GB_EINVAL, "dims[%d] is %lld; TMA takes 1 to 2^32", i + 1,
                              (long long)dims[i]);
        if (map->box[i] < 1 || map->box[i] > TMA_MAX_BOX)
            return gb_err_set(err, GB_EINVAL, "box[%d] is %u; TMA takes 1 to %d", i + 1,
                              map->box[i], TMA_MAX_BOX);
        int64_t bytes = strides[i] * (int64_t)elem;
        if (i < rank - 1 && (bytes % TMA_ALIGN || bytes >= TMA_MAX_STRIDE))
            return gb_err_set(err, GB_EINVAL,
                              "dimension %d's stride is %lld %s = %lld bytes; TMA needs a multiple "
                              "of %d bytes below 2^40 (pad the rows)",
                              i + 1, (long long)strides[i], dt, (long long)bytes, TMA_ALIGN);
        last += (dims[i] - 1) * strides[i];
    }
    if (map->n_strides && map->strides[rank - 1] != 1)
        return gb_err_set(err, GB_EINVAL, "strides[%d] is %lld; the innermost stride must be 1",
                          rank, (long long)map->strides[rank - 1]);
    if (last >= gb_arg_elements(t))
        return gb_err_set(err, GB_EINVAL,
                          "the view reaches element %lld of a tensor of %lld elements",
                          (long long)last, (long long)gb_arg_elements(t));
    int64_t inner = (int64_t)map->box[rank - 1] * (int64_t)elem;
    if (inner % TMA_ALIGN)
        return gb_err_set(err, GB_EINVAL,
                          "box[%d] is %u %s = %lld bytes; TMA needs a multiple of %d bytes", rank,
                          map->box[rank - 1], dt, (long long)inner, TMA_ALIGN);
    int span = swizzle_bytes(map->swizzle);
    if (span && inner > span)
        return gb_err_set(
            err, GB_EINVAL, "box[%d] is %u %s = %lld bytes; swizzle %s takes at most %d", rank,
            map->box[rank - 1], dt, (long long)inner, gb_swizzle_name(map->swizzle), span);
    return GB_OK;
}

int gb_tensormap_check(const gb_arg *args, int n_args, int pos, gb_tensormap_view *view,
                       gb_err *err)
{
    const gb_arg *map = &args[pos];
    if (map->tensor < 0 || map->tensor >= n_args || args[map->tensor].kind != GB_ARG_TENSOR)
        return gb_err_set(err, GB_EINVAL, "tensor = %d is not a tensor argument", map->tensor + 1);
    const gb_arg *t = &args[map->tensor];
    CUtensorMapDataType type;
    if (data_type(t->dtype, &type))
        return gb_err_set(err, GB_EINVAL, "TMA cannot load %s", gb_dtype_name(t->dtype));
    int rank = map->n_dims ? map->n_dims : t->n_dims;
    if (rank < 1 || rank > GB_TENSORMAP_MAX_RANK)
        return gb_err_set(err, GB_EINVAL, "a tensor of %d dimensions; TMA takes 1 to %d", rank,
                          GB_TENSORMAP_MAX_RANK);
    if (map->n_box != rank)
        return gb_err_set(err, GB_EINVAL, "box has %d sizes for %d dimensions", map->n_box, rank);
    if (map->n_strides && map->n_strides != rank)
        return gb_err_set(err, GB_EINVAL, "strides has %d sizes for %d dimensions", map->n_strides,
                          rank);
    if (map->n_strides && !map->n_dims)
        return gb_err_set(err, GB_EINVAL, "strides need dims: the view's sizes");
    if (map->oob_fill == GB_OOB_NAN && !gb_dtype_is_float(t->dtype))
        return gb_err_set(err, GB_EINVAL, "oob_fill \"nan\" needs a float tensor, not %s",
                          gb_dtype_name(t->dtype));
    int64_t dims[GB_TENSORMAP_MAX_RANK], strides[GB_TENSORMAP_MAX_RANK];
    view_dims(map, t, dims, strides);
    int rc = check_dims(map, t, dims, strides, rank, err);
    if (rc || !view) return rc;
    view->rank = rank;
    for (int i = 0; i < rank; i++) { /* TMA's order: innermost first */
        int j = rank - 1 - i;
        view->dims[i] = (cuuint64_t)dims[j];
        view->box[i] = map->box[j];
        if (i > 0) view->strides[i - 1] = (cuuint64_t)strides[j] * gb_dtype_bytes(t->dtype);
    }
    return GB_OK;
}

int gb_tensormap_encode(const gb_arg *args, int n_args, int pos, CUdeviceptr base, CUtensorMap *out,
                        gb_err *err)
{
    static const CUtensorMapSwizzle swizzles[GB_SWIZZLE_COUNT] = {
        CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
        CU_TENSOR_MAP_SWIZZLE_128B};
    static const CUtensorMapL2promotion promotions[GB_L2_PROMOTION_COUNT] = {
        CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B};
    gb_tensormap_view v;
    if (gb_tensormap_check(args, n_args, pos, &v, err))
        return gb_err_prefix(err, "tensormap (argument %d)", pos + 1);
    if (!gb_cu.cuTensorMapEncodeTiled)
        return gb_err_set(err, GB_ECUDA,
                          "tensormap (argument %d): the driver has no cuTensorMapEncodeTiled "
                          "(CUDA 12.0 or newer)",
                          pos + 1);
    const gb_arg *map = &args[pos];
    CUtensorMapDataType type;
    data_type(args[map->tensor].dtype, &type);
    cuuint32_t element_strides[GB_TENSORMAP_MAX_RANK] = {1, 1, 1, 1, 1};
    CUresult cr = gb_cu.cuTensorMapEncodeTiled(
        out, type, (cuuint32_t)v.rank, (void *)(uintptr_t)base, v.dims, v.strides, v.box,
        element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzles[map->swizzle],
        promotions[map->l2_promotion],
        map->oob_fill == GB_OOB_NAN ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
                                    : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (cr != CUDA_SUCCESS) {
        gb_cu_fail(err, cr, "cuTensorMapEncodeTiled");
        return gb_err_prefix(err, "tensormap (argument %d)", pos + 1);
    }
    return GB_OK;
}
