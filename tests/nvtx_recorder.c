/* A stand-in for a profiler's NVTX tool, loaded by nvtx3 when
 * NVTX_INJECTION64_PATH names this library (tests/test_nvtx.c). It takes the
 * domain calls gpubench makes and appends a line per call to the file that
 * GB_NVTX_RECORD names:
 *
 *   domain gpubench
 *   push compile tiny S=2
 *   pop
 *
 * Every process that loads it (gpubench-tune and its GPU worker) and every thread
 * appends to the same file: each line is one write() on an O_APPEND descriptor, so
 * lines never mix.
 *
 * The contract, from nvtx3's nvtxDetail headers: nvtx3 dlopens the library on its
 * first call and calls InitializeInjectionNvtx2 with its export-table getter; the
 * tool asks the callbacks table for a module's function table (an array of
 * pointers to nvtx3's own function pointers, indexed by callback id) and writes its
 * functions into the slots it handles. Slots left alone become no-ops. Returning 0
 * refuses, and nvtx3 unloads the library. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int record_fd = -1;
static int a_domain; /* its address is the one domain handle handed out */

static void record(const char *what, const char *text)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "%s%s%s\n", what, text ? " " : "", text ? text : "");
    if (n > (int)sizeof line - 1) n = (int)sizeof line - 1, line[n - 1] = '\n';
    if (n > 0 && write(record_fd, line, (size_t)n) < 0) perror("nvtx_recorder: write");
}

static nvtxDomainHandle_t NVTX_API domain_create(const char *name)
{
    record("domain", name);
    return (nvtxDomainHandle_t)&a_domain;
}

static int NVTX_API range_push(nvtxDomainHandle_t domain, const nvtxEventAttributes_t *attr)
{
    if (domain != (nvtxDomainHandle_t)&a_domain) record("push-foreign-domain", NULL);
    bool ascii = attr && attr->messageType == NVTX_MESSAGE_TYPE_ASCII;
    record("push", ascii ? attr->message.ascii : "(not ascii)");
    return 0;
}

static int NVTX_API range_pop(nvtxDomainHandle_t domain)
{
    record(domain == (nvtxDomainHandle_t)&a_domain ? "pop" : "pop-foreign-domain", NULL);
    return 0;
}

/* The one symbol nvtx3 looks for. */
int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table);
int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_table)
{
    const char *path = getenv("GB_NVTX_RECORD");
    if (!path || (record_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
        return 0;
    const NvtxExportTableCallbacks *callbacks = get_table(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned int n = 0;
    if (!callbacks || !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &n) ||
        n <= NVTX_CBID_CORE2_DomainCreateA)
        return 0;
    *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)domain_create;
    *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)range_push;
    *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)range_pop;
    return 1;
}
