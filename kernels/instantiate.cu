// nvcc compile check of kernels/aoso.cu, with every template instantiation that the CUDA
// backend asks CuPy's RawModule for (gpuboost/backends/cuda.py, KERNEL_NAMES). Not loaded at
// run time; tests/test_kernels_compile.py builds it for sm_90.
#include "aoso.cu"

template <typename Code>
static void keep_code_kernels(void** out) {
    out[0] = (void*)histogram<Code>;
    out[1] = (void*)part_count<Code>;
    out[2] = (void*)part_scatter<Code>;
    out[3] = (void*)apply_tree<Code>;
    out[4] = (void*)predict_add<Code>;
    out[5] = (void*)route_rows<Code>;
}

void gpuboost_instantiate(void** out) {
    keep_code_kernels<unsigned char>(out);
    keep_code_kernels<unsigned short>(out + 6);
    out[12] = (void*)class_stats<1>;  // classes per lane: K <= 8 and 16 < K <= 32
    out[13] = (void*)class_stats<4>;  // K <= 128
    out[14] = (void*)class_stats<2>;  // 8 < K <= 16
}
