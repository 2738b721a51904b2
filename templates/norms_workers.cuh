// The norms kernels' workers (layernorm.cuh, rmsnorm.cuh): persistent blocks that take
// rows from a queue, used by the backward kernels and by the persistent forward
// variants (NORMS_PERSIST = 1); and the column sums (dw, db) each backward block keeps
// in shared memory and adds to memory once.
//
// Workers. A worker takes a unit of rows from the queue, does it, and takes the next:
//   CL > 1:             the cluster, one row a unit (one row per block, TPR % 32 == 0);
//   CL == 1, TPR > 32:  one row group of the block, one row a unit; its warps meet at
//                       their own named barrier, so the block's rows never wait for
//                       each other and one row's loads overlap another's reduction;
//   CL == 1, TPR <= 32: a warp, 32/TPR rows a unit (shuffles only).
// The leader takes the next unit while the current one is loading (the atomic's
// result waits in a register until the row's data came) and hands it to the other
// threads at the row's reduction barrier (or by a shuffle; a cluster's, with the
// row's values in the mailbox, norms_common.cuh). The grid is sized to the
// blocks the SMs hold at once; blocks that start late find the queue empty and exit.
// The forward kernels are faster one row per block on most shapes (many small blocks
// resident per SM overlap their rows' reductions); workers win on long rows, where a
// block's columns, the same for every row, keep its slice of w and b in L1 (a whole
// 65536-column row's are 256 KiB), and the tuner chooses per shape.
//
// The queue is an in-out i32 tensor { next unit, blocks done } that starts at zero.
// Every block counts itself out when it is done; the last one sets both back to 0 for
// the next launch. The check compares the queue with the reference's untouched zeros,
// so a kernel that forgets the reset fails.
//
// Parameters. When the row fits in registers (NORMS_FITS) a thread's columns are the
// same for every row, so a backward worker loads its slots of w once, before the first
// row: no row reads it again. (The forward workers read w and b per row, from L1: held
// in registers as well, the 65536-column rows' blocks spilled.)
//
// Column sums. Each thread adds its elements' dy*xhat (and dy) for every row its
// worker does into its own words of dynamic shared memory (no atomics, no barriers);
// at the end the block adds its row groups' words in a fixed order and each 4 columns
// go to dw (db) with one red.global.add.v4.f32. The order in which blocks' adds land
// varies from run to run: dw and db are not bitwise deterministic. A block flushes
// N/CL columns, however many rows it did, so the atomics are a few per row of the
// whole launch.
#pragma once

#include "norms_common.cuh"

