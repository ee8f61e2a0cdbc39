// AOSO-LogitBoost tree growth on an NVIDIA GPU: the hot stages of gpuboost's CUDA backend.
//
// Loaded by CuPy's RawModule (gpuboost/backends/cuda.py) with the name expressions listed in
// KERNEL_NAMES there; compiled in CI without a GPU by tests/test_kernels_compile.py (nvcc,
// sm_90, the same template instantiations, from kernels/instantiate.cu).
//
// Layouts (every array on the device, C order):
//   codes   (N, D) uint8 or uint16, value bins 0 .. n_codes-2, missing values n_codes-1
//   p, pc   (N, K) float64: probabilities and their accurate complements 1 - p
//   y       (N,) int32 labels; w (N,) float64 weights or a null pointer (every weight 1)
//   rows    (N,) int32: the row partition, one contiguous segment [start, stop) per node
//   node table, indexed by node id (the root is 0; the k-th split creates 2k+1 and 2k+2):
//     nstart, nstop (int32), npair (2 int32: r, s), nsum (3 float64: G, H, count),
//     nscale (2 float64: fixed-point scales of g and h, powers of two),
//     nclass (4K float64: G_k, Hd_k, max w|g_k|, max w p_k(1-p_k)), ngain (candidate split
//     gain, -inf: none), nsplit (3 int32: feature, bin, missing_left), nchild (2 int32: -1)
//   batch   node ids of one launch; ctrl[0] != 0 stops every kernel (the tree is complete).
//
// Determinism: every sum has a fixed order (per-thread strided loops, then fixed reduction
// trees), and histograms are integer (fixed-point) sums, so a model is bit-for-bit the same
// on every run. Histograms: a block adds a contiguous range of ceil(n / blocks) rows of the
// node into 32-bit shared counters, at most `chunk` rows at a time (HIST_CHUNK in cuda.py),
// adding the non-zero counters into 64-bit global ones after each chunk. Each row's (w g, w h)
// is rounded to an integer at the node's own scale: 2^bits units, bits = 30 - ceil(log2 R)
// with R = min(chunk, ceil(n / blocks)), for the node's largest possible |w g| and w h (so
// that a chunk's sums stay within 2^30, and converged nodes with tiny Hessians keep their
// resolution). Without the chunks, wide data (few blocks per node) kept 10 bits a row.

#define GB_STOP 0  // ctrl[GB_STOP] != 0: the tree is complete
#define GB_CHOSEN 1  // ctrl[GB_CHOSEN]: the node split in this step
#define GB_SMALLER 2  // ctrl[GB_SMALLER], ctrl[GB_LARGER]: its children by row count
#define GB_LARGER 3
#define GB_DIRECT 4  // ctrl[GB_DIRECT] != 0: the larger child's statistics need their own pass
#define GB_CTRL 5  // entries of ctrl

constexpr int STAT_THREADS = 256;
constexpr int HIST_THREADS = 256;
constexpr int PART_THREADS = 256;
constexpr int DERIVE_THREADS = 128;
constexpr double GAIN_NOISE = 8.0 * 2.220446049250313e-16;
constexpr double SPLIT_TIE = 1e-10;

// +infinity without <cmath> (NVRTC compiles this file without the standard headers)
__device__ __forceinline__ double gb_inf() { return __longlong_as_double(0x7ff0000000000000LL); }

// ---------------------------------------------------------------------------------------------
// per-row statistics of the pair (r, s): eqs (25), (26) of paper 000

__device__ __forceinline__ void pair_stat(long long i, int r, int s, int K, const double* __restrict__ p,
                                          const double* __restrict__ pc, const int* __restrict__ y,
                                          double& g, double& h) {
    const double pr = p[i * K + r], ps = p[i * K + s];
    const int yi = y[i];
    const double gr = (yi == r) ? -pc[i * K + r] : pr;
    const double gs = (yi == s) ? -pc[i * K + s] : ps;
    g = gr - gs;
    h = pr * pc[i * K + r] + ps * pc[i * K + s] + 2.0 * pr * ps;
}

// a power of two t such that m * t <= 2^bits (m >= 0); 1 for m = 0
__device__ __forceinline__ double fixed_scale(double m, int bits) {
    if (!(m > 0.0)) return 1.0;
    int e;
    frexp(m, &e);  // m < 2^e
    int shift = bits - e;
    if (shift > 1000) shift = 1000;
    return ldexp(1.0, shift);
}

// ---------------------------------------------------------------------------------------------
// tree bookkeeping

// The root holds rows 0 .. n_rows - 1, or with `sample` (subsample's increasing row ids) its
// first n_rows entries.
extern "C" __global__ void reset_tree(int n_rows, const int* __restrict__ sample, int max_nodes, int* rows,
                                      int* nstart, int* nstop, int* nchild, double* ngain, double* nfinal,
                                      int* nsplit, int* ndepth, int* ctrl) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = tid; j < n_rows; j += gridDim.x * blockDim.x) rows[j] = sample ? sample[j] : j;
    if (tid < max_nodes) {
        nstart[tid] = 0;
        nstop[tid] = tid == 0 ? n_rows : 0;
        nchild[2 * tid] = -1;
        nchild[2 * tid + 1] = -1;
        ngain[tid] = -gb_inf();
        nfinal[tid] = 0.0;
        nsplit[3 * tid] = -1;
        nsplit[3 * tid + 1] = -1;
        nsplit[3 * tid + 2] = 0;
        ndepth[tid] = 0;
    }
    if (tid == 0) {
        ctrl[GB_STOP] = 0;
        ctrl[GB_CHOSEN] = -1;
        ctrl[GB_SMALLER] = -1;
        ctrl[GB_LARGER] = -1;
        ctrl[GB_DIRECT] = 1;
    }
}

// The open leaf with the largest positive gain (ties: the lowest node id) is split in step
// `step`: its children become nodes 2 step + 1 and 2 step + 2, one level deeper (ndepth). No
// such leaf: the tree is complete. One warp.
extern "C" __global__ void pick_leaf(int step, double* ngain, double* nfinal, int* nchild, int* ndepth, int* ctrl) {
    if (blockIdx.x != 0 || threadIdx.x >= 32 || ctrl[GB_STOP]) return;
    const int lane = threadIdx.x;
    const int n_nodes = 2 * step + 1;
    int best = -1;  // this lane's nodes lane, lane + 32, ...: the first largest positive gain
    double top = 0.0;
    for (int node = lane; node < n_nodes; node += 32) {
        const double g = ngain[node];
        if (g > 0.0 && (best < 0 || g > top)) {
            best = node;
            top = g;
        }
    }
    for (int off = 16; off > 0; off >>= 1) {  // the largest gain; among equal gains the lowest node
        const double g = __shfl_xor_sync(0xffffffffu, top, off);
        const int other = __shfl_xor_sync(0xffffffffu, best, off);
        if (other >= 0 && (best < 0 || g > top || (g == top && other < best))) {
            best = other;
            top = g;
        }
    }
    if (lane != 0) return;
    if (best < 0) {
        ctrl[GB_STOP] = 1;
        ctrl[GB_CHOSEN] = -1;
        return;
    }
    ctrl[GB_CHOSEN] = best;
    nfinal[best] = ngain[best];
    ngain[best] = -gb_inf();
    nchild[2 * best] = n_nodes;
    nchild[2 * best + 1] = n_nodes + 1;
    ndepth[n_nodes] = ndepth[n_nodes + 1] = ndepth[best] + 1;
}

