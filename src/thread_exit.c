/* thread_exit.c — work to do when a thread exits: the per-thread caches of storage.c and ctx.c
 * give their blocks and references back. One pthread key for all of them, whose destructor runs
 * the calling thread's registrations, latest first. The main thread's run at no exit: the
 * process's end takes everything. */
#include "tide_impl.h"

#include <pthread.h>

#define MAX_EXIT_FNS 4 /* one per per-thread cache in the core */

typedef struct exit_list {
    void (*fn[MAX_EXIT_FNS])(void *);
    void *arg[MAX_EXIT_FNS];
    int   n;
} exit_list;

static _Thread_local exit_list exits;
static pthread_key_t           exit_key;
static pthread_once_t          exit_key_once = PTHREAD_ONCE_INIT;
static bool                    exit_key_made;

static void run_exits(void *p) {
    exit_list *l = p;
    while (l->n > 0) {
        l->n--;
        l->fn[l->n](l->arg[l->n]);
    }
}

static void make_exit_key(void) {
    exit_key_made = pthread_key_create(&exit_key, run_exits) == 0;
}

bool tide_at_thread_exit(void (*fn)(void *), void *arg) {
    pthread_once(&exit_key_once, make_exit_key);
    exit_list *l = &exits;
    if (!exit_key_made || l->n == MAX_EXIT_FNS)
        return false;
    if (l->n == 0 && pthread_setspecific(exit_key, l) != 0)
        return false;
    l->fn[l->n] = fn;
    l->arg[l->n] = arg;
    l->n++;
    return true;
}