namespace norms
{

// Row groups of more than 32 threads per backward block (one named barrier each).
constexpr int WIDE_ROWS = 8;

// A block shape the workers can use (see block_ok): with clusters, one row per block
// in whole warps; without, up to WIDE_ROWS row groups of more than 32 threads.
template <int CL> __device__ __forceinline__ bool bwd_block_ok()
{
    if constexpr (CL > 1)
        return block_ok(1) && blockDim.x % 32 == 0 && blockDim.y == 1;
    else
        return block_ok(WIDE_ROWS);
}

// This thread's slots of a parameter row (w or b), loaded once when HELD (a worker
// keeps them across rows) and the row fits in registers; else each chunk loads its
// own (param() below).
template <bool HELD, int VPT, int CL>
__device__ __forceinline__ void load_params(uint4 (&r)[VPT], const norms_t *p, const Geo &G)
{
#pragma unroll
    for (int j = 0; j < VPT; ++j) {
        const int e0 = elem0<VPT, CL>(G, 0, j);
        r[j] = HELD && NORMS_FITS ? load_param(p, G, e0, nvalid(G, e0, true))
                                  : make_uint4(0, 0, 0, 0);
    }
}

// The parameter at slot j (first element e0, n valid) of the chunk being done.
template <bool HELD, int VPT>
__device__ __forceinline__ uint4 param(const uint4 (&r)[VPT], const norms_t *p, const Geo &G,
                                       int j, int e0, int n)
{
    return HELD && NORMS_FITS ? r[j] : load_param(p, G, e0, n);
}

// x and dy of chunk k of a backward row at offset off (zeros when !ok).
template <int VPT, int CL>
__device__ __forceinline__ void load_pair(uint4 (&xv)[VPT], uint4 (&gv)[VPT], const norms_t *x,
                                          const norms_t *dy, size_t off, const Geo &G, int k,
                                          bool ok)
{
    load_row<VPT, CL>(xv, x + off, G, k, ok);
    load_row<VPT, CL>(gv, dy + off, G, k, ok);
}

// The preloaded next row becomes the current one.
template <int VPT>
__device__ __forceinline__ void take_pair(uint4 (&xv)[VPT], uint4 (&gv)[VPT],
                                          const uint4 (&xn)[VPT], const uint4 (&gn)[VPT])
{
#pragma unroll
    for (int s = 0; s < VPT; ++s) {
        xv[s] = xn[s];
        gv[s] = gn[s];
    }
}

// ---- column sums ----------------------------------------------------------------------

// dw and db partial sums: red (no return value); the vector form needs sm_90.
__device__ __forceinline__ void red_add4(float *p, float4 v)
{
    asm volatile("red.global.add.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(v.x), "f"(v.y),
                 "f"(v.z), "f"(v.w)
                 : "memory");
}

// Adds 4 column sums to dst from element e on (those past the row are dropped).
__device__ __forceinline__ void add4(float *dst, float4 v, const Geo &G, int e)
{
    const int n = G.N - e;
    if (G.aligned && n >= 4) {
        red_add4(dst + e, v);
    } else {
        const float p[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; ++i)
            if (i < n) atomicAdd(dst + e + i, p[i]);
    }
}

// A slot's partial sums straight to dst (rows done in chunks, which have no room for
// column sums in shared memory).
__device__ __forceinline__ void add_slot(float *dst, const float (&p)[VEC], const Geo &G, int e0)
{
#pragma unroll
    for (int q = 0; q < VEC / 4; ++q)
        add4(dst, make_float4(p[4 * q], p[4 * q + 1], p[4 * q + 2], p[4 * q + 3]), G, e0 + 4 * q);
}

// NACC sums per element of each thread's slots, as float4s laid out
// [sum][slot][quad][thread of the block], so a warp touches consecutive 16-byte words.
extern __shared__ float4 norms_acc_smem[];

template <int VPT, int NACC> struct Acc {
    float4 *base; // this thread's first float4
    int stride;   // threads in the block

    static constexpr unsigned BYTES_PER_THREAD = NACC * VPT * VEC * 4;

    __device__ __forceinline__ float4 &at(int a, int s, int q) const
    {
        return base[((a * VPT + s) * (VEC / 4) + q) * stride];
    }

    __device__ __forceinline__ void zero() const
    {
#pragma unroll
        for (int a = 0; a < NACC; ++a)
#pragma unroll
            for (int s = 0; s < VPT; ++s)
#pragma unroll
                for (int q = 0; q < VEC / 4; ++q)
                    at(a, s, q) = make_float4(0.f, 0.f, 0.f, 0.f);
    }

    __device__ __forceinline__ void add(int a, int s, const float (&p)[VEC]) const
    {
#pragma unroll
        for (int q = 0; q < VEC / 4; ++q) {
            float4 r = at(a, s, q);
            r.x += p[4 * q];
            r.y += p[4 * q + 1];
            r.z += p[4 * q + 2];
            r.w += p[4 * q + 3];
            at(a, s, q) = r;
        }
    }
};

// This thread's column sums, or a null base when the launch gave too little dynamic
// shared memory for them (the kernel then refuses to run).
template <int VPT, int NACC> __device__ __forceinline__ Acc<VPT, NACC> make_acc()
{
    unsigned dyn;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    const int threads = blockDim.x * blockDim.y;
    Acc<VPT, NACC> A;
    A.stride = threads;
    A.base = dyn >= Acc<VPT, NACC>::BYTES_PER_THREAD * threads
                 ? norms_acc_smem + threadIdx.y * blockDim.x + threadIdx.x
                 : nullptr;
    return A;
}

// After every worker of the block is done: each float4 of column sums, added over the
// block's row groups (in group order), goes to dst[0] (sum 0) or dst[1] (sum 1). The
// block's threads share the work. any: some worker of the block did a row.
template <int VPT, int CL, int NACC>
__device__ __forceinline__ void flush(const Geo &G, float *dst0, float *dst1, bool any)
{
    if (!any) return;
    const int threads = G.tpr * G.gpb, quads = VEC / 4;
    const int items = NACC * VPT * quads * G.tpr;
    for (int it = G.g * G.tpr + G.t; it < items; it += threads) {
        const int t = it % G.tpr, word = it / G.tpr; // word = (a*VPT + s)*quads + q
        const int q = word % quads, s = (word / quads) % VPT, a = word / (quads * VPT);
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int g = 0; g < G.gpb; ++g) {
            const float4 w = norms_acc_smem[word * threads + g * G.tpr + t];
            v.x += w.x;
            v.y += w.y;
            v.z += w.z;
            v.w += w.w;
        }
        const int e = (((s * CL) + G.rank) * G.tpr + t) * VEC + 4 * q;
        add4(a == 0 ? dst0 : dst1, v, G, e);
    }
}

// ---- workers and the queue ------------------------------------------------------------

struct Worker {
    int *counter; // queue[0]
    int *slot;    // two shared ints for the next unit: the group's, or (clusters) the block's
    bool leader;  // takes the units
    int rpu;      // rows per unit
    int sub;      // this thread's row in the unit
    int held;     // the next unit, in the leader's register
};