// ---------------------------------------------------------------------------------------------
// class statistics of a batch of nodes (for the pair of eq 33 and the node sums)
//
// mode 0: per class k, sum w g_k, sum w p_k (1 - p_k), max w |g_k|, max w p_k (1 - p_k)
// mode 1: per class k, C_rk = sum w p_r p_k (r = npair[2 node])
// A warp reads 32 / KP rows at a time, lane k % KP of each row's group of KP lanes handling
// class k (KP: the next power of two >= K, at most 32; K > 32 takes KP = 32 and up to
// CLASSES_PER_LANE classes per lane). Sums are reduced in a fixed order (lane shuffles, then
// warps in order), so they are deterministic.
// partials[((slot * gridDim.x) + block) * 4K + stat * K + k]; finished by finish_stats.

constexpr int CLASSES_PER_LANE = 4;  // K <= 128
constexpr int MERGED_MAX_K = 16;     // mode 2: K <= 16
constexpr int STAT_WARPS = STAT_THREADS / 32;

// mode 2 (K <= 16): mode 0's statistics and every C_jk = sum w p_j p_k in one pass
// (partials: 4K + K*K per block, S[j][k] after the 4K)
//
// A node of n rows uses the first stat_active(n) blocks of the launch (at least STAT_MIN_ROWS
// rows per block, so that small nodes leave few partials to add); the other blocks only count
// themselves for the last-block test. Each warp reads STAT_UNROLL groups of rows before it
// adds any, to keep several loads in flight. CPL: classes per lane (1 for K <= 32, else 4).
constexpr int STAT_MIN_ROWS = 1024;
constexpr int STAT_UNROLL = 4;

__device__ __forceinline__ int stat_active(int n, int blocks) {
    const int want = (n + STAT_MIN_ROWS - 1) / STAT_MIN_ROWS;
    return want < 1 ? 1 : (want < blocks ? want : blocks);
}

__device__ void finish_block(int slot, int node, int mode, const double* partials, int n_partials, int K, int stride,
                             int rule_eq32, int hist_blocks, int hist_chunk, const int* nstart, const int* nstop, int* npair,
                             double* nclass, double* nS, double* nsum, double* nscale);

template <int CPL>
__global__ void __launch_bounds__(STAT_THREADS)
class_stats(const int* __restrict__ batch, const int* __restrict__ ctrl, int mode, const int* __restrict__ rows,
            const int* __restrict__ nstart, const int* __restrict__ nstop, int* __restrict__ npair,
            const double* __restrict__ p, const double* __restrict__ pc, const int* __restrict__ y,
            const double* __restrict__ w, int K, int KP, int stride, double* __restrict__ partials,
            const int* __restrict__ gate, int rule_eq32, int hist_blocks, int hist_chunk, double* __restrict__ nclass,
            double* __restrict__ nS, double* __restrict__ nsum, double* __restrict__ nscale,
            int* __restrict__ counters) {
    if (ctrl[GB_STOP] || (gate && *gate == 0)) return;
    constexpr int RED = (4 * 32 * CPL > 4 * MERGED_MAX_K + MERGED_MAX_K * MERGED_MAX_K)
                            ? 4 * 32 * CPL : 4 * MERGED_MAX_K + MERGED_MAX_K * MERGED_MAX_K;
    __shared__ double red[STAT_WARPS][RED];
    const int slot = blockIdx.y;
    const int node = batch[slot];
    const int start = nstart[node], stop = nstop[node];
    const int active = stat_active(stop - start, gridDim.x);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int per_warp = 32 / KP;           // rows a warp reads at a time
    const int sub = lane / KP, kl = lane % KP;
    const int group_lane = lane - kl;       // first lane of this row's group
    const int r = npair[2 * node];
    // mode 2 runs with one class per lane (K <= 8) or two (8 < K <= 16, KP = 8: lane kl holds
    // classes kl and kl + 8, so a warp reads four rows at a time instead of two)
    const bool merged = CPL <= 2 && mode == 2;
    constexpr int SW = CPL <= 2 ? CPL : 1;         // S's rows: classes per lane in mode 2
    constexpr int SQ = CPL <= 2 ? MERGED_MAX_K : 1;  // S's columns
    double a[CPL], b[CPL], c[CPL], d[CPL];
    double S[SW][SQ];
#pragma unroll
    for (int t = 0; t < CPL; ++t) a[t] = b[t] = c[t] = d[t] = 0.0;
#pragma unroll
    for (int t = 0; t < SW; ++t)
#pragma unroll
        for (int q = 0; q < SQ; ++q) S[t][q] = 0.0;
    if (blockIdx.x < active) {
        const int step = active * STAT_WARPS * per_warp;  // rows between a warp's consecutive groups
        constexpr int UNROLL = CPL == 2 ? 2 : STAT_UNROLL;  // CPL 2: fewer registers for S's 32 sums
        for (int jb = start + (blockIdx.x * STAT_WARPS + warp) * per_warp; jb < stop; jb += UNROLL * step) {
            // warp-uniform loop; the loads of UNROLL groups first, then the sums
            long long iu[UNROLL];
            double wu[UNROLL];
            int yu[UNROLL];
            double pu[UNROLL][CPL], pcu[UNROLL][CPL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const int j = jb + u * step + sub;
                iu[u] = j < stop ? __ldg(rows + j) : -1;
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const long long i = iu[u] < 0 ? 0 : iu[u];
                wu[u] = iu[u] < 0 ? 0.0 : (w ? __ldg(w + i) : 1.0);
                yu[u] = __ldg(y + i);
#pragma unroll
                for (int t = 0; t < CPL; ++t) {
                    const int k = kl + KP * t;
                    pu[u][t] = k < K ? __ldg(p + i * K + k) : 0.0;
                    pcu[u][t] = (k < K && mode != 1) ? __ldg(pc + i * K + k) : 0.0;
                }
            }
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) {
                const double wi = wu[u];
                if (mode == 1) {
                    // w p_r: from r's lane (one class per lane), else from memory
                    double pr;
                    if (CPL == 1) pr = wi * __shfl_sync(0xffffffffu, pu[u][0], group_lane + r);
                    else pr = wi * __ldg(p + (iu[u] < 0 ? 0 : iu[u]) * K + r);
#pragma unroll
                    for (int t = 0; t < CPL; ++t) {
                        const int k = kl + KP * t;
                        if (k < K) a[t] += pr * pu[u][t];
                    }
                    continue;
                }
#pragma unroll
                for (int t = 0; t < CPL; ++t) {
                    const int k = kl + KP * t;
                    if (k < K) {
                        const double pk = pu[u][t];
                        const double pck = pcu[u][t];
                        const double g = wi * ((yu[u] == k) ? -pck : pk);
                        const double h = wi * (pk * pck);
                        a[t] += g;
                        b[t] += h;
                        c[t] = fmax(c[t], fabs(g));
                        d[t] = fmax(d[t], h);
                    }
                }
                if (merged) {  // K <= 16: S[t][q] += (w p_q) p_k, k = kl + KP t, the CPU backends' order
                    double wp[SW];  // w p_k of this lane's classes, for the lanes that need p_q
#pragma unroll
                    for (int t = 0; t < SW; ++t) wp[t] = wi * pu[u][t];
#pragma unroll
                    for (int q = 0; q < SQ; ++q) {
                        if (q < K) {  // warp-uniform: class q is lane (q mod KP)'s class number q / KP
                            const double wpq = __shfl_sync(0xffffffffu, wp[SW == 2 ? q / 8 : 0],
                                                           group_lane + (SW == 2 ? q % 8 : q));
#pragma unroll
                            for (int t = 0; t < SW; ++t) S[t][q] += wpq * pu[u][t];
                        }
                    }
                }
            }
        }
        // the rows of one warp: lanes with the same class, in a fixed pattern
        for (int off = KP; off < 32; off <<= 1) {
#pragma unroll
            for (int t = 0; t < CPL; ++t) {
                a[t] += __shfl_xor_sync(0xffffffffu, a[t], off);
                b[t] += __shfl_xor_sync(0xffffffffu, b[t], off);
                c[t] = fmax(c[t], __shfl_xor_sync(0xffffffffu, c[t], off));
                d[t] = fmax(d[t], __shfl_xor_sync(0xffffffffu, d[t], off));
            }
            if (merged) {
#pragma unroll
                for (int t = 0; t < SW; ++t)
#pragma unroll
                    for (int q = 0; q < SQ; ++q)
                        if (q < K) S[t][q] += __shfl_xor_sync(0xffffffffu, S[t][q], off);
            }
        }
    }
    const int n_stats = mode == 1 ? K : (mode == 0 ? 4 * K : 4 * K + K * K);
    if (blockIdx.x < active) {
        if (sub == 0) {
#pragma unroll
            for (int t = 0; t < CPL; ++t) {
                const int k = kl + KP * t;
                if (k < K) {
                    red[warp][k] = a[t];
                    if (mode != 1) {
                        red[warp][K + k] = b[t];
                        red[warp][2 * K + k] = c[t];
                        red[warp][3 * K + k] = d[t];
                    }
                }
            }
            if (merged) {
#pragma unroll
                for (int t = 0; t < SW; ++t) {
                    const int k = kl + KP * t;
#pragma unroll
                    for (int q = 0; q < SQ; ++q)
                        if (q < K && k < K) red[warp][4 * K + q * K + k] = S[t][q];
                }
            }
        }
        __syncthreads();
        double* out = partials + ((long long)slot * gridDim.x + blockIdx.x) * stride;
        for (int e = threadIdx.x; e < n_stats; e += blockDim.x) {
            const bool is_max = mode != 1 && e >= 2 * K && e < 4 * K;
            double v = red[0][e];
            for (int q = 1; q < STAT_WARPS; ++q) v = is_max ? fmax(v, red[q][e]) : v + red[q][e];
            out[e] = v;
        }
    }
    // the last block of the node to finish sums the active blocks' partials (in a fixed order)
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(counters + slot, 1) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    finish_block(slot, node, mode, partials + (long long)slot * gridDim.x * stride, active, K, stride, rule_eq32,
                 hist_blocks, hist_chunk, nstart, nstop, npair, nclass, nS, nsum, nscale);
    if (threadIdx.x == 0) counters[slot] = 0;  // ready for the next launch
}

