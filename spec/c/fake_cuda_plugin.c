/* fake_cuda_plugin.c — a stand-in libtide_cuda.so for spec/c/test_plugin_lookup.c. Built with
 * FAKE_ABI=N it says it speaks backend ABI N; with FAKE_ABI=0 it has no version at all (a
 * plug-in of a tide from before the version). Its entry point must never be called: the core
 * refuses either before calling through it. */
#include <stdio.h>
#include <stdlib.h>

#if FAKE_ABI
__attribute__((visibility("default"))) int tide_cuda_backend_abi(void);
__attribute__((visibility("default"))) int tide_cuda_backend_abi(void) {
    return FAKE_ABI;
}
#endif

__attribute__((visibility("default"))) int tide_cuda_backend_open(void);
__attribute__((visibility("default"))) int tide_cuda_backend_open(void) {
    fprintf(stderr, "fake plug-in: tide_cuda_backend_open was called\n");
    abort();
}
