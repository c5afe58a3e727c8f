/*
 * scalar_bessel.h — the Bessel functions of PyTorch's torch.special beyond I0 and I1 (those
 * are scalar_math.h's): J0, J1, Y0, Y1 (bessel_j0 ...), K0, K1 and e^x times them
 * (modified_bessel_k0, scaled_modified_bessel_k0, ...), the spherical j0 and Airy's Ai, each in
 * double (float32 rounds the double once). Included by scalar_math.h, after TIDE_HD and
 * tide_bessel_i, so the CPU and CUDA kernels share them.
 *
 * Written from the math (DLMF chapters 9 and 10), not from Cephes (PyTorch 1.13's):
 *  - small x: the power series (Y and K with their logarithmic terms);
 *  - J and Y on [1.25 or 0.5, 25], Ai on [-10.5, 1]: the Taylor series about the nearest point
 *    of a table, its coefficients from the differential equation. The points are the zeros (in
 *    double-double: next to a zero the value keeps its relative precision, where PyTorch's
 *    error exceeds the value), the extrema and a few points more, so that |x - a| <= 0.3 a
 *    (Y's series about a converges within a) and 0.9 (0.5 for Ai);
 *  - J and Y past 25: Hankel's expansion (DLMF 10.17.3) with the phase from sin x and cos x,
 *    whose argument reduction is exact (PyTorch rounds x - pi/4 and loses ulp(x) of it);
 *  - K_nu: e^x K_nu(x) is the integral over t > 0 of e^(-2x sinh^2(t/2)) cosh(nu t), taken by
 *    the trapezoidal rule, exponentially accurate for this analytic, doubly-exponentially
 *    decaying integrand (the step min(1/4, pi^2 / (40 + 2x)) gives 1e-16 in 15 to 22 points),
 *    and past 30 its asymptotic expansion (DLMF 10.40.2);
 *  - Ai: the same K_1/3 above 1 (Ai(x) = sqrt(x/3) K_1/3(zeta) / pi, DLMF 9.6.1) and the
 *    oscillating expansion (DLMF 9.7.9) below -10.5, with zeta = 2/3 |x|^(3/2) in double-double
 *    (e^-zeta exact to x's last bit, and the phase down to x = -7e10; PyTorch's lose
 *    ulp(zeta)).
 * The tables of points come from mpmath: spec/fixtures/make_special_bessel.py --tables.
 */
#ifndef TIDE_SCALAR_BESSEL_H
#define TIDE_SCALAR_BESSEL_H

#define TIDE_EULER_GAMMA  0.57721566490153286061
#define TIDE_TWO_OVER_PI  0.63661977236758134308
#define TIDE_SQRT_PI      1.77245385090551602730
#define TIDE_BESSEL_SMALL 1e-17 /* a series stops when its terms fall below this, relatively */

/* ---- the expansion points (generated) ----------------------------------------------------------
 * Each table's rows: {the upper end of the point's interval, a (hi), a (lo: nonzero for a zero),
 * F(a), F'(a)}; the lookup returns the row whose interval holds x. */
