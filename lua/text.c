/* text.c — tide.core._text: the engine of tide.text.BertTokenizer (src/text/wordpiece.c) and a
 * JSON reader (cJSON) for the tokenizer and model files Hugging Face writes.
 *
 *   _text.json_decode(s)            -> the value (null: nil, so an object's key is absent)
 *   _text.new(opts)                 -> a WordPiece engine (opts: clean_text, handle_chinese_chars,
 *                                      strip_accents, lowercase, max_input_chars_per_word, prefix)
 *   wp:add_vocab({token = id}) wp:set_unk(id) wp:add_added(token, id)
 *   wp:set_template(single, pair)   items {id, type_id}, id -1 for $A, -2 for $B
 *   wp:encode(a, b|nil, add_special, truncation, max_length, left) -> ids, type_ids (lists)
 *   wp:batch(texts, pairs|nil, add_special, truncation, max_length, left, pad, pad_to, pad_id,
 *            pad_type, pad_left) -> input_ids, attention_mask, token_type_ids [B, T] int64
 *   wp:pretokenize(s) -> words;  wp:token_to_id(s) -> id|nil;  wp:id_to_token(i) -> s|nil
 *   wp:id_count() -> 1 + the largest id
 * Argument checking and messages users see live in lua/tide/text/BertTokenizer.lua. */
#include "binding.h"
#include "text/wordpiece.h"

#include <cjson/cJSON.h>
#include <string.h>

#define WP_BOX "tide.text.WordPiece"

/* the engine and its scratch lists: all freed by __gc, so nothing leaks when a call raises */
typedef struct wpbox {
    wp_tokenizer *t;
    wp_ids        ids, types, offs;
    wp_bytes      words;
} wpbox;

static int wp_gc(lua_State *L) {
    wpbox *b = luaL_checkudata(L, 1, WP_BOX);
    wp_free(b->t);
    b->t = NULL;
    wp_ids_free(&b->ids);
    wp_ids_free(&b->types);
    wp_ids_free(&b->offs);
    wp_bytes_free(&b->words);
    return 0;
}

static wpbox *check_wp(lua_State *L) {
    wpbox *b = luaL_checkudata(L, 1, WP_BOX);
    if (!b->t)
        tl_error(L, "tide: BertTokenizer: the tokenizer was freed");
    return b;
}

