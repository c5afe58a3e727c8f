/* ops_rnn.c — one fused step of a recurrent cell (RNN, LSTM, GRU) and its gradient. nn runs the
 * projections of all time steps as gemms and calls this once per step for the gates, so the
 * time loop does one kernel a step instead of a dozen small elementwise ops. */
#include "tide_impl.h"
#include "shape.h"
#include <string.h>

static const char *const kind_names[] = {"rnn_tanh", "rnn_relu", "lstm", "gru"};

/* gates per hidden unit */
static int64_t gate_count(tide_rnn_kind kind) {
    return kind == TIDE_RNN_LSTM ? 4 : kind == TIDE_RNN_GRU ? 3 : 1;
}

static tide_status check_kind(const char *op, tide_rnn_kind kind) {
    if ((int)kind < TIDE_RNN_TANH || (int)kind > TIDE_RNN_GRU)
        return tide_seterr(TIDE_EINVAL,
                           "%s: unknown cell kind %d; use 0 (tanh), 1 (relu), 2 "
                           "(lstm) or 3 (gru)",
                           op, (int)kind);
    return TIDE_OK;
}

/* t must be a 2-D [rows, cols] float tensor of ref's dtype and device (ref may be t) */
static tide_status check_2d(const char *op, const char *what, const tide_tensor *t,
                            const tide_tensor *ref, int64_t rows, int64_t cols) {
    if (t == NULL)
        return tide_seterr(TIDE_EINVAL, "%s: %s is required for this cell kind", op, what);
    if (t != ref)
        TIDE_TRY(tide_check_same_device(op, ref, t));
    if (!tide_dtype_is_float(t->dtype) || t->dtype != ref->dtype)
        return tide_seterr(TIDE_EDTYPE,
                           "%s: %s must be floating point of one dtype with gi (%s), "
                           "got %s",
                           op, what, tide_dtype_name(ref->dtype), tide_dtype_name(t->dtype));
    if (t->ndim != 2 || t->shape[0] != rows || t->shape[1] != cols) {
        char sb[200];
        tide_shape_fmt(sb, sizeof sb, t->ndim, t->shape);
        return tide_seterr(TIDE_ESHAPE, "%s: %s must have shape [%lld, %lld], got %s", op, what,
                           (long long)rows, (long long)cols, sb);
    }
    return TIDE_OK;
}

static tide_kview kview_or_empty(const tide_tensor *t) {
    tide_kview v;
    if (t)
        return tide_kview_of(t);
    memset(&v, 0, sizeof v);
    return v;
}

/* allocates the n outputs (rows x cols[i]; cols[i] == 0: not made); on failure none is kept */
static tide_status alloc_outs(tide_ctx *ctx, const char *op, const tide_tensor *ref, int n,
                              const int64_t *cols, tide_tensor ***outs) {
    for (int i = 0; i < n; i++)
        *outs[i] = NULL;
    for (int i = 0; i < n; i++) {
        if (cols[i] == 0)
            continue;
        int64_t     shape[2] = {ref->shape[0], cols[i]};
        tide_status st =
            tide_tensor_alloc(ctx, op, ref->storage->dev, ref->dtype, 2, shape, outs[i]);
        if (st != TIDE_OK) {
            for (int j = 0; j < i; j++) {
                tide_tensor_release(*outs[j]);
                *outs[j] = NULL;
            }
            return st;
        }
    }
    return TIDE_OK;
}

static void drop_outs(int n, tide_tensor ***outs) {
    for (int i = 0; i < n; i++) {
        tide_tensor_release(*outs[i]);
        *outs[i] = NULL;
    }
}