// the pair of a node from its class sums (cls: G_k, Hd_k, max w|g_k|, max w h_k) and the cross
// sums C[k] = C_rk of its r (already chosen, in npair), then its sums under (r, s) and the
// fixed-point scales of its histogram (hist_blocks: the histogram launch's blocks per node;
// hist_chunk: the most rows a block adds before it flushes its shared counters)
__device__ void finalize_node(int node, const double* cls, const double* C, int K, int rule_eq32, int hist_blocks,
                              int hist_chunk,
                              const int* nstart, const int* nstop, int* npair, double* nsum, double* nscale) {
    const int r = npair[2 * node];
    int s = -1;
    double best = -gb_inf();
    for (int k = 0; k < K; ++k) {
        if (k == r) continue;
        double score;
        if (rule_eq32) {
            score = cls[k];
        } else {
            double den = cls[K + r] + cls[K + k] + 2.0 * C[k];
            if (den == 0.0) den = 1.0;
            const double diff = cls[r] - cls[k];
            score = diff * diff / den;
        }
        if (s < 0 || score > best) {
            best = score;
            s = k;
        }
    }
    npair[2 * node + 1] = s;
    nsum[3 * node] = cls[r] - cls[s];
    nsum[3 * node + 1] = cls[K + r] + cls[K + s] + 2.0 * C[s];
    nsum[3 * node + 2] = (double)(nstop[node] - nstart[node]);
    // |w g| <= w |g_r| + w |g_s|; w h = w (h_r + h_s + 2 p_r p_s) <= 2 (w h_r + w h_s), since
    // p_r p_s <= min(p_r (1 - p_r), p_s (1 - p_s))
    const int n = nstop[node] - nstart[node];
    const int per_block = max(1, min(hist_chunk, (n + hist_blocks - 1) / hist_blocks));
    int log_rows = 0;
    while ((1 << log_rows) < per_block) ++log_rows;
    const int bits = 30 - log_rows;
    nscale[2 * node] = fixed_scale(cls[2 * K + r] + cls[2 * K + s], bits);
    nscale[2 * node + 1] = fixed_scale(2.0 * (cls[3 * K + r] + cls[3 * K + s]), bits);
}

__device__ __forceinline__ int argmax_neg_first(const double* G, int K) {
    int r = 0;
    for (int k = 1; k < K; ++k)
        if (-G[k] > -G[r]) r = k;
    return r;
}

