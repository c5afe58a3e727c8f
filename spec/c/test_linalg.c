/* test_linalg.c — tide_linalg_eig (LAPACK's geev: PyTorch 1.13's eigenvalues and eigenvectors of
 * a matrix with a complex pair, the eigenvalues alone, 0 x 0 and NaN), and tide_linalg_ldl_factor
 * and tide_linalg_ldl_solve on the CPU (LAPACK's sytrf and sytrs): PyTorch 1.13's LD and pivots for
 * a 2x2 block and a batch (the values of spec/fixtures/tensor_gaps_torch.lua), the info of a
 * singular D, 0 x 0 matrices, A x = b past sytrf's block size in float32 and float64, and the
 * errors, pivots that would send sytrs out of bounds among them; tide_linalg_lu_factor of tall,
 * wide and empty matrices; the MATRIX kernel rows' own rules (tide_kernel_run). Runs with
 * TIDE_CPU_DEVICES=2. */
#include "test_util.h"
#include "tide.h"

#include <stdint.h>
#include <stdlib.h>

static tide_device *cpu0, *cpu1;

/* a new contiguous tensor on dev holding vals (n of them, converted to dt) */
static tide_tensor *make(tide_device *dev, tide_dtype dt, int ndim, const int64_t *shape,
                         const double *vals) {
    tide_tensor *t = NULL;
    if (tide_tensor_empty(NULL, dev, dt, ndim, shape, &t) != TIDE_OK) {
        fprintf(stderr, "make: %s\n", tide_errmsg());
        exit(2);
    }
    int64_t n = tide_tensor_numel(t);
    for (int64_t i = 0; vals && i < n; i++) {
        if (dt == TIDE_DTYPE_F32)
            ((float *)tide_tensor_data(t))[i] = (float)vals[i];
        else if (dt == TIDE_DTYPE_F64)
            ((double *)tide_tensor_data(t))[i] = vals[i];
        else
            ((int64_t *)tide_tensor_data(t))[i] = (int64_t)vals[i];
    }
    return t;
}

static double at(const tide_tensor *t, int64_t i) {
    switch (tide_tensor_dtype(t)) {
    case TIDE_DTYPE_F32:
        return ((const float *)tide_tensor_data(t))[i];
    case TIDE_DTYPE_I64:
        return (double)((const int64_t *)tide_tensor_data(t))[i];
    case TIDE_DTYPE_I32:
        return ((const int32_t *)tide_tensor_data(t))[i];
    default:
        return ((const double *)tide_tensor_data(t))[i];
    }
}

/* |got - want| <= tol for all n; prints the first miss */
static int same(const char *what, const tide_tensor *t, const double *want, int64_t n, double tol) {
    if (!t || tide_tensor_numel(t) != n) {
        fprintf(stderr, "%s: no result of %lld elements\n", what, (long long)n);
        return 0;
    }
    for (int64_t i = 0; i < n; i++)
        if (!(fabs(at(t, i) - want[i]) <= tol)) {
            fprintf(stderr, "%s[%lld] = %.17g, expected %.17g\n", what, (long long)i, at(t, i),
                    want[i]);
            return 0;
        }
    return 1;
}

/* LDL_BATCH of the fixture: an SPD matrix, one with a 1x1 swap, one with a 2x2 block; PyTorch's
 * LD, pivots and solution of B3 */
static const double batch_a[3][9] = {
    {4, 2, 0.6, 2, 5, 1, 0.6, 1, 3}, {1, 2, 0, 2, 8, 1, 0, 1, 3}, {0, 1, 2, 1, 0, 3, 2, 3, 0.5}};
static const double batch_ld[3][9] = {{4, 0, 0, 0.5, 4, 0, 0.15, 0.175, 2.7875},
                                      {8, 0, 0, 0.25, 0.5, 0, 0.125, -0.5, 2.75},
                                      {0, 0, 0, 2, 0.5, 0, 1.375, 0.5, -2.875}};