/* J0 on [1.25, 25]: its zeros and extrema (the zeros of J1) */
TIDE_HD const double *tide_bessel_j0_point(double x) {
    static const double t[][5] = {
        {2.0930377788478864, 1.78125, 0.0, 0.3508864272872453, -0.5811273286249383},
        {3.1182657639516425, 2.404825557695773, -1.176691651530894e-16, 0.0, -0.5191474972894667},
        {4.675892040246912, 3.8317059702075125, 0.0, -0.402759395702553, 6.149807356994906e-17},
        {6.267832390050964, 5.520078110286311, 8.088597146146722e-17, 0.0, 0.34026480655836816},
        {7.834657291363316, 7.015586669815619, 0.0, 0.30011575252613254, -2.825339409478929e-17},
        {9.413598023986868, 8.653727912911013, -2.92812607320779e-16, 0.0, -0.27145229992838193},
        {10.982501287038502, 10.173468135062722, 0.0, -0.2497048770578432, -1.1192177797744682e-16},
        {12.557613187664252, 11.791534439014281, 2.812956912778735e-16, 0.0, 0.23245983136472478},
        {14.127304822401005, 13.323691936314223, 0.0, 0.21835940724787295, 5.678235636145885e-17},
        {15.70077387968271, 14.930917708487787, -7.070514505983074e-16, 0.0, -0.20654643307799603},
        {17.27084700939428, 16.470630050877634, 0.0, -0.1964653714686572, 3.180812762837805e-16},
        {18.843461239189583, 18.071063967910924, -9.658048089426209e-16, 0.0, 0.18772880304043943},
        {20.41374757017375, 19.615858510468243, 0.0, 0.18006337534431555, -1.8086387130272526e-16},
        {21.985860505236015, 21.21163662987926, 4.947077428784068e-16, 0.0, -0.17326589422922986},
        {23.556277955671035, 22.760084380592772, 0.0, -0.16718460047381806, 8.235094410619703e-17},
        {25.0, 24.352471530749302, 9.169067133951066e-16, 0.0, 0.16170155068925002},
    };
    int i = 0;
    while (x > t[i][0])
        i++;
    return t[i];
}
/* J1 on [1.25, 25]: its zeros and extrema */
TIDE_HD const double *tide_bessel_j1_point(double x) {
    static const double t[][5] = {
        {1.8112168906703296, 1.78125, 0.0, 0.5811273286249383, 0.024639505953946574},
        {2.393538915742857, 1.8411837813406593, 0.0, 0.5818652242815964, 1.9648947374959754e-18},
        {3.556477985103756, 3.28125, 0.0, 0.22835907198083297, -0.4096817765500258},
        {4.581574371866273, 3.8317059702075125, -1.5269184090088067e-16, 0.0, -0.402759395702553},
        {6.173514721670326, 5.3314427735250325, 0.0, -0.3461262018537915, -5.045671695130136e-17},
        {7.775951518080952, 7.015586669815619, -9.414165653410389e-17, 0.0, 0.30011575252613254},
        {9.354892250704504, 8.536316366346286, 0.0, 0.27329994163319987, -4.1601901195968553e-17},
        {10.939736518827392, 10.173468135062722, 4.482162274768888e-16, 0.0, -0.2497048770578432},
        {12.514848419453143, 11.706004902592063, 0.0, -0.23330441717143408,
         -1.6493217219902837e-16},
        {14.09364028511163, 13.323691936314223, 2.600408064718813e-16, 0.0, 0.21835940724787295},
        {15.667109342393335, 14.863588633909034, 0.0, 0.20701265272531905, -1.291226421255656e-16},
        {17.24307895677972, 16.470630050877634, -1.619019544798128e-15, 0.0, -0.1964653714686572},
        {18.815693186575025, 18.015527862681804, 0.0, -0.18801748852581776, 2.0987452825534897e-17},
        {20.390114184828516, 19.615858510468243, -1.004445634526616e-15, 0.0, 0.18006337534431555},
        {21.96222711989078, 21.16436985918879, 0.0, 0.17345904928574643, 2.9463971274578475e-16},
        {23.535705618901773, 22.760084380592772, -4.925749373614922e-16, 0.0, -0.16718460047381806},
        {25.0, 24.311326857210776, 0.0, -0.1618382095526585, 4.2245833526351907e-17},
    };
    int i = 0;
    while (x > t[i][0])
        i++;
    return t[i];
}
/* Y0 on [0.5, 25]: its zeros, extrema (the zeros of Y1) and points between */
TIDE_HD const double *tide_bessel_y0_point(double x) {
    static const double t[][5] = {
        {0.7983509831395837, 0.703125, 0.0, -0.18722402232007748, 1.0989356710305218},
        {1.1616500561629177, 0.8935769662791675, 2.6596231539720385e-17, 0.0, 0.8794208024971948},
        {1.9266956630155085, 1.65625, 0.0, 0.4389748404264465, 0.3120010697210023},
        {2.8562837238403223, 2.197141326031017, 0.0, 0.5207864124022675, -2.513306678922122e-17},
        {3.853839209657429, 3.75, 0.0, 0.0852567569773627, -0.4158687793452271},
        {4.693679730054496, 3.957678419314858, -1.0764340697562706e-16, 0.0, -0.40254267177502423},
        {6.257866050547953, 5.429681040794135, 0.0, -0.3403180455234406, -1.4165786380203692e-16},
        {7.841028464316471, 7.086051060301773, -8.835285723085408e-17, 0.0, 0.3000976149104752},
        {9.409175455913793, 8.596005868331169, 0.0, 0.27145987731153354, 7.713759989498055e-17},
        {10.98574993716815, 10.222345043496418, -7.967395050308809e-16, 0.0, -0.2497012375146848},
        {12.555126152356323, 11.749154830839881, 0.0, -0.23246176601703875, -6.849807120770496e-18},
        {14.129269801104744, 13.361097473872764, -6.626109493712529e-16, 0.0, 0.21835829659767134},
        {15.699182284932409, 14.897442128336726, 0.0, 0.2065471103565926, -1.2541848286766177e-16},
        {17.272162359127975, 16.50092244152809, 1.0187464212445755e-15, 0.0, -0.19646493789501676},
        {18.8423559888079, 18.043402276727857, 0.0, -0.1877290919149097, 2.7220510348512495e-16},
        {20.414689317515077, 19.64130970088794, -1.3738085245174177e-15, 0.0, 0.18006317633754418},
        {21.985048490716885, 21.188068934142212, 0.0, 0.17326603526911988, 1.882195674994625e-16},
        {23.556985309324233, 22.782028047291558, 1.5905927758681248e-15, 0.0, -0.16718449805101074},
        {25.0, 24.33194257135691, 0.0, -0.1617016266586241, -4.754131206539138e-17},
    };
    int i = 0;
    while (x > t[i][0])
        i++;
    return t[i];
}
/* Y1 on [1, 25]: its zeros, extrema and a point before the first */
TIDE_HD const double *tide_bessel_y1_point(double x) {
    static const double t[][5] = {
        {1.8095081630155085, 1.421875, 0.0, -0.46432801159133336, 0.6747745330827208},
        {2.8562837238403223, 2.197141326031017, -4.8259835876454966e-17, 0.0, 0.5207864124022675},
        {4.556351948689656, 3.6830228565851777, 0.0, 0.4167299281064514, 1.6514021191456564e-18},
        {6.185590497224155, 5.429681040794135, 4.162514026670377e-16, 0.0, -0.3403180455234406},
        {7.7687529109926725, 6.9414999536541755, 0.0, -0.30317374013748943,
         -4.8588127870667284e-17},
        {9.35970526188389, 8.596005868331169, 2.8415838340063664e-16, 0.0, 0.27145987731153354},
        {10.936279743138247, 10.123404655436612, 0.0, 0.2509125362778126, 1.7210302811614535e-16},
        {12.517456493811368, 11.749154830839881, 2.9466381668409186e-17, 0.0, -0.23246176601703875},
        {14.091600142559791, 13.285758156782855, 0.0, -0.2189747879090995, 4.749076934443141e-17},
        {15.668750067815004, 14.897442128336726, -6.072148995506809e-16, 0.0, 0.2065471103565926},
        {17.241730142010567, 16.44005800729328, 0.0, 0.19682760568385493, 8.95333080216579e-17},
        {18.816822016678678, 18.043402276727857, -1.4499889213148965e-15, 0.0, -0.1877290919149097},
        {20.389155345385852, 19.590241756629496, 0.0, -0.18029741262998622, 1.8530649082133001e-16},
        {21.96305182576927, 21.188068934142212, 1.0863038864317323e-15, 0.0, 0.17326603526911988},
        {23.534988644376618, 22.738034717396328, 0.0, 0.16734599696265753, -8.05244428310855e-17},
        {25.0, 24.33194257135691, 2.940063934282991e-16, 0.0, -0.1617016266586241},
    };
    int i = 0;
    while (x > t[i][0])
        i++;
    return t[i];
}
/* Ai on [-10.5, 1]: its zeros, extrema and points about 0 */
TIDE_HD const double *tide_airy_ai_point(double x) {
    static const double t[][5] = {
        {-11.241790468606753, -11.475056633480245, 0.0, 0.3065172938827772, -2.346607293892808e-15},
        {-10.768092350345334, -11.008524303733262, -8.202114600392923e-16, 0.0,
         -1.0277386888207862},
        {-10.283917369257747, -10.527660396957407, 0.0, -0.3131853909786818,
         2.5158324750316357e-15},
        {-9.787811696995817, -10.040174341558085, -6.28099682978957e-16, 0.0, 1.004370122660312},
        {-9.279049952887263, -9.535449052433547, 0.0, 0.3210222881947164, -1.0626912677608914e-15},
        {-8.75556879368035, -9.02265085334098, 2.2327602737028807e-16, 0.0, -0.9779228085694986},
        {-8.216310160570288, -8.488486734019721, 0.0, -0.33047622914796687, 1.9865763636596917e-15},
        {-7.658155421084311, -7.944133587120853, 3.4021391708444276e-17, 0.0, 0.9473357094415678},
        {-7.079442672559765, -7.37217725504777, 0.0, 0.34230124441162385, 1.0028785856694853e-16},
        {-6.475007722855622, -6.786708090071759, -9.56301343655757e-17, 0.0, -0.9108507370496018},
        {-5.841933591867519, -6.163307355639486, 0.0, -0.35790794371229223, 3.3524788679156663e-16},
        {-5.170329519637143, -5.520559828095551, -2.674142599618633e-16, 0.0, 0.8652040258941519},
        {-4.454024327654853, -4.820099211178736, 0.0, 0.3804064686281533, 1.9002007513487082e-16},
        {-3.668073513155403, -4.08794944413097, -3.387261694242901e-16, 0.0, -0.803111369654864},
        {-2.793152496319802, -3.2481975821798366, 0.0, -0.41901547803256395,
         -3.315151654629452e-17},
        {-1.8409287052298835, -2.338107410459767, -3.912260409818305e-17, 0.0, 0.7012108227206914},
        {-1.1812714858237356, -1.34375, 0.0, 0.5041061848541144, 0.2013863100529436},
        {-0.5250214858237355, -1.018792971647471, 0.0, 0.5356566560156999, -1.1246873724687218e-17},
        {0.46875, -0.03125, 0.0, 0.3631143339230143, -0.2586434177597805},
        {1.0, 0.96875, 0.0, 0.1403319485693925, -0.16338603122066653},
    };
    int i = 0;
    while (x > t[i][0])
        i++;
    return t[i];
}