// The class statistics of a node from the partials of class_stats's blocks (run by its last
// block: a warp per statistic, its lanes summing the partials in a fixed pattern). mode 0: the
// class sums, and r = argmax_k (-G_k). mode 1 (after mode 0), or mode 2 alone: s by eq (33)
// (or eq (32) when rule_eq32), the node sums under (r, s) and the fixed-point scales of its
// histogram. Mode 2 also keeps every C_jk of the node in nS (K x K), from which a sibling's
// can be derived.
__device__ void finish_block(int slot, int node, int mode, const double* part, int n_partials, int K, int stride,
                             int rule_eq32, int hist_blocks, int hist_chunk, const int* nstart, const int* nstop, int* npair,
                             double* nclass, double* nS, double* nsum, double* nscale) {
    double* cls = nclass + (long long)node * 4 * K;
    __shared__ double sh_C[MERGED_MAX_K * MERGED_MAX_K > 32 * CLASSES_PER_LANE ? MERGED_MAX_K * MERGED_MAX_K
                                                                                : 32 * CLASSES_PER_LANE];
    // eight lanes per statistic (32 statistics at a time), each summing every eighth partial,
    // then a fixed shuffle tree within the eight
    const int g = threadIdx.x & 7, group = threadIdx.x >> 3, groups = blockDim.x >> 3;
    const int n_stats = mode == 1 ? K : (mode == 0 ? 4 * K : 4 * K + K * K);
    for (int e0 = 0; e0 < n_stats; e0 += groups) {
        const int e = e0 + group;
        const bool on = e < n_stats;
        const bool is_max = mode != 1 && e >= 2 * K && e < 4 * K;
        double v = 0.0;
        if (on) {
            for (int q = g; q < n_partials; q += 8) {
                const double x = __ldcg(part + (long long)q * stride + e);  // other blocks' writes: skip L1
                v = is_max ? fmax(v, x) : v + x;
            }
        }
        for (int off = 4; off > 0; off >>= 1) {
            const double u = __shfl_xor_sync(0xffffffffu, v, off);
            v = is_max ? fmax(v, u) : v + u;
        }
        if (on && g == 0) {
            if (mode == 1) {
                sh_C[e] = v;
            } else if (e < 4 * K) {
                cls[e] = v;
            } else {  // mode 2: C_jk at j K + k
                sh_C[e - 4 * K] = v;
                nS[(long long)node * K * K + e - 4 * K] = v;
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        bool done = false;
        if (mode != 1) {
            npair[2 * node] = argmax_neg_first(cls, K);
            done = mode == 0;
        }
        if (!done) {
            const double* C = mode == 2 ? sh_C + npair[2 * node] * K : sh_C;
            finalize_node(node, cls, C, K, rule_eq32, hist_blocks, hist_chunk, nstart, nstop, npair, nsum, nscale);
        }
    }
}

// The larger child's class statistics as the parent's minus the smaller child's (K <= 16):
// sums subtract, maxima take the parent's (a bound). The subtraction is kept only where it is
// accurate and the bound is tight enough: every difference's rounding error (2^-52 of the two
// terms) must stay under 2^-30 of the child's largest statistic of its kind, and the child
// must hold at least 2^-10 of the parent's Hessian mass of its pair (else its histogram scale
// would be too coarse). Otherwise ctrl[GB_DIRECT] asks for the child's own pass, which then
// overwrites what this wrote. One block; the pair and the node sums by its first thread.
extern "C" __global__ void __launch_bounds__(DERIVE_THREADS)
derive_larger(int* __restrict__ ctrl, int K, int rule_eq32, int hist_blocks, int hist_chunk, const int* __restrict__ nstart,
              const int* __restrict__ nstop, int* __restrict__ npair, double* __restrict__ nclass,
              double* __restrict__ nS, double* __restrict__ nsum, double* __restrict__ nscale) {
    if (blockIdx.x != 0 || ctrl[GB_STOP]) return;
    const int parent = ctrl[GB_CHOSEN], small = ctrl[GB_SMALLER], large = ctrl[GB_LARGER];
    const double* cp = nclass + (long long)parent * 4 * K;
    const double* cs = nclass + (long long)small * 4 * K;
    double* cl = nclass + (long long)large * 4 * K;
    const double* Sp = nS + (long long)parent * K * K;
    const double* Ss = nS + (long long)small * K * K;
    double* Sl = nS + (long long)large * K * K;
    const double eps = 2.220446049250313e-16, accurate = 1.0 / 1073741824.0, thin = 1.0 / 1024.0;
    const int t = threadIdx.x;
    if (t < K) {
        cl[t] = cp[t] - cs[t];
        cl[K + t] = cp[K + t] - cs[K + t];
        cl[2 * K + t] = cp[2 * K + t];
        cl[3 * K + t] = cp[3 * K + t];
    }
    __syncthreads();  // cl, written to global memory above, is read by every thread below
    double scale_g = 0.0, scale_h = 0.0;
    for (int k = 0; k < K; ++k) {
        scale_g = fmax(scale_g, fabs(cl[k]));
        scale_h = fmax(scale_h, cl[K + k]);
    }
    int direct = 0;
    if (t < K) {
        if (eps * (fabs(cp[t]) + fabs(cs[t])) > accurate * scale_g) direct = 1;
        if (eps * (cp[K + t] + cs[K + t]) > accurate * scale_h) direct = 1;
    }
    const int r = argmax_neg_first(cl, K);
    for (int e = t; e < K * K; e += blockDim.x) {
        Sl[e] = Sp[e] - Ss[e];
        if (e / K == r && eps * (Sp[e] + Ss[e]) > accurate * (cl[K + r] + cl[K + e % K])) direct = 1;
    }
    direct = __syncthreads_or(direct);
    if (t == 0) {
        npair[2 * large] = r;
        finalize_node(large, cl, Sl + r * K, K, rule_eq32, hist_blocks, hist_chunk, nstart, nstop, npair, nsum, nscale);
        const int s = npair[2 * large + 1];
        if (cl[K + r] + cl[K + s] < thin * (cp[K + r] + cp[K + s])) direct = 1;
        ctrl[GB_DIRECT] = direct;
    }
}

// ---------------------------------------------------------------------------------------------
// histograms, in a compact layout: feature f owns the cells feat_off[f] .. feat_off[f+1]-1
// (its value bins, then its missing-value bin), three int64 channels each (w g, w h, count):
// hist[slot][cell][channel]. Features are processed in groups whose cells fit in shared
// memory (group_first: the first feature of each group, and D at the end); blockIdx.y is the
// group. A warp takes 32 rows at a time, a row per lane; a feature with at most SMALL_WIDTH
// cells (binary features: 3) is summed with warp reductions, one shared atomic per cell and
// warp, instead of 32 colliding atomics.

constexpr int SMALL_WIDTH = 6;

template <typename Code>
__global__ void __launch_bounds__(HIST_THREADS)
histogram(const int* __restrict__ batch, const int* __restrict__ ctrl, const int* __restrict__ rows,
          const int* __restrict__ nstart, const int* __restrict__ nstop, const int* __restrict__ npair,
          const double* __restrict__ nscale, const Code* __restrict__ codes, int D,
          const int* __restrict__ feat_off, const int* __restrict__ group_first, int total_cells,
          const double* __restrict__ p, const double* __restrict__ pc, const int* __restrict__ y,
          const double* __restrict__ w, int K, int chunk, long long* __restrict__ hist) {
    if (ctrl[GB_STOP]) return;
    extern __shared__ int sh[];  // [cells of the group][3], then the group's feature offsets
    const int slot = blockIdx.z;
    const int node = batch[slot];
    const int start = nstart[node], stop = nstop[node];
    const int f0 = group_first[blockIdx.y], f1 = group_first[blockIdx.y + 1];
    const int cell0 = feat_off[f0];
    const int cells = (feat_off[f1] - cell0) * 3;
    int* off = sh + cells;  // off[f - f0] = first cell of feature f, relative to the group
    for (int f = f0 + threadIdx.x; f <= f1; f += blockDim.x) off[f - f0] = feat_off[f] - cell0;
    for (int c = threadIdx.x; c < cells; c += blockDim.x) sh[c] = 0;
    const int r = npair[2 * node], s = npair[2 * node + 1];
    const double sg = nscale[2 * node], shs = nscale[2 * node + 1];
    long long* out = hist + ((long long)slot * total_cells + cell0) * 3;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    const int per_block = (stop - start + gridDim.x - 1) / gridDim.x;
    const int c0 = start + blockIdx.x * per_block, c1 = min(c0 + per_block, stop);
    if (c0 >= c1) return;  // block-uniform: this block has no rows of the node
    // at most `chunk` rows into the shared counters, then into the global ones (finalize_node's
    // scale lets that many rows, not the block's R, fill 2^30)
    for (int k0 = c0, k1; k0 < c1; k0 = k1) {
        k1 = c1 - k0 > chunk ? k0 + chunk : c1;  // (k0 + chunk may pass INT_MAX)
        for (int j0 = k0 + warp * 32; j0 < k1; j0 += HIST_THREADS) {  // warp-uniform
            const int j = j0 + lane;
            const bool valid = j < k1;
            int qg = 0, qh = 0;
            long long i = 0;
            if (valid) {
                i = rows[j];
                double g, h;
                pair_stat(i, r, s, K, p, pc, y, g, h);
                if (w) {
                    g *= w[i];
                    h *= w[i];
                }
                qg = __double2int_rn(g * sg);
                qh = __double2int_rn(h * shs);
            }
            const Code* row = codes + i * D;
            // the warp's totals, shared by every small feature: bin 0 gets what the others do not
            const int all_g = __reduce_add_sync(0xffffffffu, qg);
            const int all_h = __reduce_add_sync(0xffffffffu, qh);
            const int all_c = __popc(__ballot_sync(0xffffffffu, valid));
            for (int f = f0; f < f1; ++f) {
                const int base = off[f - f0];
                const int width = off[f - f0 + 1] - base;
                const int code = valid ? (int)row[f] : -1;
                int* cell = sh + base * 3;
                if (width <= SMALL_WIDTH) {
                    int rest_g = 0, rest_h = 0, rest_c = 0;
                    for (int b = 1; b < width; ++b) {
                        const bool here = code == b;
                        const int rc = __popc(__ballot_sync(0xffffffffu, here));
                        if (rc == 0) continue;  // warp-uniform
                        const int rg = __reduce_add_sync(0xffffffffu, here ? qg : 0);
                        const int rh = __reduce_add_sync(0xffffffffu, here ? qh : 0);
                        rest_g += rg;
                        rest_h += rh;
                        rest_c += rc;
                        if (lane == 0) {
                            if (rg) atomicAdd(cell + 3 * b, rg);
                            if (rh) atomicAdd(cell + 3 * b + 1, rh);
                            atomicAdd(cell + 3 * b + 2, rc);
                        }
                    }
                    if (lane == 0 && all_c > rest_c) {
                        if (all_g != rest_g) atomicAdd(cell, all_g - rest_g);
                        if (all_h != rest_h) atomicAdd(cell + 1, all_h - rest_h);
                        atomicAdd(cell + 2, all_c - rest_c);
                    }
                } else if (valid) {
                    int* bin = cell + 3 * code;
                    if (qg) atomicAdd(bin, qg);
                    if (qh) atomicAdd(bin + 1, qh);
                    atomicAdd(bin + 2, 1);
                }
            }
        }
        __syncthreads();
        for (int c = threadIdx.x; c < cells; c += blockDim.x) {
            const int v = sh[c];
            if (v) {
                atomicAdd(reinterpret_cast<unsigned long long*>(out + c), (unsigned long long)(long long)v);
                sh[c] = 0;
            }
        }
        __syncthreads();  // (the next chunk's rows add to the zeroed counters)
    }
}

// ---------------------------------------------------------------------------------------------
// best split of each node of a batch, from its fixed-point histogram (eq 30)
//
// Candidates are ordered (feature, bin, missing right before missing left); gains within
// SPLIT_TIE (relative) of the largest tie and the first wins: the CPU backends' rule. One
// launch: a warp per feature finds the feature's largest gain, and the node's last block
// picks the top gain, then the first candidate within the tie, and zeroes the histogram slot
// for the next batch. Bins are scanned 32 at a time with warp scans of the exact integer sums.

__device__ __forceinline__ double hguard(double H) { return H == 0.0 ? 1.0 : H; }

__device__ __forceinline__ double split_gain(double GL, double HL, double GR, double HR, double parent) {
    const double left = GL * GL / (2.0 * hguard(HL));
    const double right = GR * GR / (2.0 * hguard(HR));
    const double gain = left + right - parent;
    return gain > GAIN_NOISE * (left + right + parent) ? gain : 0.0;
}

__device__ __forceinline__ long long warp_sum(long long v) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    return v;
}

__device__ __forceinline__ long long warp_inclusive_scan(long long v, int lane) {
    for (int off = 1; off < 32; off <<= 1) {
        const long long u = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v += u;
    }
    return v;
}

struct FeatureScan {
    long long tg, th, tc, mg, mh, mc;  // value-bin totals and the missing-value bin
};

__device__ __forceinline__ FeatureScan feature_totals(const long long* __restrict__ hf, int n_codes, int lane) {
    const int nb = n_codes - 1;
    long long g = 0, h = 0, c = 0;
    for (int b = lane; b < nb; b += 32) {
        g += hf[3 * b];
        h += hf[3 * b + 1];
        c += hf[3 * b + 2];
    }
    FeatureScan t;
    t.tg = warp_sum(g);
    t.th = warp_sum(h);
    t.tc = warp_sum(c);
    t.mg = hf[3 * nb];
    t.mh = hf[3 * nb + 1];
    t.mc = hf[3 * nb + 2];
    return t;
}

// what a child needs: min_samples_leaf rows and a Hessian sum (decoded) of min_child_weight
struct ChildLimits {
    int min_samples_leaf;
    double min_child_weight;  // 0: no limit
};

__device__ __forceinline__ bool children_allowed(const ChildLimits& lim, long long CL, long long CR, double HL,
                                                 double HR) {
    return CL >= lim.min_samples_leaf && CR >= lim.min_samples_leaf &&
           (lim.min_child_weight <= 0.0 || (HL >= lim.min_child_weight && HR >= lim.min_child_weight));
}

// the gains of bin b's two candidates, given the inclusive prefix sums (lg, lh, lc) of bins 0..b
__device__ __forceinline__ void candidate_gains(const FeatureScan& t, long long lg, long long lh, long long lc,
                                                double sg, double shs, const ChildLimits& lim, double parent,
                                                double& gain0, double& gain1) {
    gain0 = -gb_inf();
    gain1 = -gb_inf();
    {  // missing values right
        const double HL = (double)lh / shs, HR = (double)(t.th - lh + t.mh) / shs;
        if (children_allowed(lim, lc, t.tc - lc + t.mc, HL, HR))
            gain0 = split_gain((double)lg / sg, HL, (double)(t.tg - lg + t.mg) / sg, HR, parent);
    }
    if (t.mc > 0) {  // missing values left
        const double HL = (double)(lh + t.mh) / shs, HR = (double)(t.th - lh) / shs;
        if (children_allowed(lim, lc + t.mc, t.tc - lc, HL, HR))
            gain1 = split_gain((double)(lg + t.mg) / sg, HL, (double)(t.tg - lg) / sg, HR, parent);
    }
}

// parent term of eq (30) from the node's totals (every feature's bins hold every row once)
__device__ __forceinline__ double parent_term(const FeatureScan& t, double sg, double shs) {
    const double G = (double)(t.tg + t.mg) / sg, H = (double)(t.th + t.mh) / shs;
    return G * G / (2.0 * hguard(H));
}

constexpr int SPLIT_WARPS = 8;

__device__ void pick_split(int slot, int node, long long* hist, int D, const int* feat_off, int total_cells,
                           const double* nscale, const ChildLimits& lim, const double* fbest, double* ngain,
                           int* nsplit);

// One warp per feature: its largest gain, into fbest. The last block of the node to finish
// picks the node's split (pick_split) and zeroes the histogram slot. A feature that `allowed`
// leaves out (colsample_bytree) has no candidate; neither has a node at max_depth (ndepth).
extern "C" __global__ void __launch_bounds__(SPLIT_WARPS * 32)
split_gains(const int* __restrict__ batch, const int* __restrict__ ctrl, long long* __restrict__ hist, int D,
            const int* __restrict__ feat_off, int total_cells, const double* __restrict__ nscale,
            int min_samples_leaf, double min_child_weight, const unsigned char* __restrict__ allowed,
            const int* __restrict__ ndepth, int max_depth, double* __restrict__ fbest, double* __restrict__ ngain,
            int* __restrict__ nsplit, int* __restrict__ counters) {
    if (ctrl[GB_STOP]) return;
    const int slot = blockIdx.y;
    const int node = batch[slot];
    const int lane = threadIdx.x & 31;
    const int f = blockIdx.x * SPLIT_WARPS + (threadIdx.x >> 5);
    const ChildLimits lim = {min_samples_leaf, min_child_weight};
    if (f < D && (!allowed[f] || ndepth[node] >= max_depth)) {
        if (lane == 0) fbest[(long long)slot * D + f] = -gb_inf();
    } else if (f < D) {
        const long long* hf = hist + ((long long)slot * total_cells + feat_off[f]) * 3;
        const int n_codes = feat_off[f + 1] - feat_off[f];  // the feature's value bins and its missing bin
        const double sg = nscale[2 * node], shs = nscale[2 * node + 1];
        const FeatureScan t = feature_totals(hf, n_codes, lane);
        const double parent = parent_term(t, sg, shs);
        const int nb = n_codes - 1;
        long long cg = 0, ch = 0, cc = 0;  // sums of the bins of earlier rounds
        double best = -gb_inf();
        for (int b0 = 0; b0 < nb; b0 += 32) {
            const int b = b0 + lane;
            const bool in = b < nb;
            const long long lg = cg + warp_inclusive_scan(in ? hf[3 * b] : 0, lane);
            const long long lh = ch + warp_inclusive_scan(in ? hf[3 * b + 1] : 0, lane);
            const long long lc = cc + warp_inclusive_scan(in ? hf[3 * b + 2] : 0, lane);
            if (in) {
                double gain0, gain1;
                candidate_gains(t, lg, lh, lc, sg, shs, lim, parent, gain0, gain1);
                best = fmax(best, fmax(gain0, gain1));
            }
            cg = __shfl_sync(0xffffffffu, lg, 31);
            ch = __shfl_sync(0xffffffffu, lh, 31);
            cc = __shfl_sync(0xffffffffu, lc, 31);
        }
        for (int off = 16; off > 0; off >>= 1) best = fmax(best, __shfl_xor_sync(0xffffffffu, best, off));
        if (lane == 0) fbest[(long long)slot * D + f] = best;
    }
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(counters + slot, 1) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    pick_split(slot, node, hist, D, feat_off, total_cells, nscale, lim, fbest, ngain, nsplit);
    if (threadIdx.x == 0) counters[slot] = 0;  // ready for the next launch
}

// the top gain over the features, then the first candidate within SPLIT_TIE of it (the first
// feature whose best reaches it, scanned by one warp); then the slot is zeroed
__device__ void pick_split(int slot, int node, long long* hist, int D, const int* feat_off, int total_cells,
                           const double* nscale, const ChildLimits& lim, const double* fbest, double* ngain,
                           int* nsplit) {
    __shared__ double sh_top;
    __shared__ int sh_f;
    const double* fb = fbest + (long long)slot * D;
    long long* h = hist + (long long)slot * total_cells * 3;
    if (threadIdx.x < 32) {  // the first warp: the top gain, then the first feature within the tie
        const int lane = threadIdx.x;
        double top = -gb_inf();
        for (int f = lane; f < D; f += 32) top = fmax(top, __ldcg(fb + f));
        for (int off = 16; off > 0; off >>= 1) top = fmax(top, __shfl_xor_sync(0xffffffffu, top, off));
        int first = -1;
        if (isfinite(top)) {
            const double at_least = top - SPLIT_TIE * fabs(top);
            for (int f0 = 0; f0 < D && first < 0; f0 += 32) {  // warp-uniform
                const int f = f0 + lane;
                const unsigned hits = __ballot_sync(0xffffffffu, f < D && __ldcg(fb + f) >= at_least);
                if (hits) first = f0 + __ffs(hits) - 1;
            }
        }
        if (lane == 0) {
            sh_top = top;
            sh_f = first;
        }
    }
    __syncthreads();
    const int f = sh_f;
    if (threadIdx.x < 32) {  // the first warp finds the first candidate of feature f in the tie
        const int lane = threadIdx.x;
        if (f < 0) {
            if (lane == 0) ngain[node] = -gb_inf();
        } else {
            const long long* hf = h + (long long)feat_off[f] * 3;
            const int n_codes = feat_off[f + 1] - feat_off[f];
            const double sg = nscale[2 * node], shs = nscale[2 * node + 1];
            const FeatureScan t = feature_totals(hf, n_codes, lane);
            const double parent = parent_term(t, sg, shs);
            const double at_least = sh_top - SPLIT_TIE * fabs(sh_top);
            const int nb = n_codes - 1;
            long long cg = 0, ch = 0, cc = 0;
            for (int b0 = 0; b0 < nb; b0 += 32) {
                const int b = b0 + lane;
                const bool in = b < nb;
                const long long lg = cg + warp_inclusive_scan(in ? hf[3 * b] : 0, lane);
                const long long lh = ch + warp_inclusive_scan(in ? hf[3 * b + 1] : 0, lane);
                const long long lc = cc + warp_inclusive_scan(in ? hf[3 * b + 2] : 0, lane);
                double gain0 = -gb_inf(), gain1 = -gb_inf();
                if (in) candidate_gains(t, lg, lh, lc, sg, shs, lim, parent, gain0, gain1);
                const bool hit = gain0 >= at_least || gain1 >= at_least;
                const unsigned hits = __ballot_sync(0xffffffffu, hit);
                if (hits) {
                    const int winner = __ffs(hits) - 1;
                    if (lane == winner) {
                        const int dir = gain0 >= at_least ? 0 : 1;
                        const double gain = dir == 0 ? gain0 : gain1;
                        // no missing values in the node: unseen ones go to the larger side
                        const int missing_left = t.mc > 0 ? dir : (lc >= t.tc - lc);
                        ngain[node] = gain > 0.0 ? gain : -gb_inf();
                        nsplit[3 * node] = f;
                        nsplit[3 * node + 1] = b;
                        nsplit[3 * node + 2] = missing_left;
                    }
                    break;
                }
                cg = __shfl_sync(0xffffffffu, lg, 31);
                ch = __shfl_sync(0xffffffffu, lh, 31);
                cc = __shfl_sync(0xffffffffu, lc, 31);
            }
        }
    }
    __syncthreads();
    for (int c = threadIdx.x; c < total_cells * 3; c += blockDim.x) h[c] = 0;  // the slot, for the next batch
}

// ---------------------------------------------------------------------------------------------
// stable partition of the chosen node's rows into [left | right]
//
// The segment is cut into chunks of PART_THREADS rows; chunk c belongs to block c % gridDim.x.
// part_count counts each chunk's left rows (and its last block turns the counts into offsets
// and sets the children's segments), part_scatter writes every row to its place in `tmp`,
// and part_copy copies the segment back into `rows`.

// training codes are per feature: value bins 0 .. n_f - 1, missing values n_f (feat_off)
template <typename Code>
__device__ __forceinline__ bool goes_left(const Code* codes, long long i, int D, const int* nsplit, int node,
                                          const int* feat_off) {
    const int f = nsplit[3 * node], b = nsplit[3 * node + 1];
    const int c = (int)codes[i * D + f];
    return c == feat_off[f + 1] - feat_off[f] - 1 ? nsplit[3 * node + 2] != 0 : c <= b;
}

// the chunk counts into exclusive offsets, and the children's segments (one block)
__device__ void scan_counts(int* ctrl, int* nstart, int* nstop, const int* nchild, int* counts) {
    __shared__ int sh[PART_THREADS];
    const int node = ctrl[GB_CHOSEN];
    const int start = nstart[node], stop = nstop[node];
    const int n_chunks = (stop - start + PART_THREADS - 1) / PART_THREADS;
    const int per = (n_chunks + PART_THREADS - 1) / PART_THREADS;
    const int lo = threadIdx.x * per, hi = min(lo + per, n_chunks);
    int mine = 0;
    for (int c = lo; c < hi; ++c) mine += __ldcg(counts + c);  // other blocks' writes: skip L1
    sh[threadIdx.x] = mine;
    __syncthreads();
    for (int off = 1; off < PART_THREADS; off <<= 1) {  // inclusive scan (Hillis-Steele)
        const int v = threadIdx.x >= off ? sh[threadIdx.x - off] : 0;
        __syncthreads();
        sh[threadIdx.x] += v;
        __syncthreads();
    }
    int offset = sh[threadIdx.x] - mine;  // exclusive
    for (int c = lo; c < hi; ++c) {
        const int v = __ldcg(counts + c);
        counts[c] = offset;
        offset += v;
    }
    if (threadIdx.x == PART_THREADS - 1) {
        const int n_left = sh[PART_THREADS - 1];
        const int a = nchild[2 * node], b = nchild[2 * node + 1];
        nstart[a] = start;
        nstop[a] = start + n_left;
        nstart[b] = start + n_left;
        nstop[b] = stop;
        const bool left_smaller = n_left <= stop - start - n_left;
        ctrl[GB_SMALLER] = left_smaller ? a : b;
        ctrl[GB_LARGER] = left_smaller ? b : a;
    }
}

// each chunk's left rows; the last block to finish turns the counts into offsets
template <typename Code>
__global__ void __launch_bounds__(PART_THREADS)
part_count(int* __restrict__ ctrl, const int* __restrict__ rows, int* __restrict__ nstart, int* __restrict__ nstop,
           const int* __restrict__ nsplit, const int* __restrict__ nchild, const Code* __restrict__ codes, int D,
           const int* __restrict__ feat_off, int* __restrict__ counts, int* __restrict__ counter) {
    if (ctrl[GB_STOP]) return;
    const int node = ctrl[GB_CHOSEN];
    const int start = nstart[node], n = nstop[node] - start;
    for (int c = blockIdx.x; c * PART_THREADS < n; c += gridDim.x) {
        const int j = c * PART_THREADS + threadIdx.x;
        const bool left = j < n && goes_left(codes, rows[start + j], D, nsplit, node, feat_off);
        const int total = __syncthreads_count(left);
        if (threadIdx.x == 0) counts[c] = total;
    }
    __shared__ bool last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(counter, 1) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    scan_counts(ctrl, nstart, nstop, nchild, counts);
    if (threadIdx.x == 0) *counter = 0;  // ready for the next launch
}

template <typename Code>
__global__ void __launch_bounds__(PART_THREADS)
part_scatter(const int* __restrict__ ctrl, const int* __restrict__ rows, const int* __restrict__ nstart,
             const int* __restrict__ nstop, const int* __restrict__ nsplit, const int* __restrict__ nchild,
             const Code* __restrict__ codes, int D, const int* __restrict__ feat_off, const int* __restrict__ offsets,
             int* __restrict__ tmp) {
    if (ctrl[GB_STOP]) return;
    __shared__ int warp_left[PART_THREADS / 32];
    const int node = ctrl[GB_CHOSEN];
    const int start = nstart[node], n = nstop[node] - start;
    const int n_left = nstop[nchild[2 * node]] - start;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int c = blockIdx.x; c * PART_THREADS < n; c += gridDim.x) {
        const int j = c * PART_THREADS + threadIdx.x;
        const bool valid = j < n;
        const int row = valid ? rows[start + j] : 0;
        const bool left = valid && goes_left(codes, row, D, nsplit, node, feat_off);
        const unsigned ballot = __ballot_sync(0xffffffffu, left);
        if (lane == 0) warp_left[warp] = __popc(ballot);
        __syncthreads();
        int before = 0;  // left rows of this chunk before this thread
        for (int q = 0; q < warp; ++q) before += warp_left[q];
        before += __popc(ballot & ((1u << lane) - 1u));
        __syncthreads();
        if (valid) {
            const int chunk_left = offsets[c];  // left rows of the chunks before this one
            const int pos = left ? start + chunk_left + before
                                 : start + n_left + (c * PART_THREADS - chunk_left) + (threadIdx.x - before);
            tmp[pos] = row;
        }
    }
}

