/*
** stress.c — many threads on one handle and many handles at once, then a
** check that every accepted input is accounted for (make stress; run under
** ThreadSanitizer by make sanitize).
**
**   stress            threads: 8 on one shared handle, 8 with their own
**                     handle, 1 creating and freeing handles
**   stress --soak N   one thread, N calls with every string freed; resident
**                     memory after a warm-up must stay flat
**
** Prints "N passed, N failed"; exit status 0 only when nothing failed.
*/
#define _POSIX_C_SOURCE 200809L
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jcode_mobile.h"

static int passed, failed;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;

static void check(int ok, const char *what, long a, long b) {
    pthread_mutex_lock(&report_lock);
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL: %s (%ld vs %ld)\n", what, a, b);
    }
    pthread_mutex_unlock(&report_lock);
}

/* Frees a returned string; says whether it was {"ok":true…}. */
static int ok(char *answer) {
    int good = answer && strncmp(answer, "{\"ok\":true", 10) == 0;
    jcode_mobile_string_free(answer);
    return good;
}

/* A number after `key` in `json` (enough for our own well-known answers). */
static long number_after(const char *json, const char *key) {
    const char *p = strstr(json, key);
    return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static long state_number(void *app, const char *key) {
    char *s = jcode_mobile_state(app);
    long v = number_after(s, key);
    jcode_mobile_string_free(s);
    return v;
}

static long next_seq(void *app) {
    char *s = jcode_mobile_logs(app, 1);
    long v = number_after(s, "\"next_seq\":");
    jcode_mobile_string_free(s);
    return v;
}

/* The length of the last transcript entry's text, found by the marker it carries. */
static long streamed_length(void *app) {
    char *s = jcode_mobile_state(app);
    const char *p = strstr(s, "\"text\":\"@");
    long n = 0;
    if (p)
        for (p += 9; *p && *p != '"'; p++) n++;
    jcode_mobile_string_free(s);
    return n;
}

typedef struct {
    void *app;
    int id;
    int iterations;
    long inputs;   /* dispatch + platform_event calls made */
    long changes;  /* of which changed the state */
    long deltas;   /* text deltas (2 characters each) */
} worker_t;

static const char *DELTA = "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"ab\"}}";

static void *work(void *arg) {
    worker_t *w = arg;
    char buffer[160];
    for (int i = 0; i < w->iterations; i++) {
        switch (i % 8) {
        case 0:
        case 4:
            /* A draft no other call writes: always a change. */
            snprintf(buffer, sizeof buffer, "{\"type\":\"set_draft\",\"value\":\"w%d-%d\"}", w->id, i);
            if (ok(jcode_mobile_dispatch(w->app, buffer))) w->changes++;
            w->inputs++;
            break;
        case 1:
        case 5:
            if (ok(jcode_mobile_platform_event(w->app, DELTA))) {
                w->changes++;
                w->deltas++;
            }
            w->inputs++;
            break;
        case 2:
            ok(jcode_mobile_state(w->app));
            ok(jcode_mobile_changes(w->app, (uint64_t)(i & 7)));
            break;
        case 3:
            /* Rejected inputs are logged too, and change nothing. */
            ok(jcode_mobile_dispatch(w->app, i % 16 == 3 ? "{\"type\":\"fly\"}" : "{not json"));
            w->inputs++;
            break;
        case 6:
            ok(jcode_mobile_logs(w->app, 8));
            if (i % 64 == 6) ok(jcode_mobile_tree(w->app));
            break;
        default:
            /* Taps that change nothing in this state (the composer has a draft). */
            ok(jcode_mobile_dispatch(w->app, "{\"type\":\"tap_node\",\"node_id\":\"no.such.node\"}"));
            w->inputs++;
            break;
        }
    }
    return NULL;
}

/* A connected chat with a turn running whose streamed text starts with "@". */
static void *streaming_app(void) {
    void *app = jcode_mobile_app_new("{\"scenario\":\"connected_chat\",\"log_capacity\":4}");
    if (!app) {
        printf("FAIL: app_new\n");
        exit(1);
    }
    ok(jcode_mobile_dispatch(app, "{\"type\":\"send_message\",\"text\":\"go\"}"));
    ok(jcode_mobile_platform_event(app, "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"@\"}}"));
    return app;
}

static void *churn(void *arg) {
    int rounds = *(int *)arg;
    for (int i = 0; i < rounds; i++) {
        void *app = jcode_mobile_app_new(i % 3 ? NULL : "{\"scenario\":\"onboarding\"}");
        ok(jcode_mobile_dispatch(app, "{\"type\":\"set_host\",\"value\":\"devbox\"}"));
        jcode_mobile_app_free(app);
        jcode_mobile_app_free(app);
        char *gone = jcode_mobile_state(app);
        check(gone && strstr(gone, "invalid_handle") != NULL, "a freed handle answers invalid_handle", 0, 0);
        jcode_mobile_string_free(gone);
        if (jcode_mobile_app_new("{\"scenario\":\"mars\"}") == NULL) {
            char *e = jcode_mobile_last_error();
            check(strstr(e, "invalid_scenario") != NULL, "last_error is this thread's", 0, 0);
            jcode_mobile_string_free(e);
        }
    }
    return NULL;
}

static int threads(int iterations) {
    enum { SHARED = 8, OWN = 8 };
    pthread_t t[SHARED + OWN + 1];
    worker_t w[SHARED + OWN];
    void *shared = streaming_app();
    long base_revision = state_number(shared, "\"revision\":");
    long base_seq = next_seq(shared);
    for (int i = 0; i < SHARED + OWN; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].app = i < SHARED ? shared : streaming_app();
        w[i].id = i;
        w[i].iterations = iterations;
        pthread_create(&t[i], NULL, work, &w[i]);
    }
    int churn_rounds = iterations / 20;
    pthread_create(&t[SHARED + OWN], NULL, churn, &churn_rounds);
    for (int i = 0; i < SHARED + OWN + 1; i++) pthread_join(t[i], NULL);

    long inputs = 0, changes = 0, deltas = 0;
    for (int i = 0; i < SHARED; i++) {
        inputs += w[i].inputs;
        changes += w[i].changes;
        deltas += w[i].deltas;
    }
    check(next_seq(shared) - base_seq == inputs, "shared handle: every input is in the log", next_seq(shared) - base_seq, inputs);
    check(state_number(shared, "\"revision\":") - base_revision == changes, "shared handle: one revision per change",
          state_number(shared, "\"revision\":") - base_revision, changes);
    check(streamed_length(shared) == 2 * deltas, "shared handle: every delta is in the text", streamed_length(shared), 2 * deltas);
    jcode_mobile_app_free(shared);
    for (int i = SHARED; i < SHARED + OWN; i++) {
        check(next_seq(w[i].app) - base_seq == w[i].inputs, "own handle: every input is in the log", next_seq(w[i].app) - base_seq,
              w[i].inputs);
        check(streamed_length(w[i].app) == 2 * w[i].deltas, "own handle: every delta is in the text", streamed_length(w[i].app),
              2 * w[i].deltas);
        jcode_mobile_app_free(w[i].app);
    }
    return 0;
}

