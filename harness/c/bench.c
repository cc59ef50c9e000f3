/*
** bench.c — the core's speed and memory at 10, 1 000, 10 000 and 100 000
** transcript entries (make bench).
**
** For each size it builds a connected chat whose history holds that many
** entries, starts a turn, and measures the median cost per call of:
**   dispatch(set_draft), platform_event(text_delta) as a raw line and as a
**   parsed event, state, tree, and changes for one delta;
** the bytes of each answer; and the resident memory the transcript takes.
** Timings are medians of many rounds (each round times a batch of calls),
** because these machines are shared and noisy: compare ratios, not
** absolute numbers from different runs.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <malloc.h>

#include "jcode_mobile.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *values, int n) {
    qsort(values, (size_t)n, sizeof(double), compare_doubles);
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/* Resident memory of this process, in bytes, after returning freed heap
** memory to the system (so the figure is what is live, not what the
** allocator keeps around from parsing the history). */
static long resident_bytes(void) {
    long pages = 0, resident = 0;
    malloc_trim(0);
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    fclose(f);
    return resident * sysconf(_SC_PAGESIZE);
}

static void die(const char *what, char *answer) {
    fprintf(stderr, "bench: %s failed: %s\n", what, answer ? answer : "(null)");
    exit(1);
}

/* Calls a function returning an owned string, checks it, returns its length. */
static size_t consume(const char *what, char *answer) {
    if (!answer || strncmp(answer, "{\"ok\":true", 10) != 0) die(what, answer);
    size_t n = strlen(answer);
    jcode_mobile_string_free(answer);
    return n;
}

/* The revision in a report: {"ok":true,"revision":N,… */
static unsigned long long report_revision(const char *answer) {
    const char *r = strstr(answer, "\"revision\":");
    return r ? strtoull(r + 11, NULL, 10) : 0;
}

/* A history event with n entries of ~text_len characters each. */
static char *history_event(int n, int text_len, size_t *text_bytes) {
    size_t cap = (size_t)n * (size_t)(text_len + 64) + 256;
    char *out = malloc(cap);
    if (!out) exit(1);
    size_t used = (size_t)snprintf(out, cap,
        "{\"type\":\"websocket_event\",\"event\":{\"type\":\"history\",\"id\":2,\"session_id\":\"bench\",\"messages\":[");
    *text_bytes = 0;
    for (int i = 0; i < n; i++) {
        int len = text_len - 8 + (i * 7919) % 17; /* varied lengths around text_len */
        used += (size_t)snprintf(out + used, cap - used, "%s{\"role\":\"%s\",\"content\":\"", i ? "," : "",
                                 i % 2 ? "assistant" : "user");
        for (int k = 0; k < len; k++) out[used++] = (char)('a' + (i + k) % 26);
        used += (size_t)snprintf(out + used, cap - used, "\"}");
        *text_bytes += (size_t)len;
    }
    snprintf(out + used, cap - used, "]}}");
    return out;
}

typedef struct {
    double draft_ns, delta_raw_ns, delta_parsed_ns, state_ns, tree_ns, changes_ns;
    size_t draft_bytes, delta_bytes, state_bytes, tree_bytes, changes_bytes;
    double bytes_per_entry, text_per_entry;
} result_t;

#define ROUNDS 101
/* Average characters per transcript entry (a short chat message). */
#define TEXT_LENGTH 96

