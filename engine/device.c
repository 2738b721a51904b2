#include "engine/device.h"

#include "engine/driver.h"

#include <stdio.h>
#include <string.h>

static int attribute(CUdevice dev, CUdevice_attribute attr, int *out, gb_err *err)
{
    CUresult rc = gb_cu.cuDeviceGetAttribute(out, attr, dev);
    if (rc != CUDA_SUCCESS) return gb_cu_fail(err, rc, "cuDeviceGetAttribute");
    return GB_OK;
}

void gb_device_arch(int cc_major, int cc_minor, char out[16])
{
    /* The "a" targets unlock architecture-specific instructions (wgmma, setmaxnreg);
     * a cubin for them runs only on that exact compute capability, which is what a
     * tuner compiling for the device in hand wants. */
    bool arch_specific = (cc_major == 9 && cc_minor == 0) || cc_major == 10 || cc_major == 12;
    snprintf(out, 16, "sm_%d%d%s", cc_major, cc_minor, arch_specific ? "a" : "");
}

/* The UUID as nvidia-smi and NVML print it, so a lease names the GPU the same way
 * whatever CUDA_VISIBLE_DEVICES renumbers; both are optional entry points. */
static void identify(CUdevice dev, gb_device_info *out)
{
    CUuuid id;
    if (gb_cu.cuDeviceGetUuid && gb_cu.cuDeviceGetUuid(&id, dev) == CUDA_SUCCESS) {
        const unsigned char *b = (const unsigned char *)id.bytes;
        snprintf(out->uuid, sizeof out->uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
    }
    if (gb_cu.cuDeviceGetPCIBusId &&
        gb_cu.cuDeviceGetPCIBusId(out->pci_bus_id, sizeof out->pci_bus_id, dev) != CUDA_SUCCESS)
        out->pci_bus_id[0] = '\0';
}

int gb_device_query(int ordinal, gb_device_info *out, gb_err *err)
{
    memset(out, 0, sizeof *out);
    out->ordinal = ordinal;
    CUdevice dev;
    CUresult cr = gb_cu.cuDeviceGet(&dev, ordinal);
    if (cr != CUDA_SUCCESS) return gb_cu_fail(err, cr, "cuDeviceGet");
    if ((cr = gb_cu.cuDeviceGetName(out->name, sizeof out->name, dev)) != CUDA_SUCCESS)
        return gb_cu_fail(err, cr, "cuDeviceGetName");
    size_t mem = 0;
    if ((cr = gb_cu.cuDeviceTotalMem(&mem, dev)) != CUDA_SUCCESS)
        return gb_cu_fail(err, cr, "cuDeviceTotalMem");
    out->mem_bytes = (int64_t)mem;
    gb_cu.cuDriverGetVersion(&out->driver_version);

    int l2 = 0;
    const struct {
        CUdevice_attribute attr;
        int *slot;
    } attrs[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &out->cc_major},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &out->cc_minor},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &out->sms},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &out->smem_per_block_optin},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, &out->smem_per_sm},
        {CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, &out->regs_per_sm},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &out->max_threads_per_block},
        {CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &l2},
        {CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &out->bus_width_bits},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
        int rc = attribute(dev, attrs[i].attr, attrs[i].slot, err);
        if (rc) return gb_err_prefix(err, "device %d", ordinal);
    }
    out->l2_bytes = l2;
    /* Clock rates are deprecated attributes; a driver that refuses them leaves 0. */
    if (gb_cu.cuDeviceGetAttribute(&out->mem_clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
                                   dev) != CUDA_SUCCESS)
        out->mem_clock_khz = 0;
    if (gb_cu.cuDeviceGetAttribute(&out->sm_clock_khz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) !=
        CUDA_SUCCESS)
        out->sm_clock_khz = 0;
    /* Double data rate: two transfers per memory clock, bus width in bits. */
    out->peak_gbps = 2.0 * out->mem_clock_khz * 1e3 * (out->bus_width_bits / 8.0) / 1e9;
    gb_device_arch(out->cc_major, out->cc_minor, out->arch);
    identify(dev, out);
    return GB_OK;
}

void gb_device_fingerprint(const gb_device_info *info, char *out, size_t out_bytes)
{
    snprintf(out, out_bytes, "%s/sm_%d%d/%d", info->name, info->cc_major, info->cc_minor,
             info->sms);
}