// every row's leaf in the tree of the node table, found from the root through its codes: the
// fused update after a tree grown on a row sample (the other rows are in no leaf's segment)
template <typename Code>
__global__ void route_rows(const Code* __restrict__ codes, int n, int D, const int* __restrict__ feat_off,
                           const int* __restrict__ nsplit, const int* __restrict__ nchild, int* __restrict__ leaf_of) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        int node = 0;
        while (nchild[2 * node] >= 0)
            node = goes_left(codes, i, D, nsplit, node, feat_off) ? nchild[2 * node] : nchild[2 * node + 1];
        leaf_of[i] = node;
    }
}

extern "C" __global__ void part_copy(const int* __restrict__ ctrl, const int* __restrict__ nstart,
                                     const int* __restrict__ nstop, const int* __restrict__ tmp,
                                     int* __restrict__ rows) {
    if (ctrl[GB_STOP]) return;
    const int node = ctrl[GB_CHOSEN];
    const int start = nstart[node], stop = nstop[node];
    for (int j = start + blockIdx.x * blockDim.x + threadIdx.x; j < stop; j += gridDim.x * blockDim.x)
        rows[j] = tmp[j];
}

// ---------------------------------------------------------------------------------------------
// the grown tree's leaf vectors times the learning rate, by node id: steps[node][r] = lr t and
// steps[node][s] = -(lr t) with t = clip(-scale G / H, -clip, clip) (eq 27; H = 0 counts as 1):
// the host's arithmetic (losses.node_value, Tree.node_vectors), so F gets exactly the values the
// model file stores. Nodes that are not leaves of this tree get zeros (no row points at them).
// One block.

