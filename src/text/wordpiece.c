/* wordpiece.c — BERT's tokenizer: the steps of Hugging Face's BertTokenizerFast (tokenizers
 * 0.20), in its order, on one text:
 *
 *   1. added tokens ([CLS], [MASK], ...) are split off the raw text, leftmost-longest;
 *   2. each other segment is normalised (BertNormalizer): clean_text drops NUL, U+FFFD and
 *      control characters and turns whitespace into ' '; CJK ideographs get a space on each
 *      side; strip_accents is NFD then dropping nonspacing marks; lowercase is char-wise
 *      (Rust's char::to_lowercase: full mappings, no final-sigma rule);
 *   3. split on whitespace, and around each punctuation character (BertPreTokenizer);
 *   4. each word becomes its greedy longest-match WordPiece pieces, or the unknown token when
 *      some part matches nothing or it has more than max_input_chars_per_word characters.
 *
 * The character classes of steps 2-3 come from tokenizers itself (bert_unicode.h, generated
 * by tools/make_bert_unicode.py: its Unicode tables are older than utf8proc's); NFD and case
 * mapping come from utf8proc. The vocabulary is an open-addressing hash table of FNV-1a hashes:
 * the pieces tried from one start share a prefix, so one pass hashes them all.
 */
#include "text/wordpiece.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "backend.h" /* tide_seterr */
#include "text/bert_unicode.h"

#define FNV_BASIS 2166136261u
#define FNV_PRIME 16777619u

typedef struct slot {
    uint32_t hash;
    int32_t  id; /* -1: empty */
} slot;

typedef struct tokref {
    size_t   off; /* into arena */
    uint32_t len;
    int32_t  set;
} tokref;

typedef struct added {
    char   *s;
    size_t  len;
    int32_t id;
} added;

struct wp_tokenizer {
    wp_options o;
    char       prefix[32];
    size_t     plen;
    uint32_t   prefix_hash;
    /* tokens by id */
    char   *arena;
    size_t  arena_n, arena_cap;
    tokref *tok;
    int32_t ntok, tok_cap; /* ntok: 1 + the largest id */
    /* token -> id */
    slot   *slots;
    size_t  mask, used;
    size_t  maxlen; /* the longest token, in bytes */
    int32_t unk;
    /* added tokens, split off the raw text */
    added        *add;
    int           nadd;
    unsigned char first[256];
    /* post-processing */
    wp_item single[16], pair[16];
    int     ns, np;
    /* scratch */
    uint32_t *cps;
    size_t    ncps, capcps;
    char     *word;
    size_t    wcap;
    uint32_t *hs;
    size_t    hcap;
    wp_ids    sa, sb;
};

/* ---- buffers ------------------------------------------------------------------------------ */

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap)
        return 0;
    size_t n = *cap ? *cap : 64;
    while (n < need)
        n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = n;
    return 0;
}

void wp_ids_free(wp_ids *a) {
    free(a->v);
    a->v = NULL;
    a->n = a->cap = 0;
}

tide_status wp_ids_push(wp_ids *a, int32_t x) {
    if (a->n == a->cap && grow((void **)&a->v, &a->cap, a->n + 1, sizeof *a->v))
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    a->v[a->n++] = x;
    return TIDE_OK;
}

void wp_bytes_free(wp_bytes *b) {
    free(b->v);
    b->v = NULL;
    b->n = b->cap = 0;
}

static tide_status bytes_put(wp_bytes *b, const char *s, size_t len) {
    if (grow((void **)&b->v, &b->cap, b->n + len + 1, 1))
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    memcpy(b->v + b->n, s, len);
    b->n += len;
    b->v[b->n++] = '\0';
    return TIDE_OK;
}

/* ---- vocabulary ----------------------------------------------------------------------------- */

static uint32_t fnv(uint32_t h, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
    return h;
}

tide_status wp_new(const wp_options *o, wp_tokenizer **out) {
    *out = NULL;
    size_t plen = o->prefix ? strlen(o->prefix) : 0;
    if (plen >= sizeof((wp_tokenizer *)0)->prefix)
        return tide_seterr(TIDE_EINVAL,
                           "BertTokenizer: continuing_subword_prefix \"%s\" is longer than %d "
                           "bytes",
                           o->prefix, (int)sizeof((wp_tokenizer *)0)->prefix - 1);
    wp_tokenizer *t = calloc(1, sizeof *t);
    if (!t)
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    t->o = *o;
    memcpy(t->prefix, o->prefix ? o->prefix : "", plen + 1);
    t->o.prefix = t->prefix;
    t->plen = plen;
    t->prefix_hash = fnv(FNV_BASIS, t->prefix, plen);
    t->unk = -1;
    t->mask = 1023;
    t->slots = malloc((t->mask + 1) * sizeof *t->slots);
    if (!t->slots) {
        free(t);
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    }
    memset(t->slots, 0xff, (t->mask + 1) * sizeof *t->slots);
    *out = t;
    return TIDE_OK;
}