static const double batch_piv[9] = {1, 2, 3, 2, 2, 3, -3, -3, 3};
static const double b3[6] = {1, 0.5, 2, -1, 3, 0.25};
static const double batch_x[18] = {
    0.004484304932735439, 0.27242152466367714,  0.21255605381165921, -0.33721973094170404,
    0.92825112107623309,  0.14125560538116591,  1.5454545454545454,  1.6363636363636362,
    -0.27272727272727271, -0.56818181818181812, 1.0909090909090908,  0.27272727272727271,
    0.95652173913043481,  -0.80434782608695654, 0.30434782608695654, 0.63043478260869568,
    0.34782608695652173,  -0.065217391304347838};

static void test_ldl_values(tide_dtype dt, double tol) {
    int64_t      sa[3] = {3, 3, 3}, sb[3] = {3, 3, 2};
    double       bb[18];
    tide_tensor *a = make(cpu0, dt, 3, sa, batch_a[0]), *ld = NULL, *piv = NULL, *info = NULL;
    for (int i = 0; i < 18; i++) /* B3 for each matrix */
        bb[i] = b3[i % 6];
    tide_tensor *b = make(cpu0, dt, 3, sb, bb), *x = NULL;
    CHECK_OK(tide_linalg_ldl_factor(NULL, a, &ld, &piv, &info));
    CHECK(ld && tide_tensor_dtype(ld) == dt && tide_tensor_ndim(ld) == 3);
    CHECK(piv && tide_tensor_dtype(piv) == TIDE_DTYPE_I64 && tide_tensor_ndim(piv) == 2);
    CHECK(info && tide_tensor_dtype(info) == TIDE_DTYPE_I32 && tide_tensor_ndim(info) == 1);
    static const double zeros[3] = {0, 0, 0};
    CHECK(same("LD", ld, batch_ld[0], 27, tol));
    CHECK(same("pivots", piv, batch_piv, 9, 0));
    CHECK(same("info", info, zeros, 3, 0));
    CHECK_OK(tide_linalg_ldl_solve(NULL, ld, piv, b, &x));
    CHECK(same("x", x, batch_x, 18, tol * 10));
    tide_tensor *all[6] = {a, ld, piv, info, b, x};
    for (int i = 0; i < 6; i++)
        tide_tensor_release(all[i]);
}

/* a singular D is a result (info: the first zero on its diagonal), not an error; 0 x 0
 * matrices: info 0 */
static void test_ldl_singular_and_empty(void) {
    int64_t      s2[2] = {2, 2}, s00[3] = {2, 0, 0};
    double       sing[4] = {1, 2, 2, 4}, ld_want[4] = {4, 0, 0.5, 0}, piv_want[2] = {2, 2};
    tide_tensor *a = make(cpu0, TIDE_DTYPE_F64, 2, s2, sing), *ld = NULL, *piv = NULL;
    tide_tensor *info = NULL;
    CHECK_OK(tide_linalg_ldl_factor(NULL, a, &ld, &piv, &info));
    CHECK(same("singular LD", ld, ld_want, 4, 0));
    CHECK(same("singular pivots", piv, piv_want, 2, 0));
    CHECK(info && tide_tensor_ndim(info) == 0 && at(info, 0) == 2);
    tide_tensor *e = make(cpu0, TIDE_DTYPE_F32, 3, s00, NULL), *eld = NULL, *epiv = NULL;
    tide_tensor *einfo = NULL;
    CHECK_OK(tide_linalg_ldl_factor(NULL, e, &eld, &epiv, &einfo));
    static const double zeros[2] = {0, 0};
    CHECK(same("0 x 0 info", einfo, zeros, 2, 0));
    CHECK(epiv && tide_tensor_numel(epiv) == 0 && tide_tensor_shape(epiv)[0] == 2);
    tide_tensor *all[8] = {a, ld, piv, info, e, eld, epiv, einfo};
    for (int i = 0; i < 8; i++)
        tide_tensor_release(all[i]);
}

