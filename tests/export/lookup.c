/* Compiled by test_export as C99, C++17 and CUDA C++ (each with -Wall -Wextra
 * -Werror) against three headers the exporter wrote into one folder, then run: it
 * checks their lookups and macros and exits 0 when every check holds.
 *
 *   tk_tuned.h    kernel tk (keys M, N, dtype; parameters ALGO, BM, BN, SCALE)
 *   tkm_tuned.h   the same kernel, --prefix tkm --max-distance 1 --default ...
 *   gemm_tuned.h  kernel gemm (keys K, M, N; parameters BM, BN)
 *
 * Including all three in one translation unit, each twice, is part of the test. */
#include "gemm_tuned.h"
#include "tk_tuned.h"
#include "tkm_tuned.h"
#include "tk_tuned.h"
#include "gemm_tuned.h"

#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Counts the configurations the X macro lists and sums their ids. */
#define COUNT_TK(id, algo, bm, bn, scale) +1
#define SUM_TK(id, algo, bm, bn, scale)   +(id)
#define COUNT_GEMM(id, bm, bn)            +1

static void check_tk_macros(void)
{
    /* The device is untrusted text from the cache: quotes, a backslash, a trigraph,
     * a comment end and UTF-8 must come through as the same bytes. */
    static const char device[] = "GPU \"q\" \\ ?\?= */ \303\251/sm_90/2";
    CHECK(strcmp(TK_TUNED_DEVICE, device) == 0);
    CHECK(strcmp(TK_TUNED_KERNEL, "tk") == 0);
    CHECK(strlen(TK_TUNED_HASH) == 32);
    CHECK(TK_TUNED_COUNT == 4);
    CHECK(TK_TUNED_N_CONFIGS == 3);
    CHECK(0 TK_TUNED_CONFIGS(COUNT_TK) == 3);
    CHECK(0 TK_TUNED_CONFIGS(SUM_TK) == 0 + 1 + 2);
    CHECK(TK_TUNED_DEFAULT_ID == 0);
    /* Sorted by key: M, then N, then dtype (bytewise: "f16" < "f32"). */
    CHECK(strcmp(tk_tuned_entries()[0].shape.dtype, "f16") == 0);
    CHECK(tk_tuned_entries()[3].shape.M == 4096);
}

static void check_tk_lookups(void)
{
    int match = -1;
    const tk_tuned_config *c = tk_tuned_lookup_match(2048, 512, "f32", &match);
    CHECK(match == TK_TUNED_EXACT && c->BM == 128 && c->BN == 64 && c->SCALE == 0.5);
    CHECK(strcmp(c->ALGO, "s\"k\\\n*/?\?/") == 0 && c->median_ms == 0.3 && c->id == 2);
    CHECK(tk_tuned_lookup_exact(2048, 512, "f32") != NULL);
    CHECK(tk_tuned_lookup_exact(3000, 3000, "f32") == NULL);

    /* Nearest: 4096x4096 is a factor 1.37 away in each field; nothing else is close. */
    c = tk_tuned_lookup_match(3000, 3000, "f32", &match);
    CHECK(match == TK_TUNED_NEAREST && c->BM == 128 && c->BN == 128 && c->median_ms == 0.9);
    /* A three-way tie (distance 2 from 1024x1024, 2048x512 and 4096x4096): the first
     * in table order wins. */
    c = tk_tuned_lookup_match(2048, 2048, "f32", &match);
    CHECK(match == TK_TUNED_NEAREST && c->BM == 64 && c->BN == 64);
    /* Only entries with the same dtype are candidates. */
    c = tk_tuned_lookup_match(1000, 1000, "f16", &match);
    CHECK(match == TK_TUNED_NEAREST && c->median_ms == 0.05);
    /* A size <= 0 compares by difference: 1024 is nearer to 0 than 2048 or 4096. */
    c = tk_tuned_lookup_match(0, 1024, "f32", &match);
    CHECK(match == TK_TUNED_NEAREST && c->BM == 64);

    /* Default: no entry has this dtype; the configuration best for the most shapes. */
    c = tk_tuned_lookup_match(1024, 1024, "bf16", &match);
    CHECK(match == TK_TUNED_DEFAULT && c->id == 0 && c->BM == 128 && c->median_ms == 0.0);
    c = tk_tuned_lookup_match(1024, 1024, NULL, &match);
    CHECK(match == TK_TUNED_DEFAULT && c == tk_tuned_default());
    CHECK(tk_tuned_lookup(1024, 1024, "bf16") == tk_tuned_default());
}

static void check_tkm(void)
{
    int match = -1;
    /* --max-distance 1: 3000x3000 is 0.9 from 4096x4096, near enough... */
    const tkm_tuned_config *c = tkm_tuned_lookup_match(3000, 3000, "f32", &match);
    CHECK(match == TKM_TUNED_NEAREST && c->BM == 128);
    /* ...2048x2048 is 2 from everything: the default, given with --default, which is
     * no entry's configuration and so gets the next id. */
    c = tkm_tuned_lookup_match(2048, 2048, "f32", &match);
    CHECK(match == TKM_TUNED_DEFAULT && c->BM == 32 && c->BN == 32 && c->id == 3);
    CHECK(strcmp(c->ALGO, "plain") == 0 && c->SCALE == 2.0);
    CHECK(TKM_TUNED_N_CONFIGS == 4 && TKM_TUNED_DEFAULT_ID == 3);
    CHECK(strcmp(TKM_TUNED_HASH, TK_TUNED_HASH) != 0); /* the lookup differs */
}

static void check_gemm(void)
{
    int match = -1;
    const gemm_tuned_config *c = gemm_tuned_lookup_match(1024, 1024, 1024, &match);
    CHECK(match == GEMM_TUNED_EXACT && c->BM == 64 && c->median_ms == 0.125);
    /* Numeric keys only: any shape has a nearest entry. */
    c = gemm_tuned_lookup_match(1, 1, 1, &match);
    CHECK(match == GEMM_TUNED_NEAREST && c->BM == 64);
    c = gemm_tuned_lookup(8192, 8192, 8192);
    CHECK(c->BM == 128);
    CHECK(0 GEMM_TUNED_CONFIGS(COUNT_GEMM) == 2);
}

int main(void)
{
    check_tk_macros();
    check_tk_lookups();
    check_tkm();
    check_gemm();
    printf("%s %s %s\n", TK_TUNED_HASH, TKM_TUNED_HASH, GEMM_TUNED_HASH);
    return failures ? 1 : 0;
}
