/*
 * embed_two_lua.c — a host with two Lua runtimes, as a tool with plug-ins: it loads another Lua
 * (5.3, 5.1 or LuaJIT: each installed one in a process of its own) globally, then liblua5.4
 * globally, makes a 5.4 state with the 5.4 functions (dlsym) and requires tide.core from the
 * build tree. tide.core's references to lua_* then bind to the first runtime; it must refuse
 * with a message, not crash. This program does not link liblua (that would put 5.4 first in the
 * global scope). Built as build/test_embed_two_lua by examples/embed/embed.mk (TIDE_CORE_DIR:
 * the build's lua/ directory).
 */
#include <dlfcn.h>
#include <lua.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sanitizer.h"
#include "test_util.h"

typedef lua_State *(*newstate_fn)(void);
typedef void (*openlibs_fn)(lua_State *L);
typedef int (*loadstring_fn)(lua_State *L, const char *s);
typedef int (*pcallk_fn)(lua_State *L, int nargs, int nresults, int errfunc, lua_KContext ctx,
                         lua_KFunction k);
typedef const char *(*tolstring_fn)(lua_State *L, int idx, size_t *len);
typedef int (*toboolean_fn)(lua_State *L, int idx);
typedef void (*close_fn)(lua_State *L);

static void *sym(void *h, const char *name) {
    void *p = dlsym(h, name);
    if (!p)
        fprintf(stderr, "%s: %s\n", name, dlerror());
    return p;
}

/* the scenario with other_name loaded first; the exit status tells the parent how it went */
static int with_other(const char *other_name) {
    void *other = dlopen(other_name, RTLD_NOW | RTLD_GLOBAL);
    CHECK(other != NULL);
    if (!other)
        return tu_fail;
    /* LuaJIT's functions interpose on 5.4's own calls (luaL_newstate reaching LuaJIT's
     * lua_newstate: a crash in the runtimes, before tide is loaded), so a host with both binds
     * 5.4 to itself (RTLD_DEEPBIND); tide.core's references still resolve in the global
     * scope, LuaJIT's first, which is what tide must refuse */
    int   deep = strstr(other_name, "luajit") != NULL ? RTLD_DEEPBIND : 0;
    void *lua54 = dlopen("liblua5.4.so.0", RTLD_NOW | RTLD_GLOBAL | deep);
    CHECK(lua54 != NULL);
    if (!lua54)
        return tu_fail;
    newstate_fn   newstate;
    openlibs_fn   openlibs;
    loadstring_fn loadstring;
    pcallk_fn     pcallk;
    tolstring_fn  tolstring;
    toboolean_fn  toboolean;
    close_fn      close_state;
    *(void **)&newstate = sym(lua54, "luaL_newstate");
    *(void **)&openlibs = sym(lua54, "luaL_openlibs");
    *(void **)&loadstring = sym(lua54, "luaL_loadstring");
    *(void **)&pcallk = sym(lua54, "lua_pcallk");
    *(void **)&tolstring = sym(lua54, "lua_tolstring");
    *(void **)&toboolean = sym(lua54, "lua_toboolean");
    *(void **)&close_state = sym(lua54, "lua_close");
    if (!newstate || !openlibs || !loadstring || !pcallk || !tolstring || !toboolean ||
        !close_state) {
        CHECK(0);
        return tu_fail;
    }
    lua_State *L = newstate();
    openlibs(L);
    const char *script = "package.cpath = '" TIDE_CORE_DIR "/?.so'\n"
                         "local ok, err = pcall(require, 'tide.core')\n"
                         "return ok, tostring(err)\n";
    int         st = loadstring(L, script);
    if (st == LUA_OK)
        st = pcallk(L, 0, 2, 0, 0, NULL);
    CHECK(st == LUA_OK);
    if (st == LUA_OK) {
        const char *msg = tolstring(L, -1, NULL);
        printf("with %s loaded globally first: %s\n", other_name, msg);
        CHECK(!toboolean(L, -2)); /* require failed ... */
        CHECK(msg && strstr(msg, "tide: tide.core is bound to two Lua runtimes") != NULL);
        CHECK(msg && strstr(msg, other_name) != NULL); /* ... naming the other runtime */
    }
    close_state(L);
    return tu_fail;
}

int main(void) {
    static const char *const others[] = {"liblua5.3.so.0", "liblua5.1.so.0", "libluajit-5.1.so.2",
                                         NULL};
    int                      ran = 0;
    for (int i = 0; others[i]; i++) {
        if (TIDE_ASAN && strstr(others[i], "luajit")) {
            printf("%s: skipped under ASan (RTLD_DEEPBIND and ASan do not mix)\n", others[i]);
            continue;
        }
        void *probe = dlopen(others[i], RTLD_LAZY | RTLD_LOCAL);
        if (!probe) {
            printf("%s: not installed, skipped\n", others[i]);
            continue;
        }
        dlclose(probe);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            int failed = with_other(others[i]);
            fflush(NULL);
            _exit(failed ? 1 : 0);
        }
        int status = 0;
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        /* a crash (a signal) or a failed check in the child */
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            printf("with %s first: the child %s %d\n", others[i],
                   WIFEXITED(status) ? "exited with" : "died of signal",
                   WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        ran++;
    }
    if (!ran)
        fprintf(stderr, "no other Lua runtime installed (apt-get install liblua5.3-0)\n");
    CHECK(ran > 0);
    return tu_finish();
}