/* ---- the series ------------------------------------------------------------------------- */

/* The Taylor series about a = row[1] + row[2] of the solution of x^2 y'' + x y' + (x^2 - nu2) y
 * = 0 through y(a) = row[3], y'(a) = row[4]: with x = a + h, the coefficients c_k of h^k obey
 * a^2 (k+1)(k+2) c_(k+2) = -(a (k+1)(2k+1) c_(k+1) + (k^2 + a^2 - nu2) c_k + 2a c_(k-1) + c_(k-2)).
 * h is exact: x - row[1] by Sterbenz (|h| <= 0.3 a), then row[2] off it. */
TIDE_HD double tide_bessel_taylor(const double *row, double nu2, double x) {
    double a = row[1], a2 = a * a, h = (x - a) - row[2];
    double c2 = 0.0, c1 = 0.0, c0 = row[3], cn = row[4]; /* c_(k-2), c_(k-1), c_k, c_(k+1) */
    double hk = h, s = c0 + cn * h, last = fabs(cn * h);
    for (int k = 0; k < 100; k++) {
        double kd = k, next = -(a * (kd + 1) * (2 * kd + 1) * cn + (kd * kd + a2 - nu2) * c0 +
                                2 * a * c1 + c2) /
                              (a2 * (kd + 1) * (kd + 2));
        c2 = c1;
        c1 = c0;
        c0 = cn;
        cn = next;
        hk *= h;
        double t = cn * hk;
        s += t;
        if (fabs(t) + last <= TIDE_BESSEL_SMALL * fabs(s))
            break;
        last = fabs(t);
    }
    return s;
}

