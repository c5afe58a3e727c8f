/* dist.c — tide_dist_*: loads the MPI and NCCL plug-ins on first use, checks the tensors, picks
 * the engine by the tensor's device, and keeps a watchdog so that a collective the other ranks
 * never join ends the job with a message instead of hanging it.
 *
 * The plug-ins are separate shared objects so that a host without Open MPI or NCCL still loads
 * tide (as for CUDA, src/device.c); when one cannot be loaded, the reason is kept for the user. */
#include "dist_plugin.h"
#include "plugin.h"
#include "tide_impl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct plugin_slot {
    const char             *file;    /* libtide_mpi.so */
    const char             *env;     /* TIDE_MPI_LIB */
    const char             *entry;   /* tide_dist_mpi_open */
    const char             *what;    /* "MPI" */
    const char             *devices; /* the backend whose tensors it carries (NULL: the host's) */
    const tide_dist_plugin *p;
    int                     initialized;
    char                    reason[600];
    pthread_once_t          once;
} plugin_slot;

static plugin_slot slots[2] = {
    {"libtide_mpi.so", "TIDE_MPI_LIB", TIDE_DIST_MPI_ENTRY, "MPI", NULL, NULL, 0, "",
     PTHREAD_ONCE_INIT},
    {"libtide_nccl.so", "TIDE_NCCL_LIB", TIDE_DIST_NCCL_ENTRY, "NCCL", "cuda", NULL, 0, "",
     PTHREAD_ONCE_INIT},
};

static int    g_init, g_finalized, g_rank, g_world = 1, g_local;
static double g_timeout = 300.0;

/* ---- loading ------------------------------------------------------------------------------ */

static void load_slot(plugin_slot *s) {
    char dir[4096], real_dir[4096];
    /* next to the module holding the core (core.so for Lua, the host binary for C) */
    tide_plugin_core_dir(dir, real_dir, sizeof dir);
    char        path[8200];
    const char *env = getenv(s->env);
    if (env && *env)
        snprintf(path, sizeof path, "%s", env);
    else {
        /* beside the core (a build, a rock), or in tide/ beside it (`make install`: lib/tide/) */
        snprintf(path, sizeof path, "%s/%s", dir, s->file);
        if (access(path, F_OK) != 0)
            snprintf(path, sizeof path, "%s/tide/%s", dir, s->file);
    }
    if (access(path, F_OK) != 0) {
        snprintf(s->reason, sizeof s->reason,
                 "tide was built without its %s plug-in (%.200s not found); install %s and "
                 "rebuild tide",
                 s->what, path,
                 s == &slots[0] ? "Open MPI (apt-get install openmpi-bin libopenmpi-dev)"
                                : "the NCCL headers (the CUDA toolkit or nvidia-nccl-cu12)");
        return;
    }
    char what[32];
    snprintf(what, sizeof what, "the %s plug-in", s->what);
    const tide_plugin_spec spec = {.what = what, .entry = s->entry};
    tide_dist_open_fn      open_fn;
    *(void **)&open_fn = tide_plugin_open(path, &spec, s->reason, sizeof s->reason);
    if (!open_fn)
        return;
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", tide_errmsg());
    const tide_dist_plugin *p = NULL;
    tide_status             st = open_fn(tide_seterr, &p);
    if (st != TIDE_OK || !p || p->abi != TIDE_DIST_PLUGIN_ABI) {
        const char *m = tide_errmsg();
        if (strncmp(m, "tide: ", 6) == 0)
            m += 6;
        snprintf(s->reason, sizeof s->reason, "%.590s",
                 st != TIDE_OK && *m ? m : "the plug-in is of another version of tide");
    } else {
        s->p = p;
    }
    tide_seterr(TIDE_OK, "%s", saved[0] ? saved + 6 : "");
}

static void load_mpi(void) {
    load_slot(&slots[0]);
}
/* the device type of the backend NCCL's slot carries tensors of (its registry line's name) */
static tide_device_type nccl_devices(void) {
    tide_device_type type = TIDE_DEVICE_CPU;
    return tide_device_type_from_name(slots[1].devices, &type) == TIDE_OK ? type : TIDE_DEVICE_CPU;
}

static void load_nccl(void) {
    load_slot(&slots[1]);
    /* NCCL without a CUDA device is no use: say why once, here */
    tide_device_type type = nccl_devices();
    if (slots[1].p && !tide_backend_is_available(type)) {
        snprintf(slots[1].reason, sizeof slots[1].reason, "NCCL needs a CUDA device: %.500s",
                 tide_backend_unavailable_reason(type));
        slots[1].p = NULL;
    }
}