void wp_free(wp_tokenizer *t) {
    if (!t)
        return;
    for (int i = 0; i < t->nadd; i++)
        free(t->add[i].s);
    free(t->add);
    free(t->arena);
    free(t->tok);
    free(t->slots);
    free(t->cps);
    free(t->word);
    free(t->hs);
    wp_ids_free(&t->sa);
    wp_ids_free(&t->sb);
    free(t);
}

static int tok_eq(const wp_tokenizer *t, int32_t id, const char *p1, size_t l1, const char *p2,
                  size_t l2) {
    const tokref *r = &t->tok[id];
    if (r->len != l1 + l2)
        return 0;
    const char *s = t->arena + r->off;
    return memcmp(s, p1, l1) == 0 && memcmp(s + l1, p2, l2) == 0;
}

/* the id of p1 + p2 (hash h), or -1 */
static int32_t lookup(const wp_tokenizer *t, uint32_t h, const char *p1, size_t l1, const char *p2,
                      size_t l2) {
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask) {
        const slot *s = &t->slots[i];
        if (s->id < 0)
            return -1;
        if (s->hash == h && tok_eq(t, s->id, p1, l1, p2, l2))
            return s->id;
    }
}

static int rehash(wp_tokenizer *t) {
    size_t n = (t->mask + 1) * 2;
    slot  *s = malloc(n * sizeof *s);
    if (!s)
        return -1;
    memset(s, 0xff, n * sizeof *s);
    for (size_t i = 0; i <= t->mask; i++) {
        if (t->slots[i].id < 0)
            continue;
        size_t j = t->slots[i].hash & (n - 1);
        while (s[j].id >= 0)
            j = (j + 1) & (n - 1);
        s[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = s;
    t->mask = n - 1;
    return 0;
}

tide_status wp_add_token(wp_tokenizer *t, const char *s, size_t len, int32_t id) {
    if (id < 0)
        return tide_seterr(TIDE_EINVAL, "BertTokenizer: token \"%.*s\" has a negative id %d",
                           (int)(len > 60 ? 60 : len), s, (int)id);
    if (len > UINT32_MAX)
        return tide_seterr(TIDE_EINVAL, "BertTokenizer: a token of %zu bytes is too long", len);
    if ((t->used + 1) * 2 > t->mask + 1 && rehash(t))
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    if (id >= t->tok_cap) {
        size_t cap = (size_t)t->tok_cap;
        if (grow((void **)&t->tok, &cap, (size_t)id + 1, sizeof *t->tok))
            return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
        memset(t->tok + t->tok_cap, 0, (cap - (size_t)t->tok_cap) * sizeof *t->tok);
        t->tok_cap = (int32_t)cap;
    }
    if (grow((void **)&t->arena, &t->arena_cap, t->arena_n + len + 1, 1))
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    memcpy(t->arena + t->arena_n, s, len);
    t->arena[t->arena_n + len] = '\0';
    t->tok[id] = (tokref){.off = t->arena_n, .len = (uint32_t)len, .set = 1};
    t->arena_n += len + 1;
    if (id >= t->ntok)
        t->ntok = id + 1;
    if (len > t->maxlen)
        t->maxlen = len;
    uint32_t h = fnv(FNV_BASIS, s, len);
    size_t   i = h & t->mask;
    for (; t->slots[i].id >= 0; i = (i + 1) & t->mask) {
        if (t->slots[i].hash == h && tok_eq(t, t->slots[i].id, s, len, "", 0)) {
            t->slots[i].id = id; /* the later entry takes the name, as a Python dict */
            return TIDE_OK;
        }
    }
    t->slots[i] = (slot){.hash = h, .id = id};
    t->used++;
    return TIDE_OK;
}

tide_status wp_set_unk(wp_tokenizer *t, int32_t id) {
    t->unk = id;
    return TIDE_OK;
}

tide_status wp_add_added(wp_tokenizer *t, const char *s, size_t len, int32_t id) {
    if (len == 0)
        return tide_seterr(TIDE_EINVAL, "BertTokenizer: an added token is empty");
    added *a = realloc(t->add, (size_t)(t->nadd + 1) * sizeof *a);
    if (!a)
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    t->add = a;
    char *c = malloc(len);
    if (!c)
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    memcpy(c, s, len);
    t->add[t->nadd++] = (added){.s = c, .len = len, .id = id};
    t->first[(unsigned char)s[0]] = 1;
    return TIDE_OK;
}

int32_t wp_token_to_id(const wp_tokenizer *t, const char *s, size_t len) {
    return lookup(t, fnv(FNV_BASIS, s, len), s, len, "", 0);
}

const char *wp_id_to_token(const wp_tokenizer *t, int32_t id, size_t *len) {
    if (id < 0 || id >= t->ntok || !t->tok[id].set)
        return NULL;
    *len = t->tok[id].len;
    return t->arena + t->tok[id].off;
}

int32_t wp_id_count(const wp_tokenizer *t) {
    return t->ntok;
}

tide_status wp_set_template(wp_tokenizer *t, const wp_item *single, int ns, const wp_item *pair,
                            int np) {
    if (ns > 16 || np > 16 || ns < 0 || np < 0)
        return tide_seterr(TIDE_EINVAL,
                           "BertTokenizer: a post-processing template of %d items; at most 16",
                           ns > np ? ns : np);
    memcpy(t->single, single, (size_t)ns * sizeof *single);
    memcpy(t->pair, pair, (size_t)np * sizeof *pair);
    t->ns = ns;
    t->np = np;
    return TIDE_OK;
}

int wp_n_special(const wp_tokenizer *t, int is_pair) {
    const wp_item *it = is_pair ? t->pair : t->single;
    int            n = 0, k = is_pair ? t->np : t->ns;
    for (int i = 0; i < k; i++)
        n += it[i].id >= 0;
    return n;
}

/* ---- characters ----------------------------------------------------------------------------- */

static int in_ranges(const uint32_t (*r)[2], size_t n, uint32_t c) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c < r[mid][0])
            hi = mid;
        else if (c > r[mid][1])
            lo = mid + 1;
        else
            return 1;
    }
    return 0;
}
#define IN(tab, c) in_ranges(tab, sizeof tab / sizeof tab[0], c)

