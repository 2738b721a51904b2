#include "gpu_present.h"

#include "engine/driver.h"

bool gpu_present(void)
{
    int count = 0;
    return gb_driver_load(NULL) == GB_OK && gb_cu.cuDeviceGetCount(&count) == CUDA_SUCCESS &&
           count > 0;
}