static plugin_slot *slot(tide_dist_backend b) {
    if (b == TIDE_DIST_NCCL) {
        pthread_once(&slots[1].once, load_nccl);
        return &slots[1];
    }
    pthread_once(&slots[0].once, load_mpi);
    return &slots[0];
}

int tide_dist_is_available(tide_dist_backend b) {
    if (b == TIDE_DIST_AUTO)
        b = TIDE_DIST_MPI;
    return slot(b)->p != NULL;
}

const char *tide_dist_unavailable_reason(tide_dist_backend b) {
    if (b == TIDE_DIST_AUTO)
        b = TIDE_DIST_MPI;
    plugin_slot *s = slot(b);
    return s->p ? NULL : s->reason;
}

/* ---- the watchdog ------------------------------------------------------------------------- */
/* A collective that one rank never joins blocks the others inside MPI or NCCL, where nothing can
 * cancel it. The watchdog thread waits beside every call; past the timeout it prints which rank
 * waited in which call and ends the process: mpirun then ends the whole job. */

/* Per call, only two atomic stores (the start time and the call's name; cleared after): no lock,
 * no wake-up, so the watch costs nothing beside a collective. The thread looks every quarter of
 * the timeout (at most every second) and fires when the same call has run past the timeout. */
static _Atomic(const char *) wd_op;    /* the call being watched, NULL when none */
static atomic_llong          wd_start; /* its start, ns on CLOCK_MONOTONIC */
static atomic_ullong         wd_seq;   /* calls begun: tells one long call from many short ones */
static pthread_once_t        wd_once = PTHREAD_ONCE_INIT;

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *watchdog(void *arg) {
    (void)arg;
    for (;;) {
        double period = g_timeout > 0 ? g_timeout / 4 : 1.0;
        if (period > 1.0)
            period = 1.0;
        struct timespec nap = {(time_t)period, (long)((period - (double)(time_t)period) * 1e9)};
        nanosleep(&nap, NULL);
        const char        *op = atomic_load(&wd_op);
        unsigned long long seq = atomic_load(&wd_seq);
        long long          start = atomic_load(&wd_start);
        if (!op || g_timeout <= 0 || (double)(now_ns() - start) < g_timeout * 1e9 ||
            seq != atomic_load(&wd_seq))
            continue;
        fprintf(stderr,
                "tide: %s: rank %d of %d waited %g s for the other ranks and gave up: one of them "
                "failed, ended, or did not make the same call; ending this rank so that mpirun "
                "ends the job (change the limit with dist.init{timeout = seconds})\n",
                op, g_rank, g_world, g_timeout);
        fflush(stderr);
        _exit(124);
    }
    return NULL;
}

static void start_watchdog(void) {
    pthread_t      th;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_create(&th, &a, watchdog, NULL);
    pthread_attr_destroy(&a);
}

static void watch_begin(const char *op) {
    if (g_timeout <= 0)
        return;
    pthread_once(&wd_once, start_watchdog);
    atomic_fetch_add(&wd_seq, 1);
    atomic_store(&wd_start, now_ns());
    atomic_store(&wd_op, op);
}

static void watch_end(void) {
    atomic_store(&wd_op, NULL);
}

void tide_dist_set_timeout(double seconds) {
    g_timeout = seconds > 0 ? seconds : 0;
}

double tide_dist_timeout(void) {
    return g_timeout;
}

/* ---- the job ------------------------------------------------------------------------------ */

static void finalize_at_exit(void) {
    tide_dist_finalize();
}

static tide_status mpi_bcast_bytes(void *buf, size_t bytes, int root) {
    return slots[0].p->broadcast(buf, bytes, TIDE_DTYPE_U8, root, NULL);
}