/* A x = b for symmetric indefinite matrices larger than sytrf's block (its blocked code) */
static void test_ldl_residual(tide_dtype dt, int64_t n, double tol) {
    int64_t  sa[2] = {n, n}, sb[2] = {n, 3};
    double  *av = malloc(sizeof(double) * (size_t)(n * n)), bv[3 * 200];
    uint64_t r = 88172645463325252ull;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j <= i; j++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            av[i * n + j] = av[j * n + i] = (double)(r >> 11) / 9007199254740992.0 * 2 - 1;
        }
    for (int64_t i = 0; i < n * 3; i++)
        bv[i] = (double)(i % 7) - 3;
    tide_tensor *a = make(cpu0, dt, 2, sa, av), *b = make(cpu0, dt, 2, sb, bv);
    tide_tensor *ld = NULL, *piv = NULL, *info = NULL, *x = NULL;
    CHECK_OK(tide_linalg_ldl_factor(NULL, a, &ld, &piv, &info));
    CHECK_OK(tide_linalg_ldl_solve(NULL, ld, piv, b, &x));
    double worst = 0, scale = 0;
    for (int64_t i = 0; x && i < n; i++)
        for (int64_t c = 0; c < 3; c++) {
            double s = -bv[i * 3 + c];
            for (int64_t k = 0; k < n; k++)
                s += at(a, i * n + k) * at(x, k * 3 + c);
            worst = fmax(worst, fabs(s));
            scale = fmax(scale, fabs(at(x, i * 3 + c)));
        }
    CHECK(x != NULL && worst <= tol * (1 + scale) * (double)n);
    tide_tensor *all[6] = {a, b, ld, piv, info, x};
    for (int i = 0; i < 6; i++)
        tide_tensor_release(all[i]);
    free(av);
}

