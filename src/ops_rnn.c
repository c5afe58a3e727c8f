/* ops_rnn.c — one fused step of a recurrent cell (RNN, LSTM, GRU) and its gradient, the C API
 * over the kernel rows rnn_step, lstm_step, gru_step and their _backward rows
 * (include/tide_kernels.def: they check the shapes, dtypes and devices). nn runs the projections
 * of all time steps as gemms and one step a time step for the gates, so the time loop does one
 * kernel a step instead of a dozen small elementwise ops. */
#include "tide_impl.h"

static tide_status check_kind(const char *op, tide_rnn_kind kind) {
    if ((int)kind < TIDE_RNN_TANH || (int)kind > TIDE_RNN_GRU)
        return tide_seterr(TIDE_EINVAL,
                           "%s: unknown cell kind %d; use 0 (tanh), 1 (relu), 2 "
                           "(lstm) or 3 (gru)",
                           op, (int)kind);
    return TIDE_OK;
}

/* H from t's last dim of width * H values (at least 1: a size that does not divide is then
 * refused by the row, naming the shape) */
static int64_t hidden_of(const tide_tensor *t, int64_t width) {
    int64_t h = t && t->ndim ? t->shape[t->ndim - 1] / width : 0;
    return h > 0 ? h : 1;
}

tide_status tide_rnn_cell(tide_ctx *ctx, tide_rnn_kind kind, const tide_tensor *gi,
                          const tide_tensor *gh, const tide_tensor *prev, tide_tensor **out,
                          tide_tensor **saved) {
    TIDE_TRY(check_kind("rnn_cell", kind));
    static const tide_kernel rows[] = {TIDE_K_RNN_STEP, TIDE_K_RNN_STEP, TIDE_K_LSTM_STEP,
                                       TIDE_K_GRU_STEP};
    static const int64_t     gates[] = {1, 1, 4, 3};
    tide_kernel_scalar p[2] = {{.i = hidden_of(gi, gates[kind])}, {.i = kind == TIDE_RNN_RELU}};
    const tide_tensor *in[3] = {gi, gh, prev};
    tide_tensor       *o[2] = {NULL, NULL};
    TIDE_TRY(tide_kernel_run(ctx, rows[kind], in, p, NULL, o));
    *out = o[0];
    if (saved)
        *saved = o[1];
    else
        tide_tensor_release(o[1]);
    return TIDE_OK;
}

tide_status tide_rnn_cell_backward(tide_ctx *ctx, tide_rnn_kind kind, const tide_tensor *saved,
                                   const tide_tensor *prev, const tide_tensor *out,
                                   const tide_tensor *grad_out, tide_tensor **dgi,
                                   tide_tensor **dgh, tide_tensor **dprev) {
    TIDE_TRY(check_kind("rnn_cell_backward", kind));
    static const tide_kernel rows[] = {TIDE_K_RNN_STEP_BACKWARD, TIDE_K_RNN_STEP_BACKWARD,
                                       TIDE_K_LSTM_STEP_BACKWARD, TIDE_K_GRU_STEP_BACKWARD};
    tide_kernel_scalar       p[2] = {{.i = hidden_of(out, kind == TIDE_RNN_LSTM ? 2 : 1)},
                                     {.i = kind == TIDE_RNN_RELU}};
    const tide_tensor       *in[4] = {out, grad_out, saved, prev};
    tide_tensor             *o[3] = {NULL, NULL, NULL};
    TIDE_TRY(tide_kernel_run(ctx, rows[kind], in, p, NULL, o));
    /* the rows' outputs: dgates (RNN); dgates, dc (LSTM); dgi, dgh, dh (GRU) */
    tide_tensor *gh_ = kind == TIDE_RNN_GRU ? o[1] : NULL;
    tide_tensor *dp_ = kind == TIDE_RNN_GRU ? o[2] : kind == TIDE_RNN_LSTM ? o[1] : NULL;
    *dgi = o[0];
    if (dgh)
        *dgh = gh_;
    else
        tide_tensor_release(gh_);
    if (dprev)
        *dprev = dp_;
    else
        tide_tensor_release(dp_);
    return TIDE_OK;
}
