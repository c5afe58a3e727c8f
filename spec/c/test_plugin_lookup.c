/* test_plugin_lookup.c — where the core finds the CUDA plug-in, and the plug-in's ABI check.
 *   order: tide_cuda_set_library_path, then $TIDE_CUDA_LIB, then next to the object holding the
 *   core (here this executable), its tide/ directory, then the install prefix;
 *   a plug-in of another backend ABI version, or without one, is refused with a message before
 *   anything of it is called (the fakes' entry points abort).
 * The fakes are built by the Makefile into build/fake_cuda/{old,abi999}/libtide_cuda.so
 * (spec/c/fake_cuda_plugin.c). The lookup runs once per process, so each case runs in a child. */
#include "backend.h"
#include "test_util.h"
#include "tide.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char old_lib[PATH_MAX], abi999_lib[PATH_MAX], self[PATH_MAX];

/* runs fn in a child with TIDE_CUDA_LIB=value (NULL: unset); the child's exit code */
static int in_child(const char *value, int (*fn)(void)) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (value)
            setenv("TIDE_CUDA_LIB", value, 1);
        else
            unsetenv("TIDE_CUDA_LIB");
        _exit(fn());
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

/* 0 when CUDA is unavailable and the reason holds want (printed otherwise) */
static int reason_has(const char *want) {
    const char *r = tide_cuda_unavailable_reason();
    if (!tide_cuda_is_available() && r && strstr(r, want))
        return 0;
    fprintf(stderr, "reason: %s\n    expected to contain: %s\n", r ? r : "(available)", want);
    return 1;
}

static int refused_old(void) {
    char want[200];
    snprintf(want, sizeof want,
             "is a CUDA backend of an older tide (it has no backend ABI version; this tide needs "
             "version %d): rebuild it with this tide or remove it",
             TIDE_BACKEND_ABI);
    return reason_has(want);
}

static int refused_999(void) {
    char want[200];
    snprintf(want, sizeof want,
             "is a CUDA backend of another tide (backend ABI version 999; this tide needs version "
             "%d)",
             TIDE_BACKEND_ABI);
    return reason_has(want);
}

static int set_path_wins(void) { /* over TIDE_CUDA_LIB (the old fake) */
    if (tide_cuda_set_library_path(abi999_lib) != TIDE_OK)
        return 10;
    return refused_999();
}

static int set_path_missing(void) {
    if (tide_cuda_set_library_path("/nonexistent/libtide_cuda.so") != TIDE_OK)
        return 10;
    return reason_has("the CUDA backend was not found at /nonexistent/libtide_cuda.so (given to "
                      "tide_cuda_set_library_path)");
}

static int set_path_too_late(void) {
    tide_cuda_is_available();
    if (tide_cuda_set_library_path(abi999_lib) != TIDE_EINVAL)
        return 10;
    return strstr(tide_errmsg(), "tide: cuda_set_library_path: the CUDA backend was already "
                                 "looked up; call it before the first CUDA use")
               ? 0
               : 11;
}

static int not_found(void) {
    return reason_has("the CUDA backend was not built (libtide_cuda.so not found next to ");
}

/* runs this program through a link in dir (so that the core, inside it, sits in dir) with
 * argv[1] = "next-to"; its exit code */
static int run_from(const char *dir) {
    char link[PATH_MAX + 32];
    snprintf(link, sizeof link, "%s/test_plugin_lookup", dir);
    if (symlink(self, link) != 0)
        return 20;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        unsetenv("TIDE_CUDA_LIB");
        execl(link, link, "next-to", (char *)NULL);
        _exit(21);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    unlink(link);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "next-to") == 0)
        return refused_999(); /* found beside the program (or in its tide/), never opened */
    if (!realpath(argv[0], self)) {
        fprintf(stderr, "realpath(%s) failed\n", argv[0]);
        return 1;
    }
    char *slash = strrchr(self, '/');
    snprintf(old_lib, sizeof old_lib, "%.*s/fake_cuda/old/libtide_cuda.so", (int)(slash - self),
             self);
    snprintf(abi999_lib, sizeof abi999_lib, "%.*s/fake_cuda/abi999/libtide_cuda.so",
             (int)(slash - self), self);

    CHECK(in_child(old_lib, refused_old) == 0);
    CHECK(in_child(abi999_lib, refused_999) == 0);
    CHECK(in_child(old_lib, set_path_wins) == 0);
    CHECK(in_child(abi999_lib, set_path_missing) == 0);
    CHECK(in_child(NULL, set_path_too_late) == 0);
    CHECK(in_child("/nonexistent/libtide_cuda.so", not_found) == 0);

    /* next to the object holding the core, then in its tide/ directory */
    char dir[] = "/tmp/tide_plugin_XXXXXX", lib[PATH_MAX], sub[PATH_MAX];
    if (mkdtemp(dir)) {
        snprintf(lib, sizeof lib, "%s/libtide_cuda.so", dir);
        CHECK(symlink(abi999_lib, lib) == 0);
        CHECK(run_from(dir) == 0);
        unlink(lib);
        snprintf(sub, sizeof sub, "%s/tide", dir);
        snprintf(lib, sizeof lib, "%s/tide/libtide_cuda.so", dir);
        CHECK(mkdir(sub, 0700) == 0 && symlink(abi999_lib, lib) == 0);
        CHECK(run_from(dir) == 0);
        unlink(lib);
        rmdir(sub);
        rmdir(dir);
    }
    return tu_finish();
}