template <int CL>
__device__ __forceinline__ Worker make_worker(const Geo &G, int *queue, int (*slots)[2])
{
    Worker W;
    W.counter = queue;
    W.held = 0;
    if (CL > 1 || G.tpr > 32) {
        W.slot = slots[CL > 1 ? 0 : G.g];
        W.leader = G.t == 0 && G.rank == 0;
        W.rpu = 1;
        W.sub = 0;
    } else {
        const int lane = (G.g * G.tpr + G.t) & 31;
        W.slot = nullptr;
        W.leader = lane == 0;
        W.rpu = 32 / G.tpr;
        W.sub = lane / G.tpr;
    }
    return W;
}

// The leader takes a unit into a register: the atomic's round trip overlaps the row's
// loads, which the leader issues next. publish() hands it on before the worker's
// barrier (cluster or row group); receive() reads it after that barrier (a warp
// worker's comes by shuffle).
__device__ __forceinline__ void take(Worker &W)
{
    if (W.leader) W.held = atomicAdd(W.counter, 1);
}

template <int CL> __device__ __forceinline__ void publish(const Worker &W, const Geo &G, int which)
{
    if ((CL > 1 || G.tpr > 32) && W.leader) W.slot[which] = W.held;
}

template <int CL> __device__ __forceinline__ int receive(const Worker &W, const Geo &G, int which)
{
    if constexpr (CL > 1)
        return ld_remote(W.slot + which, 0);
    else if (G.tpr > 32)
        return W.slot[which];
    else
        return __shfl_sync(0xffffffffu, W.held, 0);
}

template <int CL> __device__ __forceinline__ int first_unit(Worker &W, const Geo &G)
{
    take(W);
    publish<CL>(W, G, 0);
    if constexpr (CL > 1)
        cluster_sync();
    else if (G.tpr > 32)
        group_barrier(G);
    return receive<CL>(W, G, 0);
}

// After the last unit: count this block out; the last block resets the queue.
__device__ __forceinline__ void queue_done(int *queue)
{
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        __threadfence(); // this block's takes are ordered before its count
        const unsigned done = atomicAdd(reinterpret_cast<unsigned *>(queue + 1), 1u);
        if (done == gridDim.x - 1) {
            __threadfence();
            atomicExch(queue, 0);
            atomicExch(queue + 1, 0);
        }
    }
}

// A worker's row: it hands the worker's next unit on and trades the row's values
// with the cluster's other blocks. CL == 1: publish() between the row's loads and its
// first barrier, receive() after that barrier. CL > 1: lanes() trades the values
// through the mailbox (norms_common.cuh), the leader's next unit with them, instead of
// cluster barriers, which would wait for the last row's stores and drop w and b from
// L1. A row done by a block of its own passes OneRow (norms_common.cuh).
template <int CL> struct Handoff {
    static_assert(CL == 1 || NORMS_TPR >= 32, "a cluster worker's row is whole warps");
    const Worker &W;
    const Geo &G;
    Mailbox &mail;
    int par;        // this row's parity: its reduction memory and mailbox
    unsigned phase; // the phase of the mailbox barrier this row completes
    int &next;      // where the next unit goes
    __device__ __forceinline__ void publish() const
    {
        if constexpr (CL == 1) norms::publish<CL>(W, G, par ^ 1);
    }
    __device__ __forceinline__ void receive() const
    {
        if constexpr (CL == 1) next = norms::receive<CL>(W, G, par ^ 1);
    }
    // After receive() (or lanes()): this thread's row of the next unit.
    __device__ __forceinline__ int next_row() const
    {
        return next * W.rpu + W.sub;
    }
    // The leader asks L2 for the next unit's rows of a and b (b may be null); called
    // once the row's loads are in, when the unit's atomic has long returned.
    __device__ __forceinline__ void ahead(const norms_t *a, const norms_t *b, int M, int N) const
    {
        if constexpr (NORMS_AHEAD > 0) {
            if (W.leader) prefetch_rows(a, b, W.held * W.rpu, W.rpu, M, N);
        }
    }
    // Rank (t % CL)'s values to thread t (a cluster worker's row has at least 32
    // threads, so every rank has lanes).
    template <int NV, int CL_>
    __device__ __forceinline__ void lanes(const float (&v)[NV], float (&mine)[NV]) const
    {
        static_assert(NV <= 3, "a mailbox holds three values and the next unit");
        static_assert(CL_ == CL, "the worker's cluster");
        if (G.t == 0) {
            uint4 p = make_uint4(0u, 0u, 0u, (unsigned)W.held);
#pragma unroll
            for (int i = 0; i < NV; ++i)
                word(p, i) = __float_as_uint(v[i]);
            mail_post<CL>(mail, par, G.rank, p);
        }
        mail_wait(mail, par, phase);
        const uint4 q = mail.box[par][G.t % CL];
#pragma unroll
        for (int i = 0; i < NV; ++i)
            mine[i] = __uint_as_float(word(q, i));
        next = (int)mail.box[par][0].w; // the leader's (rank 0)
    }
};