static void test_ldl_errors(void) {
    int64_t       s23[2] = {2, 3}, s33[2] = {3, 3}, s31[2] = {3, 1}, s3[1] = {3}, s23b[2] = {2, 3};
    int64_t       s233[3] = {2, 3, 3}, s231[3] = {2, 3, 1};
    const double *spd = batch_a[0];
    tide_tensor  *rect = make(cpu0, TIDE_DTYPE_F64, 2, s23, NULL);
    tide_tensor  *ints = make(cpu0, TIDE_DTYPE_I64, 2, s33, spd);
    tide_tensor  *a = make(cpu0, TIDE_DTYPE_F64, 2, s33, spd),
                *b = make(cpu0, TIDE_DTYPE_F64, 2, s31, spd);
    tide_tensor *ld = NULL, *piv = NULL, *info = NULL, *x = NULL;
    CHECK_ERR(tide_linalg_ldl_factor(NULL, rect, &ld, &piv, &info), TIDE_ESHAPE,
              "tide: linalg.ldl_factor: expected square matrices, got 2 x 3");
    CHECK_ERR(tide_linalg_ldl_factor(NULL, ints, &ld, &piv, &info), TIDE_EDTYPE,
              "tide: linalg.ldl_factor: needs float32 or float64, got int64");
    CHECK(ld == NULL && piv == NULL && info == NULL);
    CHECK_OK(tide_linalg_ldl_factor(NULL, a, &ld, &piv, &info));
    /* pivots sytrs would follow out of the matrix, or into half a 2x2 block */
    static const double bad[3][3] = {{1, 2, 4}, {1, 0, 3}, {1, 2, -3}};
    static const char  *msg[3] = {"pivots hold 4 at 3 (matrix 1 of the batch)",
                                  "pivots hold 0 at 2 (matrix 1 of the batch)",
                                  "pivots hold -3 at 3 (matrix 1 of the batch)"};
    for (int i = 0; i < 3; i++) {
        tide_tensor *p = make(cpu0, TIDE_DTYPE_I64, 1, s3, bad[i]);
        CHECK_ERR(tide_linalg_ldl_solve(NULL, ld, p, b, &x), TIDE_EINVAL, msg[i]);
        tide_tensor_release(p);
    }
    /* the second matrix of a batch: its number in the message */
    double       twice[6] = {1, 2, 3, 1, -2, 3}, abatch[18], bbatch[6] = {1, 2, 3, 4, 5, 6};
    tide_tensor *p2 = make(cpu0, TIDE_DTYPE_I64, 2, s23b, twice);
    for (int i = 0; i < 18; i++)
        abatch[i] = spd[i % 9];
    tide_tensor *ab = make(cpu0, TIDE_DTYPE_F64, 3, s233, abatch);
    tide_tensor *bb = make(cpu0, TIDE_DTYPE_F64, 3, s231, bbatch);
    CHECK_ERR(tide_linalg_ldl_solve(NULL, ab, p2, bb, &x), TIDE_EINVAL,
              "tide: linalg.ldl_solve: pivots hold -2 at 2 (matrix 2 of the batch), which "
              "ldl_factor does not give; pass ldl_factor's own pivots");
    /* pivots of another batch, dtype or device */
    CHECK_ERR(tide_linalg_ldl_solve(NULL, ab, piv, bb, &x), TIDE_ESHAPE,
              "tide: linalg.ldl_solve: pivots must be ldl_factor's int64 [..., n]");
    tide_tensor *pf = make(cpu0, TIDE_DTYPE_F64, 1, s3, batch_piv);
    CHECK_ERR(tide_linalg_ldl_solve(NULL, ld, pf, b, &x), TIDE_ESHAPE,
              "tide: linalg.ldl_solve: pivots must be ldl_factor's int64 [..., n]");
    tide_tensor *p1 = make(cpu1, TIDE_DTYPE_I64, 1, s3, batch_piv);
    CHECK_ERR(tide_linalg_ldl_solve(NULL, ld, p1, b, &x), TIDE_EDEVICE,
              "tide: linalg.ldl_solve: expected all tensors on the same device");
    CHECK_ERR(tide_linalg_ldl_solve(NULL, ld, piv, rect, &x), TIDE_ESHAPE,
              "tide: linalg.ldl_solve: b must be [..., 3, k] with a's batch dims");
    CHECK(x == NULL);
    /* lu_solve takes its pivots through the same check: a shorter batch (which it read past
     * the end of) is refused */
    int64_t      s13[2] = {1, 3};
    tide_tensor *lpiv = make(cpu0, TIDE_DTYPE_I64, 2, s13, batch_piv);
    CHECK_ERR(tide_linalg_lu_solve(NULL, ab, lpiv, bb, &x), TIDE_ESHAPE,
              "tide: linalg.lu_solve: pivots must be lu_factor's int64 [..., n]");
    tide_tensor *all[14] = {rect, ints, a, b, ld, piv, info, p2, ab, bb, pf, p1, lpiv, x};
    for (int i = 0; i < 14; i++)
        tide_tensor_release(all[i]);
}

/* tide_linalg_lu_factor of rectangular matrices (getrf on m x n): PyTorch 1.13's LU and pivots
 * of a tall 4 x 2 and a batch of two wide 2 x 3, empty 3 x 0 and [2, 0, 2] matrices; lu_solve
 * still needs a square LU */