extern "C" __global__ void leaf_steps(int M, int K, const int* __restrict__ nchild, const int* __restrict__ npair,
                                      const double* __restrict__ nsum, double learning_rate, double clip,
                                      double scale, double* __restrict__ steps) {
    if (blockIdx.x != 0) return;
    __shared__ int n_split;
    if (threadIdx.x == 0) n_split = 0;
    __syncthreads();
    int mine = 0;
    for (int node = threadIdx.x; node < M; node += blockDim.x) mine += nchild[2 * node] >= 0;
    atomicAdd(&n_split, mine);
    for (int e = threadIdx.x; e < M * K; e += blockDim.x) steps[e] = 0.0;
    __syncthreads();
    const int n_nodes = 1 + 2 * n_split;  // the nodes of this tree (step k creates 2k+1, 2k+2)
    for (int node = threadIdx.x; node < n_nodes; node += blockDim.x) {
        if (nchild[2 * node] >= 0) continue;
        const double G = nsum[3 * node], H = nsum[3 * node + 1];
        double t = (-scale * G) / (H == 0.0 ? 1.0 : H);
        t = fmin(fmax(t, -clip), clip);
        steps[(long long)node * K + npair[2 * node]] = learning_rate * (0.0 + t);  // vectors[r] += t
        steps[(long long)node * K + npair[2 * node + 1]] = learning_rate * (0.0 - t);  // vectors[s] -= t
    }
}