tide_status tide_dist_init(tide_dist_backend b) {
    if (g_init)
        return tide_seterr(TIDE_EINVAL,
                           "dist.init: already initialized (rank %d of %d); call it "
                           "once per process",
                           g_rank, g_world);
    if (g_finalized)
        return tide_seterr(TIDE_EINVAL, "dist.init: the job was finalized; MPI cannot start twice "
                                        "in one process");
    plugin_slot *mpi = slot(TIDE_DIST_MPI);
    if (!mpi->p)
        return tide_seterr(TIDE_EBACKEND, "dist.init: MPI is not available: %s", mpi->reason);
    int want_nccl =
        b == TIDE_DIST_NCCL || (b == TIDE_DIST_AUTO && tide_dist_is_available(TIDE_DIST_NCCL));
    plugin_slot *nccl = want_nccl ? slot(TIDE_DIST_NCCL) : NULL;
    if (b == TIDE_DIST_NCCL && !nccl->p)
        return tide_seterr(TIDE_EBACKEND,
                           "dist.init: NCCL is not available: %s; use backend = \"mpi\" for CPU "
                           "tensors",
                           nccl->reason);
    watch_begin("dist.init");
    tide_status st = mpi->p->init(NULL, &g_rank, &g_world, &g_local);
    watch_end();
    if (st != TIDE_OK)
        return st;
    mpi->initialized = 1;
    g_init = 1;
    /* MPI requires MPI_Finalize before exit: a program that ends without dist.finalize() (or
     * with an error) must not be reported by mpirun as a rank that died */
    static int registered;
    if (!registered++)
        atexit(finalize_at_exit);
    if (nccl && nccl->p) {
        /* NCCL makes its communicator on the current device: this rank's local GPU */
        int          n = tide_device_count(nccl_devices());
        tide_device *dev = NULL;
        st = tide_device_get_index(nccl_devices(), n > 0 ? g_local % n : 0, &dev);
        void *stream = NULL;
        if (st == TIDE_OK && dev->backend->stream)
            st = dev->backend->stream(dev, &stream);
        if (st != TIDE_OK)
            return st;
        tide_dist_host host = {g_rank, g_world, g_local, mpi_bcast_bytes};
        int            r, w, l;
        watch_begin("dist.init");
        st = nccl->p->init(&host, &r, &w, &l);
        watch_end();
        if (st != TIDE_OK)
            return st;
        nccl->initialized = 1;
    }
    return TIDE_OK;
}

int tide_dist_is_initialized(void) {
    return g_init;
}
int tide_dist_rank(void) {
    return g_rank;
}
int tide_dist_world_size(void) {
    return g_world;
}
int tide_dist_local_rank(void) {
    return g_local;
}
int tide_dist_has_backend(tide_dist_backend b) {
    return g_init && b != TIDE_DIST_AUTO && slots[b == TIDE_DIST_NCCL].initialized;
}

/* ---- collectives -------------------------------------------------------------------------- */

/* the engine for t's device, or an error naming what to do */
static tide_status engine(const char *op, const tide_tensor *t, const tide_dist_plugin **p,
                          void **stream) {
    if (!g_init)
        return tide_seterr(TIDE_EINVAL,
                           "%s: the job is not started; call dist.init() first, in a program "
                           "started by mpirun -np N",
                           op);
    tide_device *dev = tide_tensor_device(t);
    *stream = NULL;
    if (tide_device_type_of(dev) != TIDE_DEVICE_CPU && tide_device_type_of(dev) == nccl_devices()) {
        if (!slots[1].initialized) {
            const char *why = tide_dist_unavailable_reason(TIDE_DIST_NCCL);
            return tide_seterr(TIDE_EDEVICE,
                               "%s: the tensor is on %s and CUDA tensors go over NCCL, which %s "
                               "(rank %d); install NCCL (pip install nvidia-nccl-cu12, or the "
                               "system's libnccl2) and call dist.init{backend = \"nccl\"}, or move "
                               "the tensor explicitly with t:to(\"cpu\")",
                               op, tide_device_name(dev),
                               why ? why : "this job did not start (dist.init{backend = \"mpi\"})",
                               g_rank);
        }
        *p = slots[1].p;
        if (dev->backend->stream) {
            tide_status st = dev->backend->stream(dev, stream);
            if (st != TIDE_OK)
                return st;
        }
        return TIDE_OK;
    }
    if (!slots[0].initialized)
        return tide_seterr(TIDE_EINVAL, "%s: the job was finalized (rank %d)", op, g_rank);
    *p = slots[0].p;
    return TIDE_OK;
}

static tide_status check_op(const char *op, const tide_tensor *t, tide_dist_op rop) {
    if (rop == TIDE_DIST_MEAN && !tide_dtype_is_float(tide_tensor_dtype(t)))
        return tide_seterr(TIDE_EDTYPE,
                           "%s: op \"mean\" needs a floating dtype, got %s; use op = \"sum\" or "
                           "convert with t:float()",
                           op, tide_dtype_name(tide_tensor_dtype(t)));
    if ((unsigned)rop > TIDE_DIST_MIN)
        return tide_seterr(TIDE_EINVAL, "%s: unknown reduction %d", op, (int)rop);
    return TIDE_OK;
}