static void test_lu_rect(tide_dtype dt, double tol) {
    static const double tall[8] = {1, 2, 3, 4, 5, 6.5, 7, 8};
    static const double tall_lu[8] = {7,
                                      8,
                                      0.14285714285714285,
                                      0.8571428571428572,
                                      0.7142857142857142,
                                      0.9166666666666674,
                                      0.42857142857142855,
                                      0.6666666666666669};
    static const double tall_piv[2] = {4, 4};
    static const double wide[12] = {1, 2, 3, 4, 5, 6.5, 2, -1, 0.5, 1, 3, -2};
    static const double wide_lu[12] = {4, 5, 6.5, 0.25, 0.75, 1.375, 2, -1, 0.5, 0.5, 3.5, -2.25};
    static const double wide_piv[4] = {2, 2, 1, 2};
    int64_t             s42[2] = {4, 2}, s223[3] = {2, 2, 3}, s30[2] = {3, 0}, s202[3] = {2, 0, 2};
    int64_t             s41[2] = {4, 1};
    tide_tensor        *a = make(cpu0, dt, 2, s42, tall), *lu = NULL, *piv = NULL;
    CHECK_OK(tide_linalg_lu_factor(NULL, a, &lu, &piv));
    CHECK(lu && tide_tensor_ndim(lu) == 2 && tide_tensor_shape(lu)[0] == 4);
    CHECK(piv && tide_tensor_ndim(piv) == 1);
    CHECK(same("tall lu", lu, tall_lu, 8, tol));
    CHECK(same("tall pivots", piv, tall_piv, 2, 0));
    tide_tensor *w = make(cpu0, dt, 3, s223, wide), *wlu = NULL, *wpiv = NULL;
    CHECK_OK(tide_linalg_lu_factor(NULL, w, &wlu, &wpiv));
    CHECK(wpiv && tide_tensor_ndim(wpiv) == 2 && tide_tensor_shape(wpiv)[1] == 2);
    CHECK(same("wide lu", wlu, wide_lu, 12, tol));
    CHECK(same("wide pivots", wpiv, wide_piv, 4, 0));
    tide_tensor *e = make(cpu0, dt, 2, s30, NULL), *elu = NULL, *epiv = NULL;
    CHECK_OK(tide_linalg_lu_factor(NULL, e, &elu, &epiv));
    CHECK(elu && tide_tensor_numel(elu) == 0 && tide_tensor_shape(elu)[0] == 3);
    CHECK(epiv && tide_tensor_ndim(epiv) == 1 && tide_tensor_numel(epiv) == 0);
    tide_tensor *e2 = make(cpu0, dt, 3, s202, NULL), *e2lu = NULL, *e2piv = NULL;
    CHECK_OK(tide_linalg_lu_factor(NULL, e2, &e2lu, &e2piv));
    CHECK(e2lu && tide_tensor_ndim(e2lu) == 3 && tide_tensor_shape(e2lu)[2] == 2);
    CHECK(e2piv && tide_tensor_ndim(e2piv) == 2 && tide_tensor_shape(e2piv)[1] == 0);
    tide_tensor *b = make(cpu0, dt, 2, s41, tall), *x = NULL;
    CHECK_ERR(tide_linalg_lu_solve(NULL, lu, piv, b, &x), TIDE_ESHAPE,
              "tide: linalg.lu_solve: expected square matrices, got 4 x 2");
    CHECK(x == NULL);
    tide_tensor *all[13] = {a, lu, piv, w, wlu, wpiv, e, elu, epiv, e2, e2lu, e2piv, b};
    for (int i = 0; i < 13; i++)
        tide_tensor_release(all[i]);
}

/* eig of a 4 x 4 with a conjugate pair: PyTorch 1.13's values (torch.linalg.eig), as
 * (real, imaginary) pairs (in float32 sgeev's pair comes out negated, in PyTorch too); then the
 * eigenvalues alone (no v), a 0 x 0 batch and a NaN */
