/* options.c — the one check of an options table's keys, for the binding's functions and (as
 * core._check_options) for tide's Lua library: a misspelt key raises with the closest valid
 * name instead of being silently ignored (tide.randn(2, {require_grad = true})). */
#include "args.h"
#include <string.h>

#define MAX_NAME 64

/* edit distance with adjacent transpositions ("devcie" is one edit from "device") */
static int distance(const char *a, const char *b) {
    int n = (int)strlen(a), m = (int)strlen(b);
    int d[MAX_NAME + 1][MAX_NAME + 1];
    if (n > MAX_NAME || m > MAX_NAME)
        return MAX_NAME;
    for (int i = 0; i <= n; i++)
        d[i][0] = i;
    for (int j = 0; j <= m; j++)
        d[0][j] = j;
    for (int i = 1; i <= n; i++)
        for (int j = 1; j <= m; j++) {
            int c = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < c)
                c = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < c)
                c = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < c)
                c = d[i - 2][j - 2] + 1;
            d[i][j] = c;
        }
    return d[n][m];
}

static int listed(const char *key, const char *const *names) {
    for (int i = 0; names && names[i]; i++)
        if (strcmp(key, names[i]) == 0)
            return 1;
    return 0;
}

const char *tl_closest(const char *key, const char *const *names) {
    const char *best = NULL;
    int         bd = 3; /* within two edits, and never a whole rewrite */
    for (int i = 0; names[i]; i++) {
        int d = distance(key, names[i]);
        if (d < bd && d < (int)strlen(names[i])) {
            best = names[i];
            bd = d;
        }
    }
    return best;
}

/* raises for the key on top of the stack, which is not in known */
static void unknown(lua_State *L, const char *op, const char *const *known,
                    const char *const *unsupported) {
    if (lua_type(L, -1) != LUA_TSTRING) {
        const char *type = luaL_typename(L, -1);
        tl_error(L, "tide: %s: unknown option %s (a %s key); option names are strings", op,
                 luaL_tolstring(L, -1, NULL), type);
        return;
    }
    const char *key = lua_tostring(L, -1);
    if (listed(key, unsupported)) {
        tl_error(L, "tide: %s: option \"%s\" is not supported yet", op, key);
        return;
    }
    const char *best = tl_closest(key, known);
    if (best) {
        tl_error(L, "tide: %s: unknown option \"%s\" (did you mean \"%s\"?)", op, key, best);
        return;
    }
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 0; known[i]; i++) {
        luaL_addstring(&b, i ? ", " : "");
        luaL_addstring(&b, known[i]);
    }
    luaL_pushresult(&b);
    tl_error(L, "tide: %s: unknown option \"%s\"; options are %s", op, key, lua_tostring(L, -1));
}

void tl_check_options(lua_State *L, int idx, const char *op, const char *const *known,
                      const char *const *unsupported) {
    if (lua_type(L, idx) != LUA_TTABLE)
        return;
    idx = lua_absindex(L, idx);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING || !listed(lua_tostring(L, -1), known))
            unknown(L, op, known, unsupported);
    }
}

/* the names of the list at idx as a NULL-terminated array in *out (at most n - 1 names) */
static void names_of(lua_State *L, int idx, const char **out, int n, const char *op) {
    int k = 0;
    if (lua_type(L, idx) == LUA_TTABLE)
        for (int i = 1; k < n - 1 && lua_rawgeti(L, idx, i) == LUA_TSTRING; i++) {
            out[k++] = lua_tostring(L, -1); /* the list keeps the string alive */
            lua_pop(L, 1);
        }
    else if (!lua_isnoneornil(L, idx))
        tl_error(L, "tide: %s: expected a list of option names", op);
    out[k] = NULL;
}

/* core._check_options(opts, who, known[, unsupported]): the same check for tide's Lua files
 * (nn modules and losses, optimizers, DataLoader, load); raises at the user's line */
static int l_check_options(lua_State *L) {
    const char *op = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "options";
    const char *known[64], *unsupported[64];
    lua_settop(L, 4);
    names_of(L, 3, known, 64, op);
    names_of(L, 4, unsupported, 64, op);
    if (!lua_isnil(L, 1) && lua_type(L, 1) != LUA_TTABLE)
        return tl_error(L, "tide: %s: options must be a table, got %s", op, luaL_typename(L, 1));
    tl_check_options(L, 1, op, known, unsupported);
    return 0;
}

void tl_open_options(lua_State *L, int mod) {
    static const luaL_Reg funcs[] = {{"_check_options", l_check_options}, {NULL, NULL}};
    tl_register(L, mod, funcs);
}