/* rank r's failure, with its rank: the message a user reads in a log of N ranks' output */
static tide_status ranked(tide_status st, const char *op) {
    if (st == TIDE_OK)
        return st;
    const char *m = tide_errmsg();
    if (strncmp(m, "tide: ", 6) == 0)
        m += 6;
    if (strncmp(m, op, strlen(op)) == 0)
        return st; /* already says which call */
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", m);
    return tide_seterr(st, "%s: %s (rank %d of %d)", op, copy, g_rank, g_world);
}

/* a contiguous tensor to hand to the engine: t itself, or a contiguous copy (*tmp) */
static tide_status contiguous(tide_ctx *ctx, const tide_tensor *t, tide_tensor **tmp) {
    *tmp = NULL;
    if (tide_tensor_is_contiguous(t))
        return TIDE_OK;
    return tide_tensor_contiguous(ctx, t, tmp);
}

tide_status tide_dist_all_reduce(tide_ctx *ctx, tide_tensor *t, tide_dist_op op) {
    const tide_dist_plugin *p = NULL;
    void                   *stream;
    TIDE_TRY(engine("all_reduce", t, &p, &stream));
    TIDE_TRY(check_op("all_reduce", t, op));
    tide_tensor *c;
    TIDE_TRY(contiguous(ctx, t, &c));
    tide_tensor *buf = c ? c : t;
    watch_begin("all_reduce");
    tide_status st = p->all_reduce(tide_tensor_data(buf), (size_t)tide_tensor_numel(buf),
                                   tide_tensor_dtype(buf), op, stream, NULL);
    watch_end();
    if (st == TIDE_OK && c)
        st = tide_tensor_copy_(ctx, t, c);
    else if (st == TIDE_OK)
        tide_tensor_bump_version(t, 0);
    tide_tensor_release(c);
    return ranked(st, "all_reduce");
}

struct tide_dist_work {
    const tide_dist_plugin *p;
    void                   *req;
    tide_tensor            *t;
};

tide_status tide_dist_all_reduce_start(tide_tensor *t, tide_dist_op op, tide_dist_work **w) {
    *w = NULL;
    const tide_dist_plugin *p = NULL;
    void                   *stream;
    TIDE_TRY(engine("all_reduce", t, &p, &stream));
    TIDE_TRY(check_op("all_reduce", t, op));
    if (!tide_tensor_is_contiguous(t))
        return tide_seterr(TIDE_EINVAL, "all_reduce: an asynchronous reduction needs a contiguous "
                                        "tensor; call t:contiguous() first");
    tide_dist_work *work = calloc(1, sizeof *work);
    if (!work)
        return tide_seterr(TIDE_ENOMEM, "all_reduce: out of memory");
    work->p = p;
    work->t = t;
    tide_tensor_retain(t);
    watch_begin("all_reduce");
    tide_status st = p->all_reduce(tide_tensor_data(t), (size_t)tide_tensor_numel(t),
                                   tide_tensor_dtype(t), op, stream, &work->req);
    watch_end();
    if (st != TIDE_OK) {
        tide_tensor_release(t);
        free(work);
        return ranked(st, "all_reduce");
    }
    *w = work;
    return TIDE_OK;
}

tide_status tide_dist_wait(tide_dist_work *w) {
    if (!w)
        return TIDE_OK;
    tide_status st = TIDE_OK;
    if (w->req) {
        watch_begin("all_reduce (wait)");
        st = w->p->wait(w->req);
        watch_end();
    }
    tide_tensor_bump_version(w->t, 0);
    tide_tensor_release(w->t);
    free(w);
    return ranked(st, "all_reduce");
}

tide_status tide_dist_broadcast(tide_ctx *ctx, tide_tensor *t, int src) {
    const tide_dist_plugin *p = NULL;
    void                   *stream;
    TIDE_TRY(engine("broadcast", t, &p, &stream));
    if (src < 0 || src >= g_world)
        return tide_seterr(TIDE_EINDEX,
                           "broadcast: source rank %d does not exist: ranks are 0 to %d", src,
                           g_world - 1);
    tide_tensor *c;
    TIDE_TRY(contiguous(ctx, t, &c));
    tide_tensor *buf = c ? c : t;
    watch_begin("broadcast");
    tide_status st = p->broadcast(tide_tensor_data(buf), (size_t)tide_tensor_numel(buf),
                                  tide_tensor_dtype(buf), src, stream);
    watch_end();
    if (st == TIDE_OK && c)
        st = tide_tensor_copy_(ctx, t, c);
    else if (st == TIDE_OK)
        tide_tensor_bump_version(t, 0);
    tide_tensor_release(c);
    return ranked(st, "broadcast");
}

