/*
** handles.c — handles that come and go do not use up the address space,
** and running out of it answers an error instead of aborting.
**
** Two child processes, each limiting its own address space (RLIMIT_AS):
**   churn:   with what it uses plus 256 MiB, subscribes and unsubscribes
**            400 000 times on one app: every subscribe succeeds. (Each
**            handle used to take a page of address space for good: the 1 GiB
**            range the first handle reserves holds 262 144, 256 MiB 65 536
**            more, and the subscribe after those failed; with more headroom
**            the process aborted later, out of memory.)
**   exhaust: with what it uses plus 256 KiB, before its first handle (its
**            heap grown beforehand, so only the handles need address
**            space), subscribes without unsubscribing until a subscribe
**            fails: NULL and out_of_memory; once they are unsubscribed,
**            subscribing works again.
** The parent checks each child was not killed by a signal and finished in time.
**
** Not run under sanitizers or valgrind: they need the address space this
** test takes away.
*/
#include <jcode_mobile.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "in_child.h"

#define MiB (1024UL * 1024UL)
#define CHURN_HEADROOM (256 * MiB)
#define CYCLES 400000L
#define EXHAUST_HEADROOM (256 * 1024UL)
/* Live subscriptions at most in the exhaust child: far more than 256 KiB holds. */
#define MAX_LIVE 4096L

static int g_failed;

static void check(int ok, const char *what, const char *detail) {
    printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, detail ? ": " : "", detail ? detail : "");
    if (!ok) g_failed++;
    fflush(stdout);
}

static int limit_address_space(unsigned long bytes) {
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) != 0) return 0;
    r.rlim_cur = bytes;
    return setrlimit(RLIMIT_AS, &r) == 0;
}

/* Grows the heap by about `bytes` and leaves it free (a block kept at its
** top stops it shrinking), so later allocations need no new address space. */
static void *grow_heap(size_t bytes) {
    enum { BLOCK = 1024 };
    size_t n = bytes / BLOCK, i;
    void **blocks = malloc(n * sizeof *blocks), *pin;
    if (!blocks) return NULL;
    for (i = 0; i < n; i++) blocks[i] = malloc(BLOCK);
    pin = malloc(BLOCK);
    for (i = 0; i < n; i++) free(blocks[i]);
    free(blocks);
    return pin;
}

static int churn(void) {
    char detail[256];
    void *app, *sub, *first = NULL;
    long i, failed = 0, first_failure = -1, repeats = 0;
    char *error = NULL;

    alarm(60); /* bounded in time: SIGALRM fails the test */
    app = jcode_mobile_app_new("{\"scenario\":\"connected_empty_chat\"}");
    check(app != NULL, "churn: app_new(connected_empty_chat)", NULL);
    if (!app || !grow_heap(64 * MiB)) return 1;
    if (!limit_address_space(address_space() + CHURN_HEADROOM)) {
        check(0, "setrlimit(RLIMIT_AS)", NULL);
        return 1;
    }
    for (i = 0; i < CYCLES; i++) {
        sub = jcode_mobile_subscribe(app, NULL);
        if (i == 0) first = sub;
        else if (sub == first) repeats++;
        if (!sub) {
            first_failure = i;
            error = jcode_mobile_last_error();
            failed++;
            break;
        }
        jcode_mobile_unsubscribe(sub);
    }
    snprintf(detail, sizeof detail, "failed at cycle %ld: %.150s", first_failure, error ? error : "");
    check(failed == 0, "churn: 400 000 subscribe/unsubscribe cycles within 256 MiB of address space",
          failed ? detail : NULL);
    /* Its slot is taken again every 65 537 cycles or so, each time with the next of 256 generations. */
    check(repeats == 0, "churn: no handle of the 400 000 is the first one's value again", NULL);
    jcode_mobile_string_free(error);
    jcode_mobile_app_free(app);
    return g_failed ? 1 : 0;
}

static int exhaust(void) {
    char detail[256];
    void **live, *app, *sub;
    long i, n = 0;
    char *error = NULL, *version_error;

    alarm(60);
    live = malloc(MAX_LIVE * sizeof *live);
    /* The runtime's first use, without a handle: an app_new refused. */
    if (jcode_mobile_app_new("{\"scenario\":\"no such scenario\"}") != NULL) return 1;
    version_error = jcode_mobile_last_error();
    jcode_mobile_string_free(version_error);
    if (!live || !grow_heap(64 * MiB)) return 1;
    if (!limit_address_space(address_space() + EXHAUST_HEADROOM)) {
        check(0, "setrlimit(RLIMIT_AS)", NULL);
        return 1;
    }
    app = jcode_mobile_app_new("{\"scenario\":\"connected_empty_chat\"}");
    check(app != NULL, "exhaust: app_new with 256 KiB of address space to spare", NULL);
    if (!app) return 1;
    while (n < MAX_LIVE && (live[n] = jcode_mobile_subscribe(app, NULL)) != NULL) n++;
    if (n < MAX_LIVE) error = jcode_mobile_last_error();
    snprintf(detail, sizeof detail, "after %ld live subscriptions: %.180s", n, error ? error : "(none failed)");
    check(n < MAX_LIVE && error && strstr(error, "\"code\":\"out_of_memory\""),
          "exhaust: out of address space, subscribe answers NULL and out_of_memory", detail);
    jcode_mobile_string_free(error);
    for (i = 0; i < n; i++) jcode_mobile_unsubscribe(live[i]);
    sub = jcode_mobile_subscribe(app, NULL);
    check(sub != NULL, "exhaust: once they are unsubscribed, subscribe works again", NULL);
    jcode_mobile_unsubscribe(sub);
    free(live);
    jcode_mobile_app_free(app);
    return g_failed ? 1 : 0;
}

int main(void) {
    int failed = in_child("churn", churn);
    failed |= in_child("exhaust", exhaust);
    if (failed) {
        printf("handles: FAILED\n");
        return 1;
    }
    printf("handles: churn kept within the address space; running out answered out_of_memory\n");
    return 0;
}