static int opt_flag(lua_State *L, int idx, const char *k, int dflt) {
    lua_getfield(L, idx, k);
    int v = lua_isnil(L, -1) ? dflt : lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

static int l_new(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    wpbox *b = lua_newuserdata(L, sizeof *b);
    memset(b, 0, sizeof *b);
    luaL_setmetatable(L, WP_BOX);
    wp_options o = {0};
    o.clean_text = opt_flag(L, 1, "clean_text", 1);
    o.handle_chinese_chars = opt_flag(L, 1, "handle_chinese_chars", 1);
    o.lowercase = opt_flag(L, 1, "lowercase", 1);
    o.strip_accents = opt_flag(L, 1, "strip_accents", o.lowercase);
    lua_getfield(L, 1, "max_input_chars_per_word");
    o.max_input_chars_per_word = lua_isnil(L, -1) ? 100 : (int)luaL_checkinteger(L, -1);
    lua_getfield(L, 1, "prefix");
    o.prefix = lua_isnil(L, -1) ? "##" : luaL_checkstring(L, -1);
    if (wp_new(&o, &b->t) != TIDE_OK)
        return tl_raise(L);
    lua_pop(L, 2);
    return 1;
}

static int l_add_vocab(lua_State *L) {
    wpbox *b = check_wp(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    lua_pushnil(L);
    while (lua_next(L, 2)) {
        size_t      len;
        const char *s = lua_tolstring(L, -2, &len);
        if (lua_type(L, -2) != LUA_TSTRING || !lua_isnumber(L, -1))
            return tl_error(L, "tide: BertTokenizer: the vocabulary maps tokens to ids");
        if (wp_add_token(b->t, s, len, (int32_t)lua_tointeger(L, -1)) != TIDE_OK)
            return tl_raise(L);
        lua_pop(L, 1);
    }
    return 0;
}

static int l_set_unk(lua_State *L) {
    wpbox *b = check_wp(L);
    wp_set_unk(b->t, (int32_t)luaL_checkinteger(L, 2));
    return 0;
}

static int l_add_added(lua_State *L) {
    wpbox      *b = check_wp(L);
    size_t      len;
    const char *s = luaL_checklstring(L, 2, &len);
    int32_t     id = (int32_t)luaL_checkinteger(L, 3);
    if (wp_add_added(b->t, s, len, id) != TIDE_OK || wp_add_token(b->t, s, len, id) != TIDE_OK)
        return tl_raise(L);
    return 0;
}

static int read_items(lua_State *L, int idx, wp_item *it) {
    luaL_checktype(L, idx, LUA_TTABLE);
    int n = (int)lua_rawlen(L, idx);
    if (n > 16)
        return tl_error(L,
                        "tide: BertTokenizer: a post-processing template of %d items; at "
                        "most 16",
                        n);
    for (int i = 0; i < n; i++) {
        lua_rawgeti(L, idx, i + 1);
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        it[i].id = (int32_t)luaL_checkinteger(L, -2);
        it[i].type = (int32_t)luaL_checkinteger(L, -1);
        lua_pop(L, 3);
    }
    return n;
}

static int l_set_template(lua_State *L) {
    wpbox  *b = check_wp(L);
    wp_item s[16], p[16];
    int     ns = read_items(L, 2, s), np = read_items(L, 3, p);
    if (wp_set_template(b->t, s, ns, p, np) != TIDE_OK)
        return tl_raise(L);
    return 0;
}

static void read_opts(lua_State *L, int idx, wp_encode_opts *o) {
    o->add_special = lua_toboolean(L, idx);
    o->truncation = (int)luaL_checkinteger(L, idx + 1);
    o->max_length = (int64_t)luaL_optinteger(L, idx + 2, 0);
    o->left = lua_toboolean(L, idx + 3);
}

static void push_list(lua_State *L, const int32_t *v, size_t n) {
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, v[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
}

static int l_encode(lua_State *L) {
    wpbox         *b = check_wp(L);
    size_t         alen, blen = 0;
    const char    *a = luaL_checklstring(L, 2, &alen);
    const char    *p = lua_isnil(L, 3) ? NULL : luaL_checklstring(L, 3, &blen);
    wp_encode_opts o;
    read_opts(L, 4, &o);
    b->ids.n = b->types.n = 0;
    if (wp_encode_full(b->t, a, alen, p, blen, &o, &b->ids, &b->types) != TIDE_OK)
        return tl_raise(L);
    push_list(L, b->ids.v, b->ids.n);
    push_list(L, b->types.v, b->types.n);
    return 2;
}

static tide_tensor *new_i64(lua_State *L, int64_t rows, int64_t cols) {
    tide_lua_state *S = tl_state(L);
    tide_device    *cpu;
    if (tide_device_get("cpu", &cpu) != TIDE_OK)
        tl_raise(L);
    int64_t  shape[2] = {rows, cols};
    ltensor *r = tl_push_empty(L);
    TL_CALL(L, S, tide_tensor_empty(S->ctx, cpu, TIDE_DTYPE_I64, 2, shape, &r->t));
    tl_gc_hint(L, S, (size_t)(rows * cols) * sizeof(int64_t));
    return r->t;
}

static int l_batch(lua_State *L) {
    wpbox *b = check_wp(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    int            has_pairs = !lua_isnil(L, 3);
    wp_encode_opts o;
    read_opts(L, 4, &o);
    int     pad = (int)luaL_checkinteger(L, 8); /* 0 none, 1 longest, 2 max_length */
    int64_t pad_to = (int64_t)luaL_optinteger(L, 9, 0);
    int64_t pad_id = (int64_t)luaL_checkinteger(L, 10);
    int64_t pad_type = (int64_t)luaL_checkinteger(L, 11);
    int     pad_left = lua_toboolean(L, 12);
    size_t  nb = lua_rawlen(L, 2);
    b->ids.n = b->types.n = b->offs.n = 0;
    if (wp_ids_push(&b->offs, 0) != TIDE_OK)
        return tl_raise(L);
    size_t longest = 0, shortest = (size_t)-1;
    for (size_t i = 0; i < nb; i++) {
        size_t      alen, blen = 0;
        const char *a, *p = NULL;
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        a = lua_tolstring(L, -1, &alen);
        if (has_pairs) {
            lua_rawgeti(L, 3, (lua_Integer)i + 1);
            p = lua_tolstring(L, -1, &blen);
        }
        if (!a || (has_pairs && !p))
            return tl_error(L, "tide: BertTokenizer: text %d is not a string", (int)i + 1);
        size_t before = b->ids.n;
        if (wp_encode_full(b->t, a, alen, p, blen, &o, &b->ids, &b->types) != TIDE_OK)
            return tl_raise(L);
        lua_pop(L, has_pairs ? 2 : 1);
        size_t n = b->ids.n - before;
        if (b->ids.n > INT32_MAX)
            return tl_error(L, "tide: BertTokenizer: a batch of more than 2^31 tokens");
        if (wp_ids_push(&b->offs, (int32_t)b->ids.n) != TIDE_OK)
            return tl_raise(L);
        longest = n > longest ? n : longest;
        shortest = n < shortest ? n : shortest;
    }
    size_t T = pad == 2 ? (size_t)pad_to : longest;
    if (nb && pad == 2 && longest > T)
        return tl_error(L,
                        "tide: BertTokenizer: a text has %d tokens, more than padding = "
                        "\"max_length\" (%d) can hold; add truncation = true",
                        (int)longest, (int)T);
    if (nb && pad == 0 && shortest != longest)
        return tl_error(L,
                        "tide: BertTokenizer: the texts have %d to %d tokens and a batch "
                        "tensor needs one length; use padding = true (or \"max_length\"), or "
                        "truncation = true with padding = \"max_length\"",
                        (int)shortest, (int)longest);
    tide_tensor *ti = new_i64(L, (int64_t)nb, (int64_t)T);
    tide_tensor *tm = new_i64(L, (int64_t)nb, (int64_t)T);
    tide_tensor *tt = new_i64(L, (int64_t)nb, (int64_t)T);
    int64_t     *pi = tide_tensor_data(ti), *pm = tide_tensor_data(tm), *pt = tide_tensor_data(tt);
    for (size_t i = 0; i < nb; i++) {
        size_t   s = (size_t)b->offs.v[i], n = (size_t)b->offs.v[i + 1] - s;
        size_t   at = pad_left ? T - n : 0;
        int64_t *ri = pi + i * T, *rm = pm + i * T, *rt = pt + i * T;
        for (size_t j = 0; j < T; j++) {
            ri[j] = pad_id;
            rm[j] = 0;
            rt[j] = pad_type;
        }
        for (size_t j = 0; j < n; j++) {
            ri[at + j] = b->ids.v[s + j];
            rm[at + j] = 1;
            rt[at + j] = b->types.v[s + j];
        }
    }
    return 3;
}

static int l_pretokenize(lua_State *L) {
    wpbox      *b = check_wp(L);
    size_t      len;
    const char *s = luaL_checklstring(L, 2, &len);
    b->words.n = 0;
    if (wp_pretokenize(b->t, s, len, &b->words) != TIDE_OK)
        return tl_raise(L);
    lua_newtable(L);
    int k = 0;
    for (size_t i = 0; i < b->words.n;) {
        size_t n = strlen(b->words.v + i);
        lua_pushlstring(L, b->words.v + i, n);
        lua_rawseti(L, -2, ++k);
        i += n + 1;
    }
    return 1;
}

static int l_token_to_id(lua_State *L) {
    wpbox      *b = check_wp(L);
    size_t      len;
    const char *s = luaL_checklstring(L, 2, &len);
    int32_t     id = wp_token_to_id(b->t, s, len);
    if (id < 0)
        return 0;
    lua_pushinteger(L, id);
    return 1;
}

static int l_id_to_token(lua_State *L) {
    wpbox      *b = check_wp(L);
    lua_Integer id = luaL_checkinteger(L, 2);
    size_t      len;
    const char *s = id >= 0 && id <= INT32_MAX ? wp_id_to_token(b->t, (int32_t)id, &len) : NULL;
    if (!s)
        return 0;
    lua_pushlstring(L, s, len);
    return 1;
}

/* ids (a list) -> the list of their tokens, or nil and the first unknown id's position */
static int l_tokens(lua_State *L) {
    wpbox *b = check_wp(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    size_t n = lua_rawlen(L, 2);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        int         isnum = 0;
        lua_Integer id = lua_tointegerx(L, -1, &isnum);
        size_t      len;
        const char *s =
            isnum && id >= 0 && id <= INT32_MAX ? wp_id_to_token(b->t, (int32_t)id, &len) : NULL;
        lua_pop(L, 1);
        if (!s) {
            lua_pushnil(L);
            lua_pushinteger(L, (lua_Integer)i + 1);
            return 2;
        }
        lua_pushlstring(L, s, len);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    return 1;
}

static int l_id_count(lua_State *L) {
    wpbox *b = check_wp(L);
    lua_pushinteger(L, wp_id_count(b->t));
    return 1;
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static void push_json(lua_State *L, const cJSON *j, int depth) {
    if (depth > 200 || !lua_checkstack(L, 4))
        tl_error(L, "tide: json_decode: nested deeper than 200 levels");
    if (cJSON_IsNull(j)) {
        lua_pushnil(L);
    } else if (cJSON_IsBool(j)) {
        lua_pushboolean(L, cJSON_IsTrue(j));
    } else if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        /* (the range first: converting 1e30, transformers' "no limit", to an integer is UB) */
        if (d >= -9007199254740992.0 && d <= 9007199254740992.0 && d == (double)(lua_Integer)d)
            lua_pushinteger(L, (lua_Integer)d);
        else
            lua_pushnumber(L, d);
    } else if (cJSON_IsString(j)) {
        lua_pushstring(L, j->valuestring);
    } else if (cJSON_IsArray(j)) {
        lua_createtable(L, cJSON_GetArraySize(j), 0);
        lua_Integer i = 0;
        for (const cJSON *c = j->child; c; c = c->next) {
            push_json(L, c, depth + 1);
            lua_rawseti(L, -2, ++i);
        }
    } else if (cJSON_IsObject(j)) {
        lua_createtable(L, 0, cJSON_GetArraySize(j));
        for (const cJSON *c = j->child; c; c = c->next) {
            lua_pushstring(L, c->string);
            push_json(L, c, depth + 1);
            lua_rawset(L, -3);
        }
    } else {
        lua_pushnil(L);
    }
}

/* the parsed tree is owned by a userdata box while it is converted: a raise frees it */
#define JSON_BOX "tide.text.json"
static int json_gc(lua_State *L) {
    cJSON **b = luaL_checkudata(L, 1, JSON_BOX);
    cJSON_Delete(*b);
    *b = NULL;
    return 0;
}

static int l_json_decode(lua_State *L) {
    size_t      len;
    const char *s = luaL_checklstring(L, 1, &len);
    cJSON     **box = lua_newuserdata(L, sizeof *box);
    *box = NULL;
    luaL_setmetatable(L, JSON_BOX);
    const char *end = NULL;
    *box = cJSON_ParseWithLengthOpts(s, len, &end, 0);
    if (!*box) {
        lua_pushnil(L);
        lua_pushinteger(L, end ? (lua_Integer)(end - s) + 1 : 1);
        return 2;
    }
    push_json(L, *box, 0);
    cJSON_Delete(*box);
    *box = NULL;
    return 1;
}

void tl_open_text(lua_State *L, int mod) {
    static const luaL_Reg methods[] = {
        {"add_vocab", l_add_vocab},     {"set_unk", l_set_unk},
        {"add_added", l_add_added},     {"set_template", l_set_template},
        {"encode", l_encode},           {"batch", l_batch},
        {"pretokenize", l_pretokenize}, {"token_to_id", l_token_to_id},
        {"id_to_token", l_id_to_token}, {"tokens", l_tokens},
        {"id_count", l_id_count},       {NULL, NULL}};
    luaL_newmetatable(L, WP_BOX);
    lua_pushcfunction(L, wp_gc);
    lua_setfield(L, -2, "__gc");
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_newmetatable(L, JSON_BOX);
    lua_pushcfunction(L, json_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushcfunction(L, l_new);
    lua_setfield(L, -2, "new");
    lua_pushcfunction(L, l_json_decode);
    lua_setfield(L, -2, "json_decode");
    lua_setfield(L, mod, "_text");
}
