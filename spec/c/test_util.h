/* test_util.h — a tiny harness for the C tests: CHECK macros and the closing summary line
 * "N passed, N failed" (the only line on stdout; failures go to stderr). */
#ifndef TIDE_TEST_UTIL_H
#define TIDE_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int tu_pass, tu_fail;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (cond)                                                                                  \
            tu_pass++;                                                                             \
        else {                                                                                     \
            tu_fail++;                                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

/* a call that must succeed; prints tide's message when it does not */
#define CHECK_OK(expr)                                                                             \
    do {                                                                                           \
        tide_status st_ = (expr);                                                                  \
        if (st_ == TIDE_OK)                                                                        \
            tu_pass++;                                                                             \
        else {                                                                                     \
            tu_fail++;                                                                             \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #expr, tide_errmsg());   \
        }                                                                                          \
    } while (0)

/* a call that must fail with status want and a message containing sub */
#define CHECK_ERR(expr, want, sub)                                                                 \
    do {                                                                                           \
        tide_status st_ = (expr);                                                                  \
        if (st_ == (want) && strstr(tide_errmsg(), (sub)))                                         \
            tu_pass++;                                                                             \
        else {                                                                                     \
            tu_fail++;                                                                             \
            fprintf(stderr, "%s:%d: %s: expected %s containing \"%s\", got %s \"%s\"\n", __FILE__, \
                    __LINE__, #expr, tide_status_name(want), (sub), tide_status_name(st_),         \
                    tide_errmsg());                                                                \
        }                                                                                          \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (fabs(a_ - b_) <= (tol))                                                                \
            tu_pass++;                                                                             \
        else {                                                                                     \
            tu_fail++;                                                                             \
            fprintf(stderr, "%s:%d: %s = %.9g, expected %.9g\n", __FILE__, __LINE__, #a, a_, b_);  \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *a_ = (a), *b_ = (b);                                                           \
        if (a_ && b_ && strcmp(a_, b_) == 0)                                                       \
            tu_pass++;                                                                             \
        else {                                                                                     \
            tu_fail++;                                                                             \
            fprintf(stderr, "%s:%d: %s = \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a,       \
                    a_ ? a_ : "(null)", b_ ? b_ : "(null)");                                       \
        }                                                                                          \
    } while (0)

static inline int tu_finish(void) {
    printf("%d passed, %d failed\n", tu_pass, tu_fail);
    return tu_fail ? 1 : 0;
}

#endif /* TIDE_TEST_UTIL_H */
