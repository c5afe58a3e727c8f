/*
 * host.c — a C program that embeds Lua 5.4 and tide, as a game would.
 *
 *   embed_host [lua_dir [agent.lua]]    (defaults: the checkout's, set at compile time)
 *
 * It loads agent.lua (a tiny policy network) and plays a toy game with it. Each frame the host
 * hands the script its own state buffer as a tensor (tide_tensor_from_blob: no copy) and a
 * buffer for the action probabilities, which the script fills in place; the script returns the
 * action. The host scores the actions, hands the rewards back the same way, and the script
 * trains once. Then two threads run one Lua state each at the same time, and in one of them a
 * "mod" script goes past its memory limit: the host catches the error and both carry on.
 */
#include "tide.h"
#include "tide_lua.h"

#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TIDE_LUA_DIR
#define TIDE_LUA_DIR "lua"
#endif
#ifndef TIDE_AGENT
#define TIDE_AGENT "examples/embed/agent.lua"
#endif

#define N_STATE   8
#define N_ACTIONS 4

static const char *lua_dir = TIDE_LUA_DIR, *agent_path = TIDE_AGENT;

/* ---- the game: the right action is the largest of the first N_ACTIONS features ------------ */

typedef struct game {
    float      state[N_STATE];   /* the host's memory, seen by the script as a tensor */
    float      probs[N_ACTIONS]; /* written by the script */
    uint64_t   rng;
    int        frames;   /* state tensors handed to the script */
    atomic_int released; /* ... and whose last reference went */
} game;

static float game_rand(game *g) {
    g->rng ^= g->rng << 13, g->rng ^= g->rng >> 7, g->rng ^= g->rng << 17;
    return (float)(g->rng >> 40) / (float)(1 << 24);
}

static void game_next(game *g) {
    for (int i = 0; i < N_STATE; i++)
        g->state[i] = game_rand(g);
}

static int game_answer(const game *g) { /* 1-based, as the script's actions */
    int best = 0;
    for (int i = 1; i < N_ACTIONS; i++)
        if (g->state[i] > g->state[best])
            best = i;
    return best + 1;
}

/* ---- the agent: one lua_State running agent.lua ------------------------------------------- */

typedef struct agent {
    lua_State *L;
    int        policy; /* registry reference to the policy object */
} agent;

static void frame_released(void *ud) {
    atomic_fetch_add((atomic_int *)ud, 1);
}