/* all_gather (gather 1) and reduce_scatter (with op): t, made contiguous, into a new tensor *out
 * of nd dims and shape on t's device */
static tide_status into_new(tide_ctx *ctx, const tide_dist_plugin *p, void *stream,
                            const tide_tensor *t, int nd, const int64_t *shape, int gather,
                            tide_dist_op op, tide_tensor **out) {
    const char  *name = gather ? "all_gather" : "reduce_scatter";
    tide_tensor *c, *res;
    TIDE_TRY(contiguous(ctx, t, &c));
    const tide_tensor *buf = c ? c : t;
    tide_status        st =
        tide_tensor_empty(ctx, tide_tensor_device(t), tide_tensor_dtype(t), nd, shape, &res);
    if (st == TIDE_OK) {
        watch_begin(name);
        if (gather)
            st = p->all_gather(tide_tensor_data(buf), tide_tensor_data(res),
                               (size_t)tide_tensor_numel(buf), tide_tensor_dtype(buf), stream);
        else
            st = p->reduce_scatter(tide_tensor_data(buf), tide_tensor_data(res),
                                   (size_t)tide_tensor_numel(res), tide_tensor_dtype(buf), op,
                                   stream);
        watch_end();
        if (st != TIDE_OK)
            tide_tensor_release(res);
        else
            *out = res;
    }
    tide_tensor_release(c);
    return ranked(st, name);
}

tide_status tide_dist_all_gather(tide_ctx *ctx, const tide_tensor *t, tide_tensor **out) {
    *out = NULL;
    const tide_dist_plugin *p = NULL;
    void                   *stream;
    TIDE_TRY(engine("all_gather", t, &p, &stream));
    int nd = tide_tensor_ndim(t);
    if (nd + 1 > TIDE_MAX_DIMS)
        return tide_seterr(TIDE_ESHAPE,
                           "all_gather: a %d-d tensor gathers into %d dims, more than "
                           "the %d tide has",
                           nd, nd + 1, TIDE_MAX_DIMS);
    int64_t shape[TIDE_MAX_DIMS];
    shape[0] = g_world;
    memcpy(shape + 1, tide_tensor_shape(t), (size_t)nd * sizeof shape[0]);
    return into_new(ctx, p, stream, t, nd + 1, shape, 1, TIDE_DIST_SUM, out);
}

tide_status tide_dist_reduce_scatter(tide_ctx *ctx, const tide_tensor *t, tide_dist_op op,
                                     tide_tensor **out) {
    *out = NULL;
    const tide_dist_plugin *p = NULL;
    void                   *stream;
    TIDE_TRY(engine("reduce_scatter", t, &p, &stream));
    TIDE_TRY(check_op("reduce_scatter", t, op));
    int nd = tide_tensor_ndim(t);
    if (nd == 0 || tide_tensor_shape(t)[0] % g_world != 0)
        return tide_seterr(TIDE_ESHAPE,
                           "reduce_scatter: the first dimension (%lld) must split into %d equal "
                           "chunks, one per rank; pad it to a multiple of dist.world_size()",
                           nd ? (long long)tide_tensor_shape(t)[0] : 0LL, g_world);
    int64_t shape[TIDE_MAX_DIMS];
    memcpy(shape, tide_tensor_shape(t), (size_t)nd * sizeof shape[0]);
    shape[0] /= g_world;
    return into_new(ctx, p, stream, t, nd, shape, 0, op, out);
}

tide_status tide_dist_barrier(void) {
    if (!g_init || !slots[0].initialized)
        return tide_seterr(TIDE_EINVAL, "barrier: the job is not started; call dist.init() first");
    watch_begin("barrier");
    tide_status st = slots[0].p->barrier();
    watch_end();
    return ranked(st, "barrier");
}

tide_status tide_dist_finalize(void) {
    if (!g_init)
        return TIDE_OK;
    tide_status st = TIDE_OK;
    if (slots[1].initialized) {
        st = slots[1].p->finalize();
        slots[1].initialized = 0;
    }
    if (slots[0].initialized) {
        watch_begin("finalize");
        tide_status s2 = slots[0].p->finalize();
        watch_end();
        if (st == TIDE_OK)
            st = s2;
        slots[0].initialized = 0;
    }
    g_init = 0;
    g_finalized = 1;
    g_rank = 0;
    g_world = 1;
    g_local = 0;
    return ranked(st, "finalize");
}
