/* status.c — status names and the thread-local error message. */
#include "tide_impl.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MSG_CAP 1024
static _Thread_local char msg[MSG_CAP];

const char *tide_errmsg(void) {
    return msg;
}

const char *tide_status_name(tide_status st) {
    static const char *const names[] = {
        "TIDE_OK",      "TIDE_EINVAL",   "TIDE_ESHAPE", "TIDE_EDTYPE",
        "TIDE_EDEVICE", "TIDE_EINDEX",   "TIDE_ENOMEM", "TIDE_ELIMIT",
        "TIDE_ENOTSUP", "TIDE_EBACKEND", "TIDE_EGUARD", "TIDE_EIO",
    };
    if ((unsigned)st < sizeof names / sizeof names[0])
        return names[st];
    return "TIDE_UNKNOWN";
}

tide_status tide_seterr(tide_status st, const char *fmt, ...) {
    char    tmp[MSG_CAP]; /* fmt's arguments may point into msg itself */
    va_list ap;
    va_start(ap, fmt);
    memcpy(tmp, "tide: ", 6);
    vsnprintf(tmp + 6, sizeof tmp - 6, fmt, ap);
    va_end(ap);
    memcpy(msg, tmp, sizeof msg);
    return st;
}

/* Allocators and backends name their own step ("cudaMalloc: ..."); users want the op first. */
tide_status tide_err_op(tide_status st, const char *op) {
    size_t oplen = strlen(op);
    if (strncmp(msg, "tide: ", 6) == 0 && strncmp(msg + 6, op, oplen) == 0 &&
        strncmp(msg + 6 + oplen, ": ", 2) == 0)
        return st;
    const char *rest = strncmp(msg, "tide: ", 6) == 0 ? msg + 6 : msg;
    if (!*rest)
        rest = tide_status_name(st);
    return tide_seterr(st, "%s: %s", op, rest);
}