/* a new state with tide and agent.lua loaded and a policy made; 0 on success */
static int agent_open(agent *a, int seed) {
    a->L = luaL_newstate();
    if (!a->L)
        return -1;
    lua_State *L = a->L;
    luaL_openlibs(L);
    tide_lua_preload(L);
    const char *boot = "local dir, path, seed, n_state, n_actions = ...\n"
                       "package.path = dir .. '/?.lua;' .. dir .. '/?/init.lua;' .. package.path\n"
                       "tide = require 'tide'\n"
                       "return dofile(path).new(n_state, n_actions, seed)\n";
    int         st = luaL_loadbuffer(L, boot, strlen(boot), "=boot");
    if (st == LUA_OK) {
        lua_pushstring(L, lua_dir);
        lua_pushstring(L, agent_path);
        lua_pushinteger(L, seed);
        lua_pushinteger(L, N_STATE);
        lua_pushinteger(L, N_ACTIONS);
        st = lua_pcall(L, 5, 1, 0);
    }
    if (st != LUA_OK) {
        fprintf(stderr, "host: loading the agent failed: %s\n", lua_tostring(L, -1));
        lua_close(L);
        a->L = NULL;
        return -1;
    }
    a->policy = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

/* Pushes a float32 tensor over n floats of the host's memory; Lua holds the only reference,
 * and deleter(ud) runs once when the collector lets go of it. Raises on failure (after running
 * the deleter: a buffer handed over is then the host's to clean up, here at once). */
static void push_buffer(lua_State *L, float *p, int64_t n, void (*deleter)(void *), void *ud) {
    tide_device *cpu = NULL;
    tide_tensor *t = NULL;
    if (tide_device_get("cpu", &cpu) != TIDE_OK ||
        tide_tensor_from_blob(tide_lua_ctx(L), p, TIDE_DTYPE_F32, 1, &n, NULL, cpu, deleter, ud,
                              &t) != TIDE_OK) {
        if (deleter)
            deleter(ud);
        luaL_error(L, "%s", tide_errmsg());
    }
    tide_lua_push_tensor(L, t);
    tide_tensor_release(t);
}

/* What one protected call does; the host's C frames hold no Lua error in between. */
typedef struct call {
    agent *a;
    game  *g;
    int    explore;
    float *rewards; /* learn: handed over (Lua's collector frees it) */
    int    frames, steps;
    double result;
} call;

/* policy:act(state, probs, explore), with state and probs over the game's memory */
static int act_protected(lua_State *L) {
    call *c = lua_touserdata(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->a->policy);
    lua_getfield(L, -1, "act");
    lua_insert(L, -2);
    c->g->frames++;
    push_buffer(L, c->g->state, N_STATE, frame_released, &c->g->released);
    push_buffer(L, c->g->probs, N_ACTIONS, NULL, NULL);
    lua_pushboolean(L, c->explore);
    lua_call(L, 4, 1);
    c->result = (double)lua_tointeger(L, -1);
    return 0;
}

/* policy:learn(rewards, steps) */
static int learn_protected(lua_State *L) {
    call *c = lua_touserdata(L, 1);
    /* first, so that an error of any later step still frees the buffer */
    push_buffer(L, c->rewards, c->frames, free, c->rewards); /* c, rewards */
    lua_rawgeti(L, LUA_REGISTRYINDEX, c->a->policy);
    lua_getfield(L, -1, "learn"); /* c, rewards, policy, learn */
    lua_insert(L, 2);
    lua_insert(L, 3); /* c, learn, policy, rewards */
    lua_pushinteger(L, c->steps);
    lua_call(L, 3, 1);
    c->result = lua_tonumber(L, -1);
    return 0;
}

/* Runs fn under lua_pcall: every error of the script, out of memory included, comes back here
 * as a status and the state stays usable. Returns 0 on success. */
static int protected_call(lua_CFunction fn, call *c, const char *what) {
    lua_State *L = c->a->L;
    lua_pushcfunction(L, fn);
    lua_pushlightuserdata(L, c);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
        fprintf(stderr, "host: %s failed: %s\n", what, lua_tostring(L, -1));
        lua_pop(L, 1);
        return -1;
    }
    return 0;
}

/* one frame: the action the agent chose (1-based), or 0 when its script failed */
static int agent_frame(agent *a, game *g, int explore) {
    call c = {.a = a, .g = g, .explore = explore};
    if (protected_call(act_protected, &c, "the agent's frame"))
        return 0;
    return c.result >= 1 && c.result <= N_ACTIONS ? (int)c.result : 0;
}

/* the share of right actions over `frames` greedy frames */
static double play(agent *a, game *g, int frames) {
    int right = 0;
    for (int f = 0; f < frames; f++) {
        game_next(g);
        right += agent_frame(a, g, 0) == game_answer(g);
    }
    return (double)right / frames;
}

/* explores `frames` frames, then policy:learn(rewards, steps); returns the loss */
static double train(agent *a, game *g, int frames, int steps) {
    float *rewards = malloc((size_t)frames * sizeof *rewards);
    if (!rewards)
        return -1;
    for (int f = 0; f < frames; f++) {
        game_next(g);
        rewards[f] = agent_frame(a, g, 1) == game_answer(g) ? 1.0f : 0.0f;
    }
    call c = {.a = a, .rewards = rewards, .frames = frames, .steps = steps, .result = -1};
    protected_call(learn_protected, &c, "learn");
    return c.result;
}

/* ---- a mod script that asks for too much ---------------------------------------------------- */

