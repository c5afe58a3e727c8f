/* runtime.c — tide.core refuses a process where its Lua C API calls are bound to a runtime
 * other than the state's.
 *
 * A Lua module does not link liblua: its lua_* references are resolved in the process's global
 * scope when it is loaded. A tool that loaded another Lua (5.3, LuaJIT) globally before
 * liblua5.4 gets those references bound to the other runtime, and the first call with a 5.4
 * state crashes — luaL_checkversion itself included, since it would be the other runtime's.
 * So the check runs before any Lua call: lua_pushstring (in every Lua) and a function only the
 * Lua tide was built for has (lua_newuserdatauv for 5.4; see ONLY_FN), necessarily from the
 * state's runtime, must come from the same object. On a mismatch the error is raised with that
 * runtime's own functions. */
#include "state.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#if LUA_VERSION_NUM >= 504
#define ONLY_FN lua_newuserdatauv
#elif LUA_VERSION_NUM == 503
#define ONLY_FN lua_rotate /* 5.3 and 5.4 */
#elif defined(TL_LUAJIT)
#define ONLY_FN luaJIT_setmode
#else
#define ONLY_FN lua_setfenv /* 5.1 and LuaJIT */
#endif
#ifdef TL_LUAJIT
#define HOST_NAME "LuaJIT"
#define HOST_LIB  "libluajit-"
#else
#define HOST_NAME LUA_VERSION
#define HOST_LIB  "liblua"
#endif
#define STR_(x) #x
#define STR(x)  STR_(x)

typedef const char *(*pushstring_fn)(lua_State *L, const char *s);
typedef int (*error_fn)(lua_State *L);

int tl_check_runtime(lua_State *L) {
    Dl_info any, only54;
    if (!dladdr((void *)(uintptr_t)&lua_pushstring, &any) ||
        !dladdr((void *)(uintptr_t)&ONLY_FN, &only54) || any.dli_fbase == only54.dli_fbase) {
        luaL_checkversion(L); /* same runtime: its own version and number-size check */
        return 0;
    }
    char msg[1024];
    snprintf(msg, sizeof msg,
             "tide: tide.core is bound to two Lua runtimes: lua_pushstring comes from %.300s, "
             "%s from %.300s; tide needs " HOST_NAME " alone: load the other Lua with RTLD_LOCAL, "
             "or load " HOST_LIB "%s with RTLD_GLOBAL before it",
             any.dli_fname ? any.dli_fname : "?", STR(ONLY_FN),
             only54.dli_fname ? only54.dli_fname : "?", &LUA_VERSION[4]);
    void         *h = only54.dli_fname ? dlopen(only54.dli_fname, RTLD_LAZY | RTLD_NOLOAD) : NULL;
    pushstring_fn push = NULL;
    error_fn      raise = NULL;
    if (h) {
        *(void **)&push = dlsym(h, "lua_pushstring");
        *(void **)&raise = dlsym(h, "lua_error");
    }
    if (push && raise) {
        push(L, msg);
        raise(L); /* does not return */
    }
    /* no way to raise through the state's runtime: touch nothing, say why on stderr */
    fprintf(stderr, "%s\n", msg);
    return -1;
}
