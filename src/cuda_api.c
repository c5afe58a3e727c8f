/* cuda_api.c — the public tide_cuda_* calls of include/tide.h, kept so that the C API stays
 * stable: each is the generic backend call (src/device.c) for the cuda registry line. */
#include "tide_impl.h"

int tide_cuda_is_available(void) {
    return tide_backend_is_available(TIDE_DEVICE_CUDA);
}

const char *tide_cuda_unavailable_reason(void) {
    return tide_backend_unavailable_reason(TIDE_DEVICE_CUDA);
}

int tide_cuda_is_loaded(void) {
    return tide_backend_is_loaded(TIDE_DEVICE_CUDA);
}

tide_status tide_cuda_set_library_path(const char *path) {
    return tide_backend_set_path_as("cuda_set_library_path", TIDE_DEVICE_CUDA, path);
}