// The workers' loop: row(r, par, handoff) does row r (past M: nothing to load or
// store, but every barrier), with par alternating between rows for its double-buffered
// reduction memory, and hands the next unit on through handoff. done() runs once the
// worker's rows are over and the cluster's blocks have met (the backward kernels add
// their column sums there), before the block counts itself out of the queue. next:
// the workers' two shared ints each (slots of make_worker).
template <int CL, class Row, class Done>
__device__ __forceinline__ void run_workers(const Geo &G, int *queue, int (*next)[2], int M, Row row,
                                            Done done)
{
    __shared__ Mailbox mail;
    if constexpr (CL > 1) mail_init(mail); // before first_unit's cluster barrier
    Worker W = make_worker<CL>(G, queue, next);
    const int units = (M + W.rpu - 1) / W.rpu;
    int u = first_unit<CL>(W, G);
    for (int it = 0; u < units; ++it) {
        const int par = it & 1;
        take(W);
        int u_next = 0;
        row(u * W.rpu + W.sub, par, Handoff<CL>{W, G, mail, par, (unsigned)(it >> 1) & 1u, u_next});
        u = u_next;
    }
    if constexpr (CL > 1) cluster_sync(); // every read of another block's memory is done
    done();
    queue_done(queue);
}

// The backward kernels' workers. Each row: partials(xv, gv, k, R, c) adds chunk k's
// NV row sums to c (and its column sums), the row's sums are added over the row's
// threads and the cluster, divided by N, and dx(xv, gv, k, R, c) writes chunk k's dx.
// at(row) gives a row's constants (R: at least off, its offset, and ok, whether it is
// in M). A row that fits (NORMS_FITS) is loaded with its constants during the
// previous row, right after that row's reduction, so a worker's next loads fly while
// it writes dx; a row in chunks loads each chunk in both passes. done(any) runs once
// the block's workers are done (any: some did a row): the column sums go out there.
template <int VPT, int CL, int NV, class Row, class At, class Partials, class Dx, class Done>
__device__ __forceinline__ void bwd_workers(const Geo &G, int *queue, int M, int N,
                                            const norms_t *x, const norms_t *dy,
                                            uint4 (&wr)[VPT], At at, Partials partials, Dx dx,
                                            Done done)
{
    __shared__ float buf[2][WIDE_ROWS * NV * 32];
    __shared__ int next[WIDE_ROWS][2];
    __shared__ int any;
    if (threadIdx.x == 0 && threadIdx.y == 0) any = 0;
    __syncthreads();
    Row R;
    uint4 xv[VPT], gv[VPT];
    bool preloaded = false;
    run_workers<CL>(
        G, queue, next, M,
        [&](int row, int par, const Handoff<CL> &h) {
            if (!preloaded) {
                R = at(row);
                if constexpr (NORMS_FITS) load_pair<VPT, CL>(xv, gv, x, dy, R.off, G, 0, R.ok);
            }
            launder<VPT>(wr); // w is converted per use, not kept as fp32 across rows
            float c[NV] = {};
            for (int k = 0; k < G.nchunks; ++k) {
                if (!NORMS_FITS) load_pair<VPT, CL>(xv, gv, x, dy, R.off, G, k, R.ok);
                partials(xv, gv, k, R, c);
            }
            h.ahead(x, dy, M, N);
            h.publish();
            row_sum<NV, CL, CL == 1>(c, G, buf[par], h);
            launder<VPT>(xv);
            launder<VPT>(gv);
            h.receive();
#pragma unroll
            for (int i = 0; i < NV; ++i)
                c[i] /= (float)N;
            if constexpr (NORMS_FITS) {
                const Row Rn = at(h.next_row());
                uint4 xn[VPT], gn[VPT];
                load_pair<VPT, CL>(xn, gn, x, dy, Rn.off, G, 0, Rn.ok);
                dx(xv, gv, 0, R, c);
                R = Rn;
                take_pair<VPT>(xv, gv, xn, gn);
                preloaded = true;
            } else {
                for (int k = 0; k < G.nchunks; ++k) {
                    load_pair<VPT, CL>(xv, gv, x, dy, R.off, G, k, R.ok);
                    dx(xv, gv, k, R, c);
                }
            }
            if (G.t == 0) any = 1; // every block of a cluster flushes its own columns
        },
        [&] {
            __syncthreads();
            done(any != 0);
        });
}

} // namespace norms
