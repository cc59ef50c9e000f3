/*
** instructions.c — instructions per call of the inputs a host sends most,
** counted by valgrind's callgrind (repeatable where timings are not).
**
**   valgrind --tool=callgrind --instr-atstart=no ./instructions KIND CALLS
**
** builds a connected chat with a 1 000-entry history and a running turn,
** then counts only the CALLS calls of KIND (instrumentation is switched on
** around them): text_delta (a parsed websocket_event) or set_draft (a
** keystroke, which also writes the snapshot). `make bench-instructions`
** runs both and prints the count per call.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/callgrind.h>

#include "jcode_mobile.h"

static void check(const char *what, char *answer) {
    if (!answer || strncmp(answer, "{\"ok\":true", 10) != 0) {
        fprintf(stderr, "instructions: %s failed: %s\n", what, answer ? answer : "(null)");
        exit(1);
    }
    jcode_mobile_string_free(answer);
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: instructions text_delta|set_draft CALLS\n");
        return 2;
    }
    const char *kind = argv[1];
    int calls = atoi(argv[2]);
    int delta = strcmp(kind, "text_delta") == 0;
    if (!delta && strcmp(kind, "set_draft") != 0) {
        fprintf(stderr, "instructions: unknown kind %s\n", kind);
        return 2;
    }
    void *app = jcode_mobile_app_new("{\"scenario\":\"connected_empty_chat\",\"log_capacity\":64}");
    if (!app) return 1;

    size_t cap = 1000 * 128 + 256, used = 0;
    char *history = malloc(cap);
    if (!history) return 1;
    used += (size_t)snprintf(history, cap,
        "{\"type\":\"websocket_event\",\"event\":{\"type\":\"history\",\"id\":2,\"session_id\":\"bench\",\"messages\":[");
    for (int i = 0; i < 1000; i++)
        used += (size_t)snprintf(history + used, cap - used, "%s{\"role\":\"%s\",\"content\":\"entry %d of the history\"}",
                                 i ? "," : "", i % 2 ? "assistant" : "user", i);
    snprintf(history + used, cap - used, "]}}");
    check("history", jcode_mobile_platform_event(app, history));
    free(history);
    check("send_message", jcode_mobile_dispatch(app, "{\"type\":\"send_message\",\"text\":\"go\"}"));

    const char *event = "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"hello \"}}";
    char draft[64];
    CALLGRIND_START_INSTRUMENTATION;
    for (int i = 0; i < calls; i++) {
        if (delta) {
            check("text_delta", jcode_mobile_platform_event(app, event));
        } else {
            snprintf(draft, sizeof draft, "{\"type\":\"set_draft\",\"value\":\"draft %d\"}", i);
            check("set_draft", jcode_mobile_dispatch(app, draft));
        }
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    jcode_mobile_app_free(app);
    return 0;
}