tide_status tide_rnn_cell(tide_ctx *ctx, tide_rnn_kind kind, const tide_tensor *gi,
                          const tide_tensor *gh, const tide_tensor *prev, tide_tensor **out,
                          tide_tensor **saved) {
    static const char op[] = "rnn_cell";
    TIDE_TRY(check_kind(op, kind));
    int64_t G = gate_count(kind);
    if (gi == NULL || gi->ndim != 2 || gi->shape[1] % G != 0 || gi->shape[1] == 0) {
        char sb[200] = "none";
        if (gi)
            tide_shape_fmt(sb, sizeof sb, gi->ndim, gi->shape);
        return tide_seterr(TIDE_ESHAPE, "%s: gi must be [B, %lld*H] for a %s cell, got %s", op,
                           (long long)G, kind_names[kind], sb);
    }
    int64_t B = gi->shape[0], H = gi->shape[1] / G;
    TIDE_TRY(check_2d(op, "gi", gi, gi, B, G * H));
    TIDE_TRY(check_2d(op, "gh", gh, gi, B, G * H));
    int has_prev = kind == TIDE_RNN_LSTM || kind == TIDE_RNN_GRU;
    if (has_prev)
        TIDE_TRY(check_2d(op, kind == TIDE_RNN_LSTM ? "c" : "h", prev, gi, B, H));
    else
        prev = NULL;
    const tide_tensor *in[3] = {gi, gh, prev};
    tide_tensor       *c[3];
    TIDE_TRY(tide_contiguous_all(ctx, 3, in, c));
    tide_tensor  *sv = NULL;
    int64_t       cols[2] = {kind == TIDE_RNN_LSTM ? 2 * H : H, has_prev ? 4 * H : 0};
    tide_tensor **outs[2] = {out, &sv};
    tide_status   st = alloc_outs(ctx, op, gi, 2, cols, outs);
    tide_device  *dev = gi->storage->dev;
    if (st == TIDE_OK && B > 0) {
        tide_entry_rnn_cell_fn fn;
        st = tide_entry_rnn_cell(dev, op, &fn);
        if (st == TIDE_OK) {
            tide_kview ov = tide_kview_of(*out), sw = kview_or_empty(sv);
            tide_kview iv = tide_kview_of(c[0]), hv = tide_kview_of(c[1]),
                       pv = kview_or_empty(c[2]);
            st = fn(dev, kind, &ov, sv ? &sw : NULL, &iv, &hv, c[2] ? &pv : NULL);
        }
        if (st != TIDE_OK) {
            drop_outs(2, outs);
            st = tide_err_op(st, op);
        }
    }
    tide_release_all(3, c);
    if (st == TIDE_OK) {
        if (saved)
            *saved = sv;
        else
            tide_tensor_release(sv);
    }
    return st;
}

tide_status tide_rnn_cell_backward(tide_ctx *ctx, tide_rnn_kind kind, const tide_tensor *saved,
                                   const tide_tensor *prev, const tide_tensor *out,
                                   const tide_tensor *grad_out, tide_tensor **dgi,
                                   tide_tensor **dgh, tide_tensor **dprev) {
    static const char op[] = "rnn_cell_backward";
    TIDE_TRY(check_kind(op, kind));
    int64_t G = gate_count(kind), ow = kind == TIDE_RNN_LSTM ? 2 : 1;
    if (out == NULL || out->ndim != 2 || out->shape[1] % ow != 0 || out->shape[1] == 0)
        return tide_seterr(TIDE_ESHAPE, "%s: out must be [B, %lld*H]", op, (long long)ow);
    int64_t B = out->shape[0], H = out->shape[1] / ow;
    TIDE_TRY(check_2d(op, "out", out, out, B, ow * H));
    TIDE_TRY(check_2d(op, "grad_out", grad_out, out, B, ow * H));
    int has_prev = kind == TIDE_RNN_LSTM || kind == TIDE_RNN_GRU;
    if (has_prev) {
        TIDE_TRY(check_2d(op, "saved", saved, out, B, 4 * H));
        TIDE_TRY(check_2d(op, "prev", prev, out, B, H));
    } else {
        saved = prev = NULL;
    }
    const tide_tensor *in[4] = {saved, prev, out, grad_out};
    tide_tensor       *c[4];
    TIDE_TRY(tide_contiguous_all(ctx, 4, in, c));
    tide_tensor  *gh_ = NULL, *dp_ = NULL;
    tide_tensor **dgh_out = dgh ? dgh : &gh_, **dprev_out = dprev ? dprev : &dp_;
    int64_t       cols[3] = {G * H, kind == TIDE_RNN_GRU ? G * H : 0, has_prev ? H : 0};
    tide_tensor **outs[3] = {dgi, dgh_out, dprev_out};
    tide_status   st = alloc_outs(ctx, op, out, 3, cols, outs);
    tide_device  *dev = out->storage->dev;
    if (st == TIDE_OK && B > 0) {
        tide_entry_rnn_cell_backward_fn fn;
        st = tide_entry_rnn_cell_backward(dev, op, &fn);
        if (st == TIDE_OK) {
            tide_kview iv = tide_kview_of(*dgi), hv = kview_or_empty(*dgh_out),
                       pv = kview_or_empty(*dprev_out), sv = kview_or_empty(c[0]),
                       qv = kview_or_empty(c[1]), ov = tide_kview_of(c[2]),
                       gv = tide_kview_of(c[3]);
            st = fn(dev, kind, &iv, *dgh_out ? &hv : NULL, *dprev_out ? &pv : NULL,
                    c[0] ? &sv : NULL, c[1] ? &qv : NULL, &ov, &gv);
        }
        if (st != TIDE_OK) {
            drop_outs(3, outs);
            st = tide_err_op(st, op);
        }
    }
    tide_release_all(4, c);
    tide_tensor_release(gh_);
    tide_tensor_release(dp_);
    return st;
}