/* the same for Airy's equation y'' = x y: (k+1)(k+2) c_(k+2) = a c_k + c_(k-1) */
TIDE_HD double tide_airy_taylor(const double *row, double x) {
    double a = row[1], h = (x - a) - row[2];
    double c1 = 0.0, c0 = row[3], cn = row[4]; /* c_(k-1), c_k, c_(k+1) */
    double hk = h, s = c0 + cn * h, last = fabs(cn * h);
    for (int k = 0; k < 100; k++) {
        double kd = k, next = (a * c0 + c1) / ((kd + 1) * (kd + 2));
        c1 = c0;
        c0 = cn;
        cn = next;
        hk *= h;
        double t = cn * hk;
        s += t;
        if (fabs(t) + last <= TIDE_BESSEL_SMALL * fabs(s))
            break;
        last = fabs(t);
    }
    return s;
}

/* J0 and J1 by their power series (DLMF 10.2.2), for |x| < 1.25: q = x^2 / 4, at most 0.4 */
TIDE_HD double tide_bessel_j_series(int n, double x) {
    double q = 0.25 * x * x, t = 1.0, s = 1.0;
    for (int k = 1; k < 40 && fabs(t) > TIDE_BESSEL_SMALL * fabs(s); k++) {
        t *= -q / ((double)k * (k + n));
        s += t;
    }
    return n ? 0.5 * x * s : s;
}