static result_t run(int entries) {
    result_t r;
    memset(&r, 0, sizeof r);
    void *app = jcode_mobile_app_new("{\"scenario\":\"connected_empty_chat\",\"log_capacity\":64}");
    if (!app) die("app_new", jcode_mobile_last_error());
    size_t text_bytes = 0;
    char *history = history_event(entries, TEXT_LENGTH, &text_bytes);
    long rss_before = resident_bytes();
    consume("history", jcode_mobile_platform_event(app, history));
    long rss_after = resident_bytes();
    free(history);
    r.bytes_per_entry = (double)(rss_after - rss_before) / entries;
    r.text_per_entry = (double)text_bytes / entries;
    consume("send", jcode_mobile_dispatch(app, "{\"type\":\"send_message\",\"text\":\"go\"}"));

    double samples[ROUNDS];
    const int batch = 200;

    /* dispatch(set_draft) */
    char draft[64];
    for (int round = 0; round < ROUNDS; round++) {
        double t0 = now_ns();
        for (int i = 0; i < batch; i++) {
            snprintf(draft, sizeof draft, "{\"type\":\"set_draft\",\"value\":\"draft %d\"}", round * batch + i);
            char *a = jcode_mobile_dispatch(app, draft);
            if (i == 0 && round == 0) r.draft_bytes = strlen(a);
            jcode_mobile_string_free(a);
        }
        samples[round] = (now_ns() - t0) / batch;
    }
    r.draft_ns = median(samples, ROUNDS);

    /* platform_event(text_delta), raw line */
    const char *raw = "{\"type\":\"websocket_event\",\"line\":\"{\\\"type\\\":\\\"text_delta\\\",\\\"text\\\":\\\"hello \\\"}\"}";
    for (int round = 0; round < ROUNDS; round++) {
        double t0 = now_ns();
        for (int i = 0; i < batch; i++) {
            char *a = jcode_mobile_platform_event(app, raw);
            if (i == 0 && round == 0) r.delta_bytes = strlen(a);
            jcode_mobile_string_free(a);
        }
        samples[round] = (now_ns() - t0) / batch;
    }
    r.delta_raw_ns = median(samples, ROUNDS);

    /* platform_event(text_delta), parsed event */
    const char *parsed = "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"hello \"}}";
    for (int round = 0; round < ROUNDS; round++) {
        double t0 = now_ns();
        for (int i = 0; i < batch; i++) jcode_mobile_string_free(jcode_mobile_platform_event(app, parsed));
        samples[round] = (now_ns() - t0) / batch;
    }
    r.delta_parsed_ns = median(samples, ROUNDS);

    /* changes for one delta */
    for (int round = 0; round < ROUNDS; round++) {
        char *a = jcode_mobile_platform_event(app, parsed);
        unsigned long long rev = report_revision(a) - 1;
        jcode_mobile_string_free(a);
        double t0 = now_ns();
        for (int i = 0; i < batch; i++) {
            char *c = jcode_mobile_changes(app, rev);
            if (i == 0 && round == 0) r.changes_bytes = strlen(c);
            jcode_mobile_string_free(c);
        }
        samples[round] = (now_ns() - t0) / batch;
    }
    r.changes_ns = median(samples, ROUNDS);

    /* state and tree: whole documents, fewer calls for big sizes */
    int reps = entries >= 100000 ? 1 : entries >= 10000 ? 3 : 50;
    int rounds = entries >= 100000 ? 7 : entries >= 10000 ? 15 : 31;
    for (int round = 0; round < rounds; round++) {
        double t0 = now_ns();
        for (int i = 0; i < reps; i++) r.state_bytes = consume("state", jcode_mobile_state(app));
        samples[round] = (now_ns() - t0) / reps;
    }
    r.state_ns = median(samples, rounds);
    for (int round = 0; round < rounds; round++) {
        double t0 = now_ns();
        for (int i = 0; i < reps; i++) r.tree_bytes = consume("tree", jcode_mobile_tree(app));
        samples[round] = (now_ns() - t0) / reps;
    }
    r.tree_ns = median(samples, rounds);

    jcode_mobile_app_free(app);
    return r;
}

/* Resident bytes per entry of a transcript of `entries` texts of about `text_len` characters. */
static void memory_line(int entries, int text_len) {
    void *app = jcode_mobile_app_new("{\"scenario\":\"connected_empty_chat\",\"log_capacity\":64}");
    if (!app) die("app_new", jcode_mobile_last_error());
    size_t text_bytes = 0;
    char *history = history_event(entries, text_len, &text_bytes);
    long before = resident_bytes();
    consume("history", jcode_mobile_platform_event(app, history));
    long after = resident_bytes();
    free(history);
    printf("%6d entries of ~%4d-byte texts: %6.0f resident bytes per entry for %4.0f text bytes (%.2fx)\n", entries,
           text_len, (double)(after - before) / entries, (double)text_bytes / entries,
           (double)(after - before) / (double)text_bytes);
    jcode_mobile_app_free(app);
}

