/*
** oom.c — out of memory never aborts the host.
**
** A child process grows an app's transcript to 36 MiB, then limits its own
** address space (RLIMIT_AS) to what it uses plus a little, and asks for
** answers that cannot fit:
**   - jcode_mobile_state (the whole transcript): NULL or out_of_memory;
**   - a 15 MiB input whose tokens cannot fit: out_of_memory, nothing applied;
** then, still limited, small calls work (a dispatch, the logs), and with the
** limit lifted the same app answers jcode_mobile_state in full.
** The parent checks the child was not killed by a signal (the writer used
** to trap: "Fatal error: out of memory", SIGILL) and finished in time.
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
/* One entry's text keeps at most 1 MiB (docs/LIMITS.md): 36 replies of 1 MiB. */
#define DELTA_BYTES (1 * MiB)
#define DELTAS 36
/* Address space allowed beyond what the child uses when the limit is set:
** far less than the 36 MiB answer, enough for the small calls. */
#define HEADROOM (24 * MiB)

static int g_failed;

static void check(int ok, const char *what, const char *detail) {
    printf("%s %s%s%s\n", ok ? "ok  " : "FAIL", what, detail ? ": " : "", detail ? detail : "");
    if (!ok) g_failed++;
    fflush(stdout);
}

/* The start of an answer, for messages. */
static const char *head(const char *answer) {
    static char buf[160];
    if (!answer) return "NULL";
    snprintf(buf, sizeof buf, "%.150s", answer);
    return buf;
}

static int is_out_of_memory(const char *answer) {
    return answer && strncmp(answer, "{\"ok\":false,", 12) == 0 && strstr(answer, "\"code\":\"out_of_memory\"") != NULL;
}

static int is_ok(const char *answer) { return answer && strncmp(answer, "{\"ok\":true", 10) == 0; }

static int child(void) {
    struct rlimit original, limited;
    const char *prefix = "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"";
    const char *suffix = "\"}}";
    size_t plen = strlen(prefix), slen = strlen(suffix), i;
    char *delta, *tokens, *answer;
    void *app;
    unsigned long used;
    size_t n;

    alarm(60); /* bounded in time: SIGALRM fails the test */
    app = jcode_mobile_app_new("{\"scenario\":\"chat_streaming\"}");
    check(app != NULL, "app_new(chat_streaming)", NULL);
    if (!app) return 1;

    /* 36 replies of 1 MiB, each a delta and its message_end (the next delta starts a new entry). */
    delta = malloc(plen + DELTA_BYTES + slen + 1);
    if (!delta) return 1;
    memcpy(delta, prefix, plen);
    memset(delta + plen, 'a', DELTA_BYTES);
    memcpy(delta + plen + DELTA_BYTES, suffix, slen + 1);
    {
        size_t applied = 0;
        for (i = 0; i < DELTAS; i++) {
            answer = jcode_mobile_platform_event(app, delta);
            if (is_ok(answer)) applied++;
            jcode_mobile_string_free(answer);
            answer = jcode_mobile_platform_event(
                app, "{\"type\":\"websocket_event\",\"event\":{\"type\":\"message_end\",\"stop_reason\":\"end_turn\"}}");
            if (is_ok(answer)) applied++;
            jcode_mobile_string_free(answer);
        }
        check(applied == 2 * DELTAS, "36 replies of 1 MiB apply (a delta and a message_end each)", NULL);
    }
    free(delta);

    /* A 15 MiB input of 7.5 million tokens (120 MiB of token storage). */
    n = 15 * MiB;
    tokens = malloc(n + 1);
    if (!tokens) return 1;
    tokens[0] = '[';
    for (i = 1; i + 2 < n; i += 2) {
        tokens[i] = '0';
        tokens[i + 1] = ',';
    }
    tokens[i] = '0';
    tokens[i + 1] = ']';
    tokens[i + 2] = '\0';

    /* Limit the address space to what the child uses now, plus a little. */
    if (getrlimit(RLIMIT_AS, &original) != 0) return 1;
    used = address_space();
    check(used > 0, "read /proc/self/statm", NULL);
    limited = original;
    limited.rlim_cur = used + HEADROOM;
    if (setrlimit(RLIMIT_AS, &limited) != 0) {
        check(0, "setrlimit(RLIMIT_AS)", NULL);
        return 1;
    }

    answer = jcode_mobile_state(app);
    check(answer == NULL || is_out_of_memory(answer), "state() too large for memory: NULL or out_of_memory",
          head(answer));
    jcode_mobile_string_free(answer);

    answer = jcode_mobile_platform_event(app, tokens);
    check(is_out_of_memory(answer), "an input whose tokens do not fit: out_of_memory", head(answer));
    jcode_mobile_string_free(answer);
    free(tokens);

    /* Still limited: the app answers what fits. */
    answer = jcode_mobile_dispatch(app, "{\"type\":\"set_draft\",\"value\":\"still here\"}");
    check(is_ok(answer), "a small dispatch after running out of memory", head(answer));
    jcode_mobile_string_free(answer);
    answer = jcode_mobile_logs(app, 2);
    check(is_ok(answer) && strstr(answer, "\"error\":\"out_of_memory\"") && strstr(answer, "\"type\":\"set_draft\""),
          "the logs: the refused input (out_of_memory), then the dispatch", head(answer));
    jcode_mobile_string_free(answer);

    /* Memory back: the same app answers in full. */
    if (setrlimit(RLIMIT_AS, &original) != 0) return 1;
    answer = jcode_mobile_state(app);
    check(is_ok(answer) && strlen(answer) > DELTAS * DELTA_BYTES && strstr(answer, "\"draft\":\"still here\""),
          "state() in full once memory is back", is_ok(answer) ? NULL : head(answer));
    jcode_mobile_string_free(answer);

    jcode_mobile_app_free(app);
    return g_failed ? 1 : 0;
}

int main(void) {
    if (in_child("oom", child) != 0) {
        printf("oom: FAILED\n");
        return 1;
    }
    printf("oom: out of memory answered without aborting; the app stayed usable\n");
    return 0;
}