static void test_eig(tide_dtype dt, double tol) {
    static const double a[16] = {1, 2, 0, -1, -3, 1, 2, 0, 0.5, -1, 2, 1, 1, 0, -2, 0.5};
    static const double w_want[8] = {
        0.96535505836, 3.24626643355, 0.96535505836, -3.24626643355, 1.56928988328, 0, 1, 0};
    static const double v_re[16] = {
        0.0102840286366,  0.0102840286366,  0.420830222354,  -0.207390338946,
        0.693204840683,   0.693204840683,   -0.216216454579, 0.414780677892,
        0.00341802232998, 0.00341802232998, 0.569700413435,  -0.311085508419,
        -0.35516245699,   -0.35516245699,   -0.672007297322, 0.829561355784};
    static const double v_im[16] = {
        -0.536594411945,  0.536594411945,  0, 0, 0, 0, 0, 0, 0.320272185023, -0.320272185023, 0, 0,
        -0.0519749790506, 0.0519749790506, 0, 0};
    double v_want[32];
    for (int i = 0; i < 16; i++) {
        double sign = dt == TIDE_DTYPE_F32 && i % 4 < 2 ? -1 : 1;
        v_want[2 * i] = sign * v_re[i];
        v_want[2 * i + 1] = sign * v_im[i];
    }
    int64_t      s44[2] = {4, 4}, s200[3] = {2, 0, 0}, s22[2] = {2, 2};
    tide_tensor *m = make(cpu0, dt, 2, s44, a), *w = NULL, *v = NULL, *w2 = NULL;
    CHECK_OK(tide_linalg_eig(NULL, m, &w, &v));
    CHECK(w && tide_tensor_ndim(w) == 2 && tide_tensor_shape(w)[1] == 2);
    CHECK(v && tide_tensor_ndim(v) == 3 && tide_tensor_shape(v)[2] == 2);
    CHECK(same("eig w", w, w_want, 8, tol));
    CHECK(same("eig v", v, v_want, 32, tol));
    CHECK_OK(tide_linalg_eig(NULL, m, &w2, NULL));
    CHECK(same("eigvals w", w2, w_want, 8, tol));
    tide_tensor *e = make(cpu0, dt, 3, s200, NULL), *ew = NULL, *ev = NULL;
    CHECK_OK(tide_linalg_eig(NULL, e, &ew, &ev));
    CHECK(ew && tide_tensor_numel(ew) == 0 && tide_tensor_ndim(ew) == 3);
    CHECK(ev && tide_tensor_numel(ev) == 0 && tide_tensor_ndim(ev) == 4);
    double       nan_a[4] = {NAN, 1, 0, 1};
    tide_tensor *bad = make(cpu0, dt, 2, s22, nan_a), *bw = NULL;
    CHECK_ERR(tide_linalg_eig(NULL, bad, &bw, NULL), TIDE_EINVAL,
              "tide: linalg.eig: the input has NaN or inf");
    CHECK(bw == NULL);
    tide_tensor *all[8] = {m, w, v, w2, e, ew, ev, bad};
    for (int i = 0; i < 8; i++)
        tide_tensor_release(all[i]);
}

/* the MATRIX kind's rules in tide_kernel_run: the rows' names, outputs in input 1's batch
 * dims, rhs from the first input with it, an INFO output 0 where no kernel ran, an output that
 * would pass TIDE_MAX_DIMS refused (tide_linalg_eig wrote past its shape arrays there), and
 * lu_solve's pivots kept within 1..n (getrs followed them out of the matrix) */