static long resident_kb(void) {
    long pages = 0, resident = 0;
    malloc_trim(0);
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* N calls on one app whose state stays bounded (the draft is replaced, the
** streamed text is reset by text_replace), so memory must not grow. */
static int soak(long calls) {
    void *app = streaming_app();
    long warmup = calls / 10, rss_warm = 0;
    char buffer[128];
    for (long i = 0; i < calls; i++) {
        if (i == warmup) rss_warm = resident_kb();
        switch (i % 10) {
        case 0: snprintf(buffer, sizeof buffer, "{\"type\":\"set_draft\",\"value\":\"draft %ld\"}", i);
            ok(jcode_mobile_dispatch(app, buffer)); break;
        case 1: case 2: case 3: ok(jcode_mobile_platform_event(app, DELTA)); break;
        case 4: ok(jcode_mobile_platform_event(app, "{\"type\":\"websocket_event\",\"line\":\"{\\\"type\\\":\\\"text_replace\\\",\\\"text\\\":\\\"@\\\"}\"}")); break;
        case 5: ok(jcode_mobile_state(app)); break;
        case 6: ok(jcode_mobile_changes(app, 0)); break;
        case 7: ok(jcode_mobile_logs(app, 0)); break;
        case 8: ok(jcode_mobile_dispatch(app, "{broken")); break;
        default: if (i % 1000 == 9) ok(jcode_mobile_tree(app)); else ok(jcode_mobile_platform_event(app, DELTA)); break;
        }
    }
    long rss_end = resident_kb();
    printf("soak: %ld calls; resident %ld KiB after warm-up, %ld KiB at the end\n", calls, rss_warm, rss_end);
    check(rss_end - rss_warm < 2048, "resident memory stays flat (growth under 2 MiB)", rss_end - rss_warm, 2048);
    jcode_mobile_app_free(app);
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "--soak") == 0) {
        soak(atol(argv[2]));
    } else {
        threads(argc > 1 ? atoi(argv[1]) : 4000);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
