/*
** memory_probe.c — what large drafts cost the process, in resident memory.
**
** Not a test: it prints figures (docs/LIMITS.md quotes them). Each mode
** prints the resident set size (VmRSS) before and after, in MiB.
**
**   memory_probe log  EDITS MIB CAPACITY   EDITS set_draft of MIB MiB each, log_capacity CAPACITY
**   memory_probe sub  EDITS MIB            the same with one subscription never read (default options)
**
** Build: make harness/c/build/memory_probe
*/
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "jcode_mobile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kib(void) {
    char line[256];
    long kib = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kib;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    long edits = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    long mib = argc > 3 ? strtol(argv[3], NULL, 10) : 0;
    long capacity = argc > 4 ? strtol(argv[4], NULL, 10) : 256;
    const char *prefix = "{\"type\":\"set_draft\",\"value\":\"";
    size_t plen = strlen(prefix), n = (size_t)mib * 1024 * 1024;
    char options[128], *action;
    void *app, *sub = NULL;
    long before, after, i, failed = 0;

    if ((strcmp(mode, "log") != 0 && strcmp(mode, "sub") != 0) || edits <= 0 || mib <= 0 || capacity <= 0) {
        fprintf(stderr, "usage: memory_probe log EDITS MIB CAPACITY | memory_probe sub EDITS MIB\n");
        return 2;
    }
    snprintf(options, sizeof options, "{\"scenario\":\"connected_empty_chat\",\"log_capacity\":%ld}", capacity);
    app = jcode_mobile_app_new(options);
    if (!app) return 1;
    if (strcmp(mode, "sub") == 0) sub = jcode_mobile_subscribe(app, NULL);
    action = malloc(plen + n + 3);
    if (!action) return 1;
    memcpy(action, prefix, plen);
    action[plen + n] = '"';
    action[plen + n + 1] = '}';
    action[plen + n + 2] = '\0';
    before = rss_kib();
    for (i = 0; i < edits; i++) {
        char *answer;
        /* Each edit a different draft (its first letter), as typing makes. */
        memset(action + plen, 'a' + (int)(i % 26), n);
        answer = jcode_mobile_dispatch(app, action);
        if (!answer || strncmp(answer, "{\"ok\":true", 10) != 0) failed++;
        jcode_mobile_string_free(answer);
    }
    after = rss_kib();
    printf("%s: %ld edits of %ld MiB (log_capacity %ld%s): RSS %.1f MiB before, %.1f MiB after (+%.1f MiB)%s\n", mode,
           edits, mib, capacity, sub ? ", one subscription never read" : "", before / 1024.0, after / 1024.0,
           (after - before) / 1024.0, failed ? " — some edits FAILED" : "");
    free(action);
    if (sub) jcode_mobile_unsubscribe(sub);
    jcode_mobile_app_free(app);
    return failed ? 1 : 0;
}