static const char *greedy_mod = "tide.set_memory_limit(4 * 1024 * 1024)  -- what the host grants\n"
                                "local cache = {}\n"
                                "for i = 1, 100 do cache[i] = tide.zeros(256, 1024) end\n";

/* runs the mod in a's state; returns 1 when it failed with a tide: error, as it should */
static int run_mod(agent *a, const char *who) {
    lua_State *L = a->L;
    int        st = luaL_loadbuffer(L, greedy_mod, strlen(greedy_mod), "=greedy_mod.lua");
    if (st == LUA_OK)
        st = lua_pcall(L, 0, 0, 0);
    const char *msg = st == LUA_OK ? "(no error)" : lua_tostring(L, -1);
    printf("%s: the mod script failed, the host carries on:\n    %s\n", who, msg);
    int ok = st != LUA_OK && strstr(msg, "tide:") != NULL;
    if (st != LUA_OK)
        lua_pop(L, 1);
    /* the host lifts the limit again after collecting what the mod left */
    lua_gc(L, LUA_GCCOLLECT, 0);
    tide_ctx_set_memory_limit(tide_lua_ctx(L), 0);
    return ok;
}

/* ---- two states, two threads --------------------------------------------------------------- */

typedef struct job {
    int    id, with_mod, mod_ok;
    double before, after;
    game   g;
} job;

static void *job_main(void *arg) {
    job  *j = arg;
    agent a;
    j->before = j->after = -1;
    if (agent_open(&a, 100 + j->id))
        return NULL;
    j->before = play(&a, &j->g, 200);
    if (j->with_mod)
        j->mod_ok = run_mod(&a, j->id == 0 ? "thread 0" : "thread 1");
    train(&a, &j->g, 512, 100);
    j->after = play(&a, &j->g, 200);
    lua_close(a.L);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1)
        lua_dir = argv[1];
    if (argc > 2)
        agent_path = argv[2];
    if (tide_init() != TIDE_OK) {
        fprintf(stderr, "host: %s\n", tide_errmsg());
        return 1;
    }
    int failures = 0;

    /* 1. one agent: play, learn once, play again */
    agent a;
    game  g = {.rng = 0x9e3779b97f4a7c15ULL};
    if (agent_open(&a, 1))
        return 1;
    double before = play(&a, &g, 500);
    printf(
        "last frame: state %.2f %.2f %.2f %.2f ... -> probs %.3f %.3f %.3f %.3f (host's memory)\n",
        g.state[0], g.state[1], g.state[2], g.state[3], g.probs[0], g.probs[1], g.probs[2],
        g.probs[3]);
    double loss = train(&a, &g, 512, 100);
    double after = play(&a, &g, 500);
    printf("agent: right actions %.1f%% before training, %.1f%% after (REINFORCE on 512 frames, "
           "100 steps, loss %.4f)\n",
           100 * before, 100 * after, loss);
    failures += loss < -0.5 || after <= before;

    /* 2. the memory limit: the mod fails, this state still plays */
    failures += !run_mod(&a, "main state");
    double again = play(&a, &g, 100);
    printf("main state after the mod: right actions %.1f%%\n", 100 * again);
    failures += again <= 0;
    lua_close(a.L);
    printf("frames: %d state tensors handed to the script, %d released by Lua\n", g.frames,
           atomic_load(&g.released));
    failures += atomic_load(&g.released) != g.frames;

    /* 3. two threads, one state each; thread 1 also runs the mod */
    job jobs[2] = {{.id = 0, .g = {.rng = 12345}}, {.id = 1, .with_mod = 1, .g = {.rng = 777}}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&th[i], NULL, job_main, &jobs[i]) != 0)
            return 1;
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        printf("thread %d: right actions %.1f%% before, %.1f%% after training\n", i,
               100 * jobs[i].before, 100 * jobs[i].after);
        failures += jobs[i].after < 0 || jobs[i].after <= jobs[i].before;
    }
    failures += !jobs[1].mod_ok;
    printf(failures ? "embed demo: %d problem(s)\n" : "embed demo: ok\n", failures);
    return failures != 0;
}
