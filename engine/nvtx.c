/* The "gpubench" NVTX domain and its ranges (engine/nvtx.h). */
#include "engine/nvtx.h"

/* nvtx3 is a system header here: its code is not held to our warnings. */
#define NVTX_AS_SYSTEM_HEADER
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#define MAX_NAME_BYTES 512

static pthread_once_t once = PTHREAD_ONCE_INIT;
static nvtxDomainHandle_t domain; /* NULL: no tool attached */

/* nvtx3 looks for a tool on its first call; without one this returns NULL. */
static void create_domain(void)
{
    domain = nvtxDomainCreateA("gpubench");
}

bool gb_nvtx_active(void)
{
    pthread_once(&once, create_domain);
    return domain != NULL;
}

void gb_nvtx_push(const char *fmt, ...)
{
    if (!gb_nvtx_active()) return;
    char name[MAX_NAME_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    nvtxEventAttributes_t attr = {
        .version = NVTX_VERSION,
        .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
        .messageType = NVTX_MESSAGE_TYPE_ASCII,
        .message.ascii = name, /* the tool copies it during the call */
    };
    nvtxDomainRangePushEx(domain, &attr);
}

void gb_nvtx_pop(void)
{
    if (gb_nvtx_active()) nvtxDomainRangePop(domain);
}