/* the power series of Y0 and K0 beside their logarithm's term (DLMF 10.8.2, 10.31.2): the sum
 * over k >= 1 of H_k q^k / (k!)^2, H_k the harmonic numbers, q = x^2 / 4 (-q for Y0) */
TIDE_HD double tide_bessel_log_series0(double q) {
    double t = 1.0, h = 0.0, s = 0.0;
    for (int k = 1; k < 40; k++) {
        t *= q / ((double)k * k);
        h += 1.0 / k;
        s += h * t;
        if (fabs(h * t) <= TIDE_BESSEL_SMALL * fabs(s))
            break;
    }
    return s;
}

/* the same for Y1 and K1 (DLMF 10.8.1, 10.31.1): the sum over k >= 0 of (psi(k+1) + psi(k+2))
 * q^k / (k! (k+1)!), psi(k+1) + psi(k+2) = 2 H_k + 1/(k+1) - 2 gamma */
TIDE_HD double tide_bessel_log_series1(double q) {
    double t = 1.0, h = 0.0, s = 1.0 - 2 * TIDE_EULER_GAMMA;
    for (int k = 1; k < 40; k++) {
        t *= q / ((double)k * (k + 1));
        h += 1.0 / k;
        double term = (2 * h + 1.0 / (k + 1) - 2 * TIDE_EULER_GAMMA) * t;
        s += term;
        if (fabs(term) <= TIDE_BESSEL_SMALL * fabs(s))
            break;
    }
    return s;
}

/* J_n and Y_n (n = 0, 1) from x = 25 on, Hankel's expansion (DLMF 10.17.3): sqrt(2/(pi x)) times
 * P cos w - Q sin w and P sin w + Q cos w, w = x - (2n+1) pi/4, P and Q the even and odd terms
 * a_k(n) / x^k with alternating signs. cos w and sin w are sums of cos x and sin x. */