// ---------------------------------------------------------------------------------------------
// F += steps[leaf_of[i]] for every row i (when steps is not null: the last tree's leaf
// vectors, leaf_of from the numba kernel mark_leaves), then p = softmax(F), pc = 1 - p
// (accurate where p rounds to 1), and the training loss sum_i w_i (log sum_k exp F_ik -
// F_{i,y_i}): the operations of losses.softmax_with_loss (the non-maximal exponentials summed in
// class order, log1p), but with exp of F - rowmax where the reference shifts by the row maximum
// rounded down to a multiple of 8 (losses.exponent_shift, which lets the CPU backend keep most
// exponentials between trees): the same p to rounding. A block takes a tile of rows at a time: F is read
// and p, pc written through shared memory, coalesced; a thread computes a row. Each block's
// loss is a fixed-order sum, and the last block to finish adds the blocks' sums in a fixed
// order into loss[0], so the loss is the same on every run.

constexpr int SOFTMAX_THREADS = 256;
constexpr int SOFTMAX_TILE = 2560;  // doubles of F per tile (20 KB): min(256, 2560 / K) rows

extern "C" __global__ void __launch_bounds__(SOFTMAX_THREADS)
softmax_loss(double* __restrict__ F, const int* __restrict__ leaf_of, const double* __restrict__ steps,
             const int* __restrict__ y, const double* __restrict__ w, int n, int K, double* __restrict__ p,
             double* __restrict__ pc, double* __restrict__ partial, int* __restrict__ counter,
             double* __restrict__ loss) {
    __shared__ double tile[SOFTMAX_TILE];
    __shared__ double rest_norm[SOFTMAX_THREADS];
    __shared__ int top_of[SOFTMAX_THREADS];
    __shared__ double sh[SOFTMAX_THREADS];
    const int tile_rows = min(SOFTMAX_THREADS, SOFTMAX_TILE / K);
    double acc = 0.0;
    for (long long base = (long long)blockIdx.x * tile_rows; base < n; base += (long long)gridDim.x * tile_rows) {
        const int n_tile = (int)min((long long)tile_rows, n - base);
        const long long e0 = base * K;
        const int ne = n_tile * K;
        for (int e = threadIdx.x; e < ne; e += blockDim.x) {
            double f = F[e0 + e];
            if (steps) {
                const int row = e / K;
                f += steps[(long long)leaf_of[base + row] * K + (e - row * K)];
                F[e0 + e] = f;
            }
            tile[e] = f;
        }
        __syncthreads();
        if (threadIdx.x < n_tile) {
            const long long i = base + threadIdx.x;
            double* t = tile + threadIdx.x * K;
            int top = 0;
            for (int k = 1; k < K; ++k)
                if (t[k] > t[top]) top = k;
            const double m = t[top];
            const double fy = t[y[i]];
            double rest = 0.0;
            for (int k = 0; k < K; ++k) {
                const double e = exp(t[k] - m);
                t[k] = e;
                if (k != top) rest += e;
            }
            const double norm = 1.0 + rest;
            for (int k = 0; k < K; ++k) t[k] = t[k] / norm;
            t[top] = 1.0 / norm;
            rest_norm[threadIdx.x] = rest / norm;
            top_of[threadIdx.x] = top;
            const double value = (m - fy) + log1p(rest);
            acc += w ? value * w[i] : value;
        }
        __syncthreads();
        for (int e = threadIdx.x; e < ne; e += blockDim.x) {
            const int row = e / K;
            const double v = tile[e];
            p[e0 + e] = v;
            pc[e0 + e] = (e - row * K == top_of[row]) ? rest_norm[row] : 1.0 - v;
        }
        __syncthreads();  // the tile is reused
    }
    sh[threadIdx.x] = acc;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) sh[threadIdx.x] += sh[threadIdx.x + half];
        __syncthreads();
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sh[0];
        __threadfence();
        last = atomicAdd(counter, 1) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    if (threadIdx.x < 32) {
        double v = 0.0;
        for (int b = threadIdx.x; b < gridDim.x; b += 32) v += __ldcg(partial + b);
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
        if (threadIdx.x == 0) {
            loss[0] = v;
            *counter = 0;  // ready for the next launch
        }
    }
}

