// The element types of gemm_wgmma.cuh and of its reference gemm_tc_ref.cuh,
// as compile-time defines: GEMM_T, A's; GEMM_TB, B's (GEMM_T unless set);
// GEMM_OUT, C's (GEMM_T unless set). gemm_wgmma.cuh lists the pairs wgmma takes.
#pragma once

#ifndef GEMM_T
#error "compile with -DGEMM_T=<A's element type> (see templates/gemm_wgmma.cuh)"
#endif
#ifndef GEMM_TB
#define GEMM_TB GEMM_T
#endif
#ifndef GEMM_OUT
#define GEMM_OUT GEMM_T
#endif