TIDE_HD void tide_bessel_hankel(int n, double x, double *j, double *y) {
    double mu = 4.0 * n * n, p = 1.0, q = 0.0, t = 1.0;
    for (int k = 1; k < 60; k++) {
        t *= (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * x);
        switch (k & 3) {
        case 1:
            q += t;
            break;
        case 2:
            p -= t;
            break;
        case 3:
            q -= t;
            break;
        default:
            p += t;
        }
        if (fabs(t) <= TIDE_BESSEL_SMALL)
            break;
    }
    double c = cos(x), s = sin(x), f = 1.0 / (TIDE_SQRT_PI * sqrt(x)); /* sqrt(2/(pi x)) / sqrt 2 */
    if (n == 0) { /* sqrt 2 cos w = c + s, sqrt 2 sin w = s - c */
        *j = f * (p * (c + s) - q * (s - c));
        *y = f * (p * (s - c) + q * (c + s));
    } else { /* sqrt 2 cos w = s - c, sqrt 2 sin w = -(s + c) */
        *j = f * (p * (s - c) + q * (s + c));
        *y = f * (q * (s - c) - p * (s + c));
    }
}

/* ---- J0, J1, Y0, Y1 ---------------------------------------------------------------------------
 * J0 even and J1 odd; Y of a negative x is NaN and of 0 -inf, as PyTorch's; at +-inf their limit
 * 0 (PyTorch 1.13 gives NaN there). */
TIDE_HD double tide_j0(double x) {
    x = fabs(x);
    if (x < 1.25)
        return tide_bessel_j_series(0, x);
    if (x < 25.0)
        return tide_bessel_taylor(tide_bessel_j0_point(x), 0.0, x);
    if (x == INFINITY)
        return 0.0;
    double j, y;
    tide_bessel_hankel(0, x, &j, &y);
    return j; /* NaN gives NaN */
}

TIDE_HD double tide_j1(double x) {
    double ax = fabs(x), r;
    if (ax < 1.25)
        return tide_bessel_j_series(1, x);
    if (ax < 25.0) {
        r = tide_bessel_taylor(tide_bessel_j1_point(ax), 1.0, ax);
    } else if (ax == INFINITY) {
        r = 0.0;
    } else {
        double y;
        tide_bessel_hankel(1, ax, &r, &y);
    }
    return x < 0 ? -r : r;
}

TIDE_HD double tide_y0(double x) {
    if (!(x > 0.0))
        return x == 0.0 ? -INFINITY : NAN;
    if (x < 0.5) { /* (2/pi) ((log(x/2) + gamma) J0 + the series): log x - log 2 keeps a
                      subnormal x's bits */
        double q = 0.25 * x * x;
        return TIDE_TWO_OVER_PI *
               ((log(x) - 0.69314718055994530942 + TIDE_EULER_GAMMA) * tide_bessel_j_series(0, x) -
                tide_bessel_log_series0(-q));
    }
    if (x < 25.0)
        return tide_bessel_taylor(tide_bessel_y0_point(x), 0.0, x);
    if (x == INFINITY)
        return 0.0;
    double j, y;
    tide_bessel_hankel(0, x, &j, &y);
    return y;
}

TIDE_HD double tide_y1(double x) {
    if (!(x > 0.0))
        return x == 0.0 ? -INFINITY : NAN;
    if (x < 1.0) { /* (2/pi) log(x/2) J1 - 2/(pi x) - x/(2 pi) times the series */
        double q = 0.25 * x * x;
        return TIDE_TWO_OVER_PI * (log(x) - 0.69314718055994530942) * tide_bessel_j_series(1, x) -
               TIDE_TWO_OVER_PI / x - 0.25 * TIDE_TWO_OVER_PI * x * tide_bessel_log_series1(-q);
    }
    if (x < 25.0)
        return tide_bessel_taylor(tide_bessel_y1_point(x), 1.0, x);
    if (x == INFINITY)
        return 0.0;
    double j, y;
    tide_bessel_hankel(1, x, &j, &y);
    return y;
}