static void test_matrix_rows(void) {
    const tide_kernel_info *qr = tide_kernel_info_of(TIDE_K_LINALG_QR);
    CHECK(qr && strcmp(qr->name, "linalg.qr") == 0 && qr->kind == TIDE_KERNEL_MATRIX);
    CHECK(tide_kernel_find("linalg.lu_solve") == TIDE_K_LINALG_LU_SOLVE);
    CHECK(tide_kernel_find("lu_solve") == -1);
    int64_t      s233[3] = {2, 3, 3}, s234[3] = {2, 3, 4}, s23[2] = {2, 3}, s200[3] = {2, 0, 0};
    double       spd[24], ident[6] = {1, 2, 3, 1, 2, 3}; /* spd: b's 24 values, a's first 18 */
    tide_tensor *out[3] = {NULL, NULL, NULL}, *x = NULL;
    for (int i = 0; i < 24; i++)
        spd[i] = batch_a[0][i % 9];
    tide_tensor       *a = make(cpu0, TIDE_DTYPE_F64, 3, s233, spd);
    tide_tensor       *b = make(cpu0, TIDE_DTYPE_F64, 3, s234, spd);
    tide_tensor       *piv = make(cpu0, TIDE_DTYPE_I64, 2, s23, ident);
    const tide_tensor *in[3] = {a, piv, b};
    CHECK_OK(tide_kernel_run(NULL, TIDE_K_LINALG_LU_SOLVE, in, NULL, NULL, &x));
    CHECK(x && tide_tensor_ndim(x) == 3 && tide_tensor_shape(x)[2] == 4);
    tide_tensor_release(x);
    x = NULL;
    /* a pivot past n, in the second matrix */
    ((int64_t *)tide_tensor_data(piv))[4] = 4;
    CHECK_ERR(tide_kernel_run(NULL, TIDE_K_LINALG_LU_SOLVE, in, NULL, NULL, &x), TIDE_EINVAL,
              "tide: linalg.lu_solve: pivots hold 4 at 2 (matrix 2 of the batch), which lu_factor "
              "does not give; pass lu_factor's own pivots");
    CHECK(x == NULL);
    /* 0 x 0 matrices: nothing ran, nothing singular */
    tide_tensor *e = make(cpu0, TIDE_DTYPE_F64, 3, s200, NULL);
    CHECK_OK(tide_kernel_run(NULL, TIDE_K_LINALG_LDL_FACTOR, (const tide_tensor *const *)&e, NULL,
                             NULL, out));
    CHECK(out[2] && tide_tensor_dtype(out[2]) == TIDE_DTYPE_I32 && tide_tensor_ndim(out[2]) == 1);
    CHECK(out[2] && at(out[2], 0) == 0 && at(out[2], 1) == 0);
    for (int i = 0; i < 3; i++)
        tide_tensor_release(out[i]);
    /* 6 batch dims: w [..., n, 2] has 8 dims, v [..., n, n, 2] would have 9 */
    int64_t      s8[8] = {1, 1, 1, 1, 1, 1, 2, 2};
    double       rot[4] = {0, -1, 1, 0};
    tide_tensor *m8 = make(cpu0, TIDE_DTYPE_F64, 8, s8, rot), *w = NULL, *v = NULL;
    CHECK_ERR(tide_linalg_eig(NULL, m8, &w, &v), TIDE_ESHAPE,
              "tide: linalg.eig: v would have 9 dims, more than 8; give fewer batch dims");
    CHECK(w == NULL && v == NULL);
    CHECK_OK(tide_linalg_eig(NULL, m8, &w, NULL));
    CHECK(w && tide_tensor_ndim(w) == 8 && at(w, 1) == 1 && at(w, 3) == -1);
    tide_tensor *all[6] = {a, b, piv, e, m8, w};
    for (int i = 0; i < 6; i++)
        tide_tensor_release(all[i]);
}

int main(void) {
    setenv("TIDE_CPU_DEVICES", "2", 1);
    if (tide_init() != TIDE_OK || tide_device_get("cpu", &cpu0) != TIDE_OK ||
        tide_device_get("cpu:1", &cpu1) != TIDE_OK) {
        fprintf(stderr, "init: %s\n", tide_errmsg());
        printf("0 passed, 1 failed\n");
        return 1;
    }
    test_eig(TIDE_DTYPE_F64, 1e-10);
    test_eig(TIDE_DTYPE_F32, 1e-5);
    test_ldl_values(TIDE_DTYPE_F64, 1e-15);
    test_ldl_values(TIDE_DTYPE_F32, 1e-6);
    test_ldl_singular_and_empty();
    test_ldl_residual(TIDE_DTYPE_F64, 150, 1e-13);
    test_ldl_residual(TIDE_DTYPE_F32, 150, 1e-5);
    test_ldl_errors();
    test_lu_rect(TIDE_DTYPE_F64, 1e-15);
    test_lu_rect(TIDE_DTYPE_F32, 1e-6);
    test_matrix_rows();
    return tu_finish();
}
