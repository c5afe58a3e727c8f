/*
 * test_embed.h — the small check harness shared by the embedding tests (C API and Lua host).
 *
 * CHECK counts one assertion; a failure prints where, what, and tide's last message. RUN runs
 * one test function. Each program ends with "N passed, N failed" and exits non-zero on failure.
 */
#ifndef TEST_EMBED_H
#define TEST_EMBED_H

#include "tide.h"
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

static atomic_int checks_passed, checks_failed;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond) {                                                                                \
            atomic_fetch_add(&checks_passed, 1);                                                   \
        } else {                                                                                   \
            atomic_fetch_add(&checks_failed, 1);                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n    (tide_errmsg: %s)\n", __FILE__,          \
                    __LINE__, #cond, tide_errmsg());                                               \
        }                                                                                          \
    } while (0)

#define CHECK_OK(expr)   CHECK((expr) == TIDE_OK)
#define CHECK_NEAR(a, b) CHECK(fabs((double)(a) - (double)(b)) < 1e-5)
/* message starts with prefix */
#define CHECK_PREFIX(msg, prefix) CHECK(strncmp((msg), (prefix), strlen(prefix)) == 0)
#define CHECK_HAS(msg, part)      CHECK(strstr((msg), (part)) != NULL)

#define RUN(fn)                                                                                    \
    do {                                                                                           \
        int failed_before_ = atomic_load(&checks_failed);                                          \
        fn();                                                                                      \
        printf("%-44s %s\n", #fn, atomic_load(&checks_failed) == failed_before_ ? "ok" : "FAIL");  \
    } while (0)

static inline int checks_report(void) {
    int p = atomic_load(&checks_passed), f = atomic_load(&checks_failed);
    printf("%d passed, %d failed\n", p, f);
    return f == 0 ? 0 : 1;
}

/* a deleter that counts its calls in an atomic_int */
static inline void count_deleter(void *ud) {
    atomic_fetch_add((atomic_int *)ud, 1);
}

#endif /* TEST_EMBED_H */