/* Rust's char::is_whitespace (White_Space) */
static int is_ws(uint32_t c) {
    if (c < 0x80)
        return c == ' ' || (c >= 9 && c <= 13);
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
           c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

static int is_cjk(uint32_t c) {
    return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
           (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
           (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

static int is_punct(uint32_t c) {
    if (c < 0x80)
        return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) ||
               (c >= 123 && c <= 126);
    return IN(bert_punct, c);
}

/* decodes one UTF-8 character at s[*i]; -1 when malformed (overlong, surrogate, > U+10FFFF) */
static int32_t utf8_next(const unsigned char *s, size_t len, size_t *i) {
    size_t   k = *i;
    uint32_t c = s[k];
    int      n;
    uint32_t min;
    if (c < 0x80) {
        *i = k + 1;
        return (int32_t)c;
    } else if ((c & 0xE0) == 0xC0) {
        n = 1, c &= 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 2, c &= 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 3, c &= 0x07, min = 0x10000;
    } else {
        return -1;
    }
    if (k + (size_t)n >= len)
        return -1;
    for (int j = 1; j <= n; j++) {
        if ((s[k + (size_t)j] & 0xC0) != 0x80)
            return -1;
        c = (c << 6) | (s[k + (size_t)j] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
        return -1;
    *i = k + (size_t)n + 1;
    return (int32_t)c;
}

static size_t utf8_put(char *o, uint32_t c) {
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    } else if (c < 0x800) {
        o[0] = (char)(0xC0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    } else if (c < 0x10000) {
        o[0] = (char)(0xE0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (c >> 18));
    o[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

static int ccc(uint32_t c) {
    return c < 0x300 ? 0 : utf8proc_get_property((utf8proc_int32_t)c)->combining_class;
}

static int push_cp(wp_tokenizer *t, uint32_t c) {
    if (t->ncps == t->capcps && grow((void **)&t->cps, &t->capcps, t->ncps + 1, sizeof *t->cps))
        return -1;
    t->cps[t->ncps++] = c;
    return 0;
}

/* NFD's canonical ordering: a mark moves before marks of a higher combining class */
static int push_ordered(wp_tokenizer *t, uint32_t c) {
    if (push_cp(t, c))
        return -1;
    int k = ccc(c);
    if (k == 0)
        return 0;
    size_t i = t->ncps - 1;
    while (i > 0 && ccc(t->cps[i - 1]) > k) {
        t->cps[i] = t->cps[i - 1];
        i--;
    }
    t->cps[i] = c;
    return 0;
}

/* Step 2's first half (clean_text, CJK spaces, NFD) on s[0..len): code points into t->cps.
 * Dropping marks and lowercasing follow in the same pass as the split (step 3). */
static tide_status normalize(wp_tokenizer *t, const char *s, size_t len) {
    const unsigned char *u = (const unsigned char *)s;
    t->ncps = 0;
    if (grow((void **)&t->cps, &t->capcps, len + 8, sizeof *t->cps))
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    size_t i = 0;
    while (i < len) {
        uint32_t c = u[i];
        if (c < 0x80) { /* ASCII: no decomposition, no CJK */
            i++;
            if (t->o.clean_text) {
                if (c == 9 || c == 10 || c == 13)
                    c = ' ';
                else if (c < 32 || c == 127)
                    continue;
            }
            if (t->ncps == t->capcps &&
                grow((void **)&t->cps, &t->capcps, t->ncps + 1, sizeof *t->cps))
                return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
            t->cps[t->ncps++] = c;
            continue;
        }
        size_t  at = i;
        int32_t d = utf8_next(u, len, &i);
        if (d < 0)
            return tide_seterr(TIDE_EINVAL,
                               "BertTokenizer: the text is not valid UTF-8 (byte %zu of %zu); "
                               "tokenizers take UTF-8 strings",
                               at + 1, len);
        c = (uint32_t)d;
        if (t->o.clean_text) {
            if (c == 0xFFFD || IN(bert_control, c))
                continue;
            if (is_ws(c))
                c = ' ';
        }
        int cjk = t->o.handle_chinese_chars && is_cjk(c);
        if (cjk && push_cp(t, ' '))
            return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
        if (t->o.strip_accents && c != 0x11938) {
            /* (U+11938 has a decomposition since Unicode 13 that Hugging Face's
             * unicode-normalization tables lack) */
            utf8proc_int32_t dec[32];
            int              last = 0;
            utf8proc_ssize_t n =
                utf8proc_decompose_char((utf8proc_int32_t)c, dec, 32, UTF8PROC_DECOMPOSE, &last);
            if (n < 0 || n > 32) {
                dec[0] = (utf8proc_int32_t)c;
                n = 1;
            }
            for (utf8proc_ssize_t j = 0; j < n; j++)
                if (push_ordered(t, (uint32_t)dec[j]))
                    return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
        } else if (push_cp(t, c)) {
            return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
        }
        if (cjk && push_cp(t, ' '))
            return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    }
    return TIDE_OK;
}

/* ---- WordPiece ------------------------------------------------------------------------------ */

static tide_status push_unk(wp_tokenizer *t, wp_ids *out) {
    if (t->unk < 0)
        return tide_seterr(TIDE_EINVAL,
                           "BertTokenizer: a word matches no vocabulary entry and the tokenizer "
                           "has no unknown token; set unk_token to a token of the vocabulary");
    return wp_ids_push(out, t->unk);
}

/* Step 4 on one word w[0..len) of nchars characters */
static tide_status pieces(wp_tokenizer *t, const char *w, size_t len, size_t nchars, wp_ids *out) {
    if ((int64_t)nchars > (int64_t)t->o.max_input_chars_per_word)
        return push_unk(t, out);
    if (grow((void **)&t->hs, &t->hcap, len + 1, sizeof *t->hs))
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    size_t n0 = out->n, start = 0;
    while (start < len) {
        uint32_t h = start ? t->prefix_hash : FNV_BASIS;
        size_t   lim = len - start < t->maxlen ? len : start + t->maxlen;
        for (size_t e = start; e < lim; e++) {
            h = (h ^ (unsigned char)w[e]) * FNV_PRIME;
            t->hs[e + 1 - start] = h;
        }
        const char *p = start ? t->prefix : "";
        size_t      pl = start ? t->plen : 0;
        int32_t     id = -1;
        size_t      e = lim;
        for (; e > start; e--) {
            if (e < len && ((unsigned char)w[e] & 0xC0) == 0x80)
                continue; /* inside a character */
            id = lookup(t, t->hs[e - start], p, pl, w + start, e - start);
            if (id >= 0)
                break;
        }
        if (id < 0) {
            out->n = n0;
            return push_unk(t, out);
        }
        tide_status st = wp_ids_push(out, id);
        if (st != TIDE_OK)
            return st;
        start = e;
    }
    return TIDE_OK;
}

/* Steps 2 (second half) to 4 on t->cps: the words, to pieces (out) or as text (words) */
static tide_status split(wp_tokenizer *t, wp_ids *out, wp_bytes *words) {
    if (grow((void **)&t->word, &t->wcap, t->ncps * 8 + 16, 1))
        return tide_seterr(TIDE_ENOMEM, "BertTokenizer: out of memory");
    size_t      wl = 0, nch = 0;
    tide_status st = TIDE_OK;
    int         strip = t->o.strip_accents, lower = t->o.lowercase;
#define FLUSH()                                                                                    \
    do {                                                                                           \
        if (wl) {                                                                                  \
            st = words ? bytes_put(words, t->word, wl) : pieces(t, t->word, wl, nch, out);         \
            if (st != TIDE_OK)                                                                     \
                return st;                                                                         \
            wl = nch = 0;                                                                          \
        }                                                                                          \
    } while (0)
    for (size_t i = 0; i < t->ncps; i++) {
        uint32_t c = t->cps[i];
        if (c < 0x80) {
            if (c == ' ' || (c >= 9 && c <= 13)) {
                FLUSH();
                continue;
            }
            if (lower && c >= 'A' && c <= 'Z')
                c += 32;
            if (is_punct(c)) {
                FLUSH();
                t->word[0] = (char)c;
                wl = nch = 1;
                FLUSH();
                continue;
            }
            t->word[wl++] = (char)c;
            nch++;
            continue;
        }
        if (strip && IN(bert_mn, c))
            continue;
        uint32_t lc[2] = {c, 0};
        int      nl = 1;
        if (lower) {
            if (c == 0x130) { /* İ: the one unconditional multi-character lowercase */
                lc[0] = 'i';
                lc[1] = 0x307;
                nl = 2;
            } else {
                lc[0] = (uint32_t)utf8proc_tolower((utf8proc_int32_t)c);
            }
        }
        for (int k = 0; k < nl; k++) {
            c = lc[k];
            if (is_ws(c)) {
                FLUSH();
            } else if (is_punct(c)) {
                FLUSH();
                wl = utf8_put(t->word, c);
                nch = 1;
                FLUSH();
            } else {
                wl += utf8_put(t->word + wl, c);
                nch++;
            }
        }
    }
    FLUSH();
#undef FLUSH
    return TIDE_OK;
}

/* Step 1: the added token starting at s[i], longest first; -1 if none */
static int added_at(const wp_tokenizer *t, const char *s, size_t len, size_t i) {
    int best = -1;
    for (int k = 0; k < t->nadd; k++) {
        const added *a = &t->add[k];
        if (a->len <= len - i && memcmp(s + i, a->s, a->len) == 0 &&
            (best < 0 || a->len > t->add[best].len))
            best = k;
    }
    return best;
}

static tide_status run(wp_tokenizer *t, const char *s, size_t len, wp_ids *out, wp_bytes *words) {
    size_t      seg = 0;
    tide_status st;
    for (size_t i = 0; t->nadd && i < len; i++) {
        if (!t->first[(unsigned char)s[i]])
            continue;
        int k = added_at(t, s, len, i);
        if (k < 0)
            continue;
        if (i > seg) {
            if ((st = normalize(t, s + seg, i - seg)) != TIDE_OK ||
                (st = split(t, out, words)) != TIDE_OK)
                return st;
        }
        st = words ? bytes_put(words, t->add[k].s, t->add[k].len) : wp_ids_push(out, t->add[k].id);
        if (st != TIDE_OK)
            return st;
        i += t->add[k].len - 1;
        seg = i + 1;
    }
    if (seg < len) {
        if ((st = normalize(t, s + seg, len - seg)) != TIDE_OK ||
            (st = split(t, out, words)) != TIDE_OK)
            return st;
    }
    return TIDE_OK;
}

tide_status wp_encode(wp_tokenizer *t, const char *s, size_t len, wp_ids *out) {
    return run(t, s, len, out, NULL);
}

tide_status wp_pretokenize(wp_tokenizer *t, const char *s, size_t len, wp_bytes *out) {
    wp_ids none = {0}; /* not written: words go to out */
    return run(t, s, len, &none, out);
}

/* ---- truncation and the template ------------------------------------------------------------ */

static void cut(wp_ids *a, size_t n, int left) {
    if (a->n <= n)
        return;
    if (left)
        memmove(a->v, a->v + (a->n - n), n * sizeof *a->v);
    a->n = n;
}

/* tokenizers' truncate_encodings (stride 0) */
static tide_status truncate_pair(const wp_encode_opts *o, size_t max, wp_ids *a, wp_ids *b) {
    size_t total = a->n + (b ? b->n : 0);
    if (total <= max)
        return TIDE_OK;
    size_t rm = total - max;
    switch (o->truncation) {
    case WP_TRUNC_LONGEST_FIRST:
        if (b) {
            size_t n1 = a->n, n2 = b->n;
            int    swap = n1 > n2;
            if (swap) {
                size_t x = n1;
                n1 = n2;
                n2 = x;
            }
            if (n1 > max)
                n2 = n1;
            else
                n2 = n1 > max - n1 ? n1 : max - n1;
            if (n1 + n2 > max) {
                n1 = max / 2;
                n2 = n1 + max % 2;
            }
            if (swap) {
                size_t x = n1;
                n1 = n2;
                n2 = x;
            }
            cut(a, n1, o->left);
            cut(b, n2, o->left);
        } else {
            cut(a, max, o->left);
        }
        return TIDE_OK;
    case WP_TRUNC_ONLY_FIRST:
    case WP_TRUNC_ONLY_SECOND: {
        wp_ids *x = o->truncation == WP_TRUNC_ONLY_FIRST ? a : b;
        if (!x)
            return tide_seterr(TIDE_EINVAL,
                               "BertTokenizer: truncation = \"only_second\" needs a pair of "
                               "texts; use \"longest_first\" or \"only_first\"");
        if (x->n <= rm)
            return tide_seterr(TIDE_EINVAL,
                               "BertTokenizer: truncation = \"%s\" would remove %zu tokens from "
                               "a sequence of %zu; use \"longest_first\" or a larger max_length",
                               o->truncation == WP_TRUNC_ONLY_FIRST ? "only_first" : "only_second",
                               rm, x->n);
        cut(x, x->n - rm, o->left);
        return TIDE_OK;
    }
    default:
        return TIDE_OK;
    }
}

tide_status wp_encode_full(wp_tokenizer *t, const char *a, size_t alen, const char *b, size_t blen,
                           const wp_encode_opts *o, wp_ids *ids, wp_ids *types) {
    tide_status st;
    t->sa.n = t->sb.n = 0;
    if ((st = wp_encode(t, a, alen, &t->sa)) != TIDE_OK)
        return st;
    if (b && (st = wp_encode(t, b, blen, &t->sb)) != TIDE_OK)
        return st;
    int pair = b != NULL;
    if (o->truncation != WP_TRUNC_NONE) {
        int64_t nadd = o->add_special ? wp_n_special(t, pair) : 0;
        if (o->max_length < nadd)
            return tide_seterr(TIDE_EINVAL,
                               "BertTokenizer: max_length = %lld leaves no room for the %lld "
                               "special tokens of a %s; use max_length >= %lld",
                               (long long)o->max_length, (long long)nadd,
                               pair ? "pair" : "single text", (long long)nadd);
        if ((st = truncate_pair(o, (size_t)(o->max_length - nadd), &t->sa, pair ? &t->sb : NULL)) !=
            TIDE_OK)
            return st;
    }
    const wp_item *it = pair ? t->pair : t->single;
    int            n = pair ? t->np : t->ns;
    wp_item        plain[2] = {{WP_SEQ_A, 0}, {WP_SEQ_B, 1}};
    if (n == 0) { /* no post-processor: the sequences as they are */
        it = plain;
        n = pair ? 2 : 1;
    }
    for (int i = 0; i < n; i++) {
        if (it[i].id >= 0) {
            if (!o->add_special)
                continue;
            if ((st = wp_ids_push(ids, it[i].id)) != TIDE_OK ||
                (st = wp_ids_push(types, it[i].type)) != TIDE_OK)
                return st;
            continue;
        }
        const wp_ids *x = it[i].id == WP_SEQ_A ? &t->sa : &t->sb;
        if (it[i].id == WP_SEQ_B && !pair)
            continue;
        for (size_t j = 0; j < x->n; j++)
            if ((st = wp_ids_push(ids, x->v[j])) != TIDE_OK ||
                (st = wp_ids_push(types, it[i].type)) != TIDE_OK)
                return st;
    }
    return TIDE_OK;
}
