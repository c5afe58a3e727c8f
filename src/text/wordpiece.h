/* wordpiece.h — BERT's tokenizer in C: Hugging Face's BertNormalizer, BertPreTokenizer,
 * WordPiece model and TemplateProcessing, with the same output as its BertTokenizerFast
 * (tokenizers 0.20). No Lua here; lua/text.c binds it as tide.text.BertTokenizer's engine.
 *
 * A tokenizer keeps scratch buffers: one tokenizer is used by one thread at a time. */
#ifndef TIDE_TEXT_WORDPIECE_H
#define TIDE_TEXT_WORDPIECE_H

#include "tide.h"
#include <stddef.h>
#include <stdint.h>

typedef struct wp_tokenizer wp_tokenizer;

typedef struct wp_options {
    int         clean_text;               /* drop NUL, U+FFFD, control chars; whitespace -> ' ' */
    int         handle_chinese_chars;     /* a space on each side of each CJK ideograph */
    int         strip_accents;            /* NFD, then drop nonspacing marks */
    int         lowercase;                /* char-wise full lowercase (Rust's char::to_lowercase) */
    int         max_input_chars_per_word; /* a longer word becomes the unknown token */
    const char *prefix;                   /* continuing_subword_prefix, "##" */
} wp_options;

/* a growable list of int32 */
typedef struct wp_ids {
    int32_t *v;
    size_t   n, cap;
} wp_ids;

/* a growable byte buffer */
typedef struct wp_bytes {
    char  *v;
    size_t n, cap;
} wp_bytes;

void        wp_ids_free(wp_ids *a);
tide_status wp_ids_push(wp_ids *a, int32_t x);
void        wp_bytes_free(wp_bytes *b);

tide_status wp_new(const wp_options *o, wp_tokenizer **out);
void        wp_free(wp_tokenizer *t);
/* the vocabulary: token -> id (a later token with the same text takes the name over) */
tide_status wp_add_token(wp_tokenizer *t, const char *s, size_t len, int32_t id);
/* the unknown token's id (after the vocabulary is in) */
tide_status wp_set_unk(wp_tokenizer *t, int32_t id);
/* an added token, matched in the raw text before normalisation (normalized = false) */
tide_status wp_add_added(wp_tokenizer *t, const char *s, size_t len, int32_t id);
int32_t     wp_token_to_id(const wp_tokenizer *t, const char *s, size_t len); /* -1: none */
const char *wp_id_to_token(const wp_tokenizer *t, int32_t id, size_t *len);   /* NULL: none */
int32_t     wp_id_count(const wp_tokenizer *t); /* 1 + the largest id */

/* Post-processing template items: id >= 0 a special token, WP_SEQ_A / WP_SEQ_B a sequence;
 * type is its token type id. */
#define WP_SEQ_A (-1)
#define WP_SEQ_B (-2)
typedef struct wp_item {
    int32_t id;
    int32_t type;
} wp_item;
tide_status wp_set_template(wp_tokenizer *t, const wp_item *single, int ns, const wp_item *pair,
                            int np);
int         wp_n_special(const wp_tokenizer *t, int is_pair); /* tokens a template adds */

/* The tokens of one text, no special tokens: ids appended to out. Fails on invalid UTF-8. */
tide_status wp_encode(wp_tokenizer *t, const char *s, size_t len, wp_ids *out);
/* The normalised, pre-tokenised words of one text (added tokens as they are), each followed
 * by a NUL, appended to out: what the checks against Hugging Face's normalizer compare. */
tide_status wp_pretokenize(wp_tokenizer *t, const char *s, size_t len, wp_bytes *out);

enum { WP_TRUNC_NONE, WP_TRUNC_LONGEST_FIRST, WP_TRUNC_ONLY_FIRST, WP_TRUNC_ONLY_SECOND };
typedef struct wp_encode_opts {
    int     add_special;
    int     truncation; /* WP_TRUNC_* */
    int64_t max_length; /* with truncation: the length of the result, special tokens included */
    int     left;       /* truncate on the left (truncation_side = "left") */
} wp_encode_opts;

/* A text, or a pair (b != NULL), through truncation and the template: ids and token type ids
 * appended to ids and types (same count). */
tide_status wp_encode_full(wp_tokenizer *t, const char *a, size_t alen, const char *b, size_t blen,
                           const wp_encode_opts *o, wp_ids *ids, wp_ids *types);

#endif