static void print_time(double ns) {
    if (ns < 10000) printf(" %9.2f µs", ns / 1000);
    else printf(" %9.2f ms", ns / 1e6);
}

int main(int argc, char **argv) {
    int sizes[] = {10, 1000, 10000, 100000};
    int count = 4;
    if (argc > 1 && strcmp(argv[1], "--quick") == 0) count = 3;
    result_t results[4];
    printf("jcode mobile core %s (ABI %u): medians of %d rounds\n\n", jcode_mobile_version(), jcode_mobile_abi_version(), ROUNDS);
    /* Warm up: the first app pays for the runtime's one-time set-up. */
    void *warm = jcode_mobile_app_new("{\"scenario\":\"connected_chat\"}");
    consume("warm-up", jcode_mobile_tree(warm));
    jcode_mobile_app_free(warm);
    for (int i = 0; i < count; i++) results[i] = run(sizes[i]);

    printf("%-34s", "entries");
    for (int i = 0; i < count; i++) printf(" %12d", sizes[i]);
    printf("\n");
    printf("%-34s", "dispatch(set_draft)");
    for (int i = 0; i < count; i++) print_time(results[i].draft_ns);
    printf("\n%-34s", "platform_event(text_delta) raw");
    for (int i = 0; i < count; i++) print_time(results[i].delta_raw_ns);
    printf("\n%-34s", "platform_event(text_delta) parsed");
    for (int i = 0; i < count; i++) print_time(results[i].delta_parsed_ns);
    printf("\n%-34s", "changes (one delta)");
    for (int i = 0; i < count; i++) print_time(results[i].changes_ns);
    printf("\n%-34s", "state");
    for (int i = 0; i < count; i++) print_time(results[i].state_ns);
    printf("\n%-34s", "tree");
    for (int i = 0; i < count; i++) print_time(results[i].tree_ns);
    printf("\n%-34s", "state MB/s");
    for (int i = 0; i < count; i++) printf(" %12.0f", results[i].state_bytes / (results[i].state_ns / 1e9) / 1e6);
    printf("\n%-34s", "tree MB/s");
    for (int i = 0; i < count; i++) printf(" %12.0f", results[i].tree_bytes / (results[i].tree_ns / 1e9) / 1e6);
    printf("\n%-34s", "bytes: set_draft report");
    for (int i = 0; i < count; i++) printf(" %12zu", results[i].draft_bytes);
    printf("\n%-34s", "bytes: text_delta report");
    for (int i = 0; i < count; i++) printf(" %12zu", results[i].delta_bytes);
    printf("\n%-34s", "bytes: changes (one delta)");
    for (int i = 0; i < count; i++) printf(" %12zu", results[i].changes_bytes);
    printf("\n%-34s", "bytes: state");
    for (int i = 0; i < count; i++) printf(" %12zu", results[i].state_bytes);
    printf("\n%-34s", "bytes: tree");
    for (int i = 0; i < count; i++) printf(" %12zu", results[i].tree_bytes);
    printf("\n%-34s", "resident bytes per entry");
    for (int i = 0; i < count; i++) printf(" %12.0f", results[i].bytes_per_entry);
    printf("\n%-34s", "text bytes per entry");
    for (int i = 0; i < count; i++) printf(" %12.0f", results[i].text_per_entry);
    printf("\n\n");
    memory_line(10000, 96);
    memory_line(10000, 1000);
    memory_line(100000, 96);
    printf("\n");
    if (count == 4) {
        printf("text_delta raw, 100 000 vs 10 entries: %.2fx\n", results[3].delta_raw_ns / results[0].delta_raw_ns);
        printf("text_delta parsed, 100 000 vs 10 entries: %.2fx\n", results[3].delta_parsed_ns / results[0].delta_parsed_ns);
    }
    return 0;
}