/* ---- K0, K1 and their scaled twins ------------------------------------------------------------
 * e^x K_nu(x) for x >= 0.5 (nu = 0, 1, or 1/3 for Ai): the trapezoidal rule on the integral
 * below 30 (cosh t = 1 + 2 sinh^2(t/2) for nu = 1), the asymptotic expansion above. */
TIDE_HD double tide_bessel_k_scaled(double nu, double x) {
    if (x >= 30.0) { /* sqrt(pi/(2x)) times the sum of a_k(nu) / x^k */
        /* the terms past the first summed on their own, then added to 1 once: each addition
         * onto 1 would round at 1's ulp (scaled K1 at 31 was 6 ulp off that way) */
        double mu = 4.0 * nu * nu, t = 1.0, tail = 0.0;
        for (int k = 1; k < 60 && fabs(t) > TIDE_BESSEL_SMALL; k++) {
            t *= (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k * x);
            tail += t;
        }
        return (1.0 + tail) * sqrt(1.57079632679489661923 / x);
    }
    double h = fmin(0.25, 9.86960440108935861883 / (40.0 + 2.0 * x)), s = 0.5;
    for (int j = 1; j < 100; j++) {
        double t = j * h, sh = sinh(0.5 * t), e = 2.0 * x * sh * sh;
        if (e > 45.0) /* the rest is below e^-45 of the sum */
            break;
        s += exp(-e) * (nu == 0.0 ? 1.0 : nu == 1.0 ? 1.0 + 2.0 * sh * sh : cosh(nu * t));
    }
    return s * h;
}

/* K0 (n = 0) or K1, times e^x when scaled. NaN below 0, +inf at 0, as PyTorch's. Below 0.5 the
 * power series (DLMF 10.31.1, 10.31.2) with I0, I1. */
TIDE_HD double tide_bessel_k(int n, int scaled, double x) {
    if (!(x > 0.0))
        return x == 0.0 ? INFINITY : NAN;
    if (x < 0.5) {
        double q = 0.25 * x * x, l = log(x) - 0.69314718055994530942, k;
        if (n == 0)
            k = -(l + TIDE_EULER_GAMMA) * tide_bessel_i(0, 0, x) + tide_bessel_log_series0(q);
        else
            k = 1.0 / x + l * tide_bessel_i(1, 0, x) - 0.25 * x * tide_bessel_log_series1(q);
        return scaled ? k * exp(x) : k;
    }
    if (x == INFINITY)
        return 0.0;
    double ks = tide_bessel_k_scaled(n, x);
    if (scaled)
        return ks;
    return ks * exp(-x); /* e^-x exact to its rounding (subnormal past 708: so is K) */
}

/* ---- the spherical j0 and Ai ------------------------------------------------------------------
 */

/* sin(x) / x: its series below 0.5 (1 at 0), 0 at +-inf (the limit, as PyTorch) */
TIDE_HD double tide_spherical_j0(double x) {
    if (fabs(x) == INFINITY)
        return 0.0;
    if (fabs(x) < 0.5) {
        double q = x * x, t = 1.0, s = 1.0;
        for (int k = 1; k < 20 && fabs(t) > TIDE_BESSEL_SMALL; k++) {
            t *= -q / ((2.0 * k) * (2.0 * k + 1));
            s += t;
        }
        return s;
    }
    return sin(x) / x;
}

/* zeta = 2/3 z^(3/2) as zeta_hi + zeta_lo (double-double, fma's exact products) */
TIDE_HD void tide_airy_zeta(double z, double *hi, double *lo) {
    double       r = sqrt(z), r_lo = fma(-r, r, z) / (2.0 * r);         /* sqrt z = r + r_lo */
    double       p = z * r, p_lo = fma(z, r, -p) + z * r_lo;            /* z^(3/2) = p + p_lo */
    const double c = 0.66666666666666663, c_lo = 3.700743415417188e-17; /* 2/3 = c + c_lo */
    double       s = c * p, s_lo = fma(c, p, -s) + (c * p_lo + c_lo * p);
    *hi = s + s_lo;
    *lo = s_lo - (*hi - s);
}