// ---------------------------------------------------------------------------------------------
// prediction: leaf of every row in one tree (binned codes, missing values at missing_code)

template <typename Code>
__global__ void apply_tree(const Code* __restrict__ codes, long long n, int D, int missing_code,
                           const int* __restrict__ feature, const int* __restrict__ bin,
                           const unsigned char* __restrict__ missing_left, const int* __restrict__ left,
                           const int* __restrict__ right, int* __restrict__ out) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        int node = 0;
        while (left[node] >= 0) {
            const int c = (int)codes[i * D + feature[node]];
            const bool go_left = c == missing_code ? missing_left[node] != 0 : c <= bin[node];
            node = go_left ? left[node] : right[node];
        }
        out[i] = node;
    }
}

// prediction of one tree added to F: F[i, :] += step[leaf of row i, :] (steps hold the
// tree's leaf vectors times the learning rate, computed on the host; one thread per row, so
// F receives the same additions as on the CPU)
template <typename Code>
__global__ void predict_add(const Code* __restrict__ codes, long long n, int D, int missing_code,
                            const int* __restrict__ feature, const int* __restrict__ bin,
                            const unsigned char* __restrict__ missing_left, const int* __restrict__ left,
                            const int* __restrict__ right, const double* __restrict__ step, int K,
                            double* __restrict__ F) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        int node = 0;
        while (left[node] >= 0) {
            const int c = (int)codes[i * D + feature[node]];
            const bool go_left = c == missing_code ? missing_left[node] != 0 : c <= bin[node];
            node = go_left ? left[node] : right[node];
        }
        for (int k = 0; k < K; ++k) F[i * K + k] += step[(long long)node * K + k];
    }
}
