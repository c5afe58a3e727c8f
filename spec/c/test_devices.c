/* test_devices.c — the device registry's environment: TIDE_CPU_DEVICES validation and the CUDA
 * loader's reasons. The registry is built once per process, so each case runs in a child. */
#include "test_util.h"
#include "tide.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* runs fn in a child with env var name=value (NULL: unset); returns the child's exit code */
static int in_child(const char *name, const char *value, int (*fn)(void)) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (value)
            setenv(name, value, 1);
        else
            unsetenv(name);
        _exit(fn());
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

static int cpu_count(void) {
    return tide_device_count(TIDE_DEVICE_CPU);
}

/* 0 when cpu:3 exists and cpu:4 fails with a hint naming TIDE_CPU_DEVICES */
static int four_devices(void) {
    tide_device *d;
    if (tide_device_get("cpu:3", &d) != TIDE_OK || strcmp(tide_device_name(d), "cpu:3") != 0)
        return 1;
    if (tide_device_get("cpu:4", &d) != TIDE_EDEVICE)
        return 2;
    if (!strstr(tide_errmsg(), "tide: device: cpu:4 does not exist: there are 4 CPU devices "
                               "(cpu:0 to cpu:3); set TIDE_CPU_DEVICES=5"))
        return 3;
    tide_device *a, *b;
    if (tide_device_get_index(TIDE_DEVICE_CPU, 2, &a) != TIDE_OK ||
        tide_device_get("cpu:2", &b) != TIDE_OK || a != b)
        return 4;
    return 0;
}

static int reason_not_built(void) {
    const char *r = tide_cuda_unavailable_reason();
    if (tide_cuda_is_available() || !r)
        return 1;
    if (!strstr(r, "the CUDA backend was not built (libtide_cuda.so not found next to "))
        return 2;
    tide_device *d;
    if (tide_device_get("cuda:0", &d) != TIDE_EDEVICE ||
        !strstr(tide_errmsg(), "tide: device: CUDA is not available: the CUDA backend was not "
                               "built"))
        return 3;
    return tide_device_count(TIDE_DEVICE_CUDA) == 0 ? 0 : 4;
}

static int reason_not_loadable(void) {
    const char *r = tide_cuda_unavailable_reason();
    return r && strstr(r, "the CUDA backend could not be loaded: ") ? 0 : 1;
}

static int reason_no_entry(void) {
    const char *r = tide_cuda_unavailable_reason();
    return r && strstr(r, "does not export tide_cuda_backend_open") ? 0 : 1;
}

/* the real backend: either available, or a reason from its open function */
static int real_backend(void) {
    const char *r = tide_cuda_unavailable_reason();
    if (tide_cuda_is_available())
        return r == NULL && tide_device_count(TIDE_DEVICE_CUDA) > 0 ? 0 : 1;
    if (!r || !*r || strstr(r, "not built") || strstr(r, "does not export"))
        return 2;
    return 0;
}

int main(void) {
    CHECK(in_child("TIDE_CPU_DEVICES", NULL, cpu_count) == 1);
    CHECK(in_child("TIDE_CPU_DEVICES", "4", cpu_count) == 4);
    CHECK(in_child("TIDE_CPU_DEVICES", "64", cpu_count) == 64);
    CHECK(in_child("TIDE_CPU_DEVICES", "65", cpu_count) == 1);
    CHECK(in_child("TIDE_CPU_DEVICES", "0", cpu_count) == 1);
    CHECK(in_child("TIDE_CPU_DEVICES", "-2", cpu_count) == 1);
    CHECK(in_child("TIDE_CPU_DEVICES", "abc", cpu_count) == 1);
    CHECK(in_child("TIDE_CPU_DEVICES", "3x", cpu_count) == 1);
    CHECK(in_child("TIDE_CPU_DEVICES", "", cpu_count) == 1);
    CHECK(in_child("TIDE_CPU_DEVICES", "4", four_devices) == 0);

    /* the test binary sits in build/, where no libtide_cuda.so is */
    CHECK(in_child("TIDE_CUDA_LIB", "/nonexistent/libtide_cuda.so", reason_not_built) == 0);
    char junk[] = "/tmp/tide_junk_XXXXXX";
    int  fd = mkstemp(junk);
    if (fd >= 0) {
        CHECK(write(fd, "not an ELF file", 15) == 15);
        close(fd);
        CHECK(in_child("TIDE_CUDA_LIB", junk, reason_not_loadable) == 0);
        unlink(junk);
    }
    const char *libm = "/lib/x86_64-linux-gnu/libm.so.6";
    if (access(libm, F_OK) == 0)
        CHECK(in_child("TIDE_CUDA_LIB", libm, reason_no_entry) == 0);
    const char *real = "build/lua/tide/libtide_cuda.so";
    if (access(real, F_OK) == 0)
        CHECK(in_child("TIDE_CUDA_LIB", real, real_backend) == 0);
    return tu_finish();
}