/* Ai(x): the limit 0 at +-inf (PyTorch 1.13 gives NaN). Below -10.5, Ai(-z) = (cos(zeta - pi/4)
 * P + sin(zeta - pi/4) Q) / (sqrt(pi) z^(1/4)), P and Q the even and odd terms u_k / zeta^k
 * with alternating signs (DLMF 9.7.9). The phase zeta, in double-double, is exact to 1e-16
 * while zeta < 2^53 (z < 7e10) and to zeta 2^-106 beyond (1e-8 at z = 1e16); past 1e16 it is
 * not known: NaN (PyTorch's phase is lost from z = 1e3 on, its value NaN past 1e200). */
TIDE_HD double tide_airy_ai(double x) {
    if (x != x)
        return x;
    if (x >= 1.0) {
        if (x > 110.0) /* zeta > 769: below the subnormals */
            return 0.0;
        double zh, zl;
        tide_airy_zeta(x, &zh, &zl);
        double f = sqrt(x / 3.0) * 0.31830988618379067154 * tide_bessel_k_scaled(1.0 / 3, zh);
        return f * exp(-zh) * (1.0 - zl);
    }
    if (x >= -10.5)
        return tide_airy_taylor(tide_airy_ai_point(x), x);
    double z = -x;
    if (z > 1e16)
        return z == INFINITY ? 0.0 : NAN;
    double zh, zl;
    tide_airy_zeta(z, &zh, &zl);
    double p = 1.0, q = 0.0, t = 1.0; /* t: u_k / zeta^k */
    for (int k = 1; k < 60; k++) {
        t *= (6.0 * k - 5) * (6.0 * k - 3) * (6.0 * k - 1) / ((2.0 * k - 1) * 216.0 * k * zh);
        switch (k & 3) {
        case 1:
            q += t;
            break;
        case 2:
            p -= t;
            break;
        case 3:
            q -= t;
            break;
        default:
            p += t;
        }
        if (fabs(t) <= TIDE_BESSEL_SMALL)
            break;
    }
    /* cos and sin of zeta - pi/4 = zh + d, d = zl - pi/4 */
    double d = zl - 0.78539816339744830962, cd = cos(d), sd = sin(d), c = cos(zh), s = sin(zh);
    double cw = c * cd - s * sd, sw = s * cd + c * sd;
    return (cw * p + sw * q) / (TIDE_SQRT_PI * sqrt(sqrt(z)));
}

/* the rows' functions: float32 rounds the double once */
TIDE_DEF_FLOAT_UNARY(bessel_j0, tide_j0(a), (float)tide_j0(a))
TIDE_DEF_FLOAT_UNARY(bessel_j1, tide_j1(a), (float)tide_j1(a))
TIDE_DEF_FLOAT_UNARY(bessel_y0, tide_y0(a), (float)tide_y0(a))
TIDE_DEF_FLOAT_UNARY(bessel_y1, tide_y1(a), (float)tide_y1(a))
TIDE_DEF_FLOAT_UNARY(bessel_k0, tide_bessel_k(0, 0, a), (float)tide_bessel_k(0, 0, a))
TIDE_DEF_FLOAT_UNARY(bessel_k1, tide_bessel_k(1, 0, a), (float)tide_bessel_k(1, 0, a))
TIDE_DEF_FLOAT_UNARY(bessel_k0e, tide_bessel_k(0, 1, a), (float)tide_bessel_k(0, 1, a))
TIDE_DEF_FLOAT_UNARY(bessel_k1e, tide_bessel_k(1, 1, a), (float)tide_bessel_k(1, 1, a))
TIDE_DEF_FLOAT_UNARY(spherical_bessel_j0, tide_spherical_j0(a), (float)tide_spherical_j0(a))
TIDE_DEF_FLOAT_UNARY(airy_ai, tide_airy_ai(a), (float)tide_airy_ai(a))

#endif /* TIDE_SCALAR_BESSEL_H */
