/*
** instructions.c — instructions per input, counted by valgrind's callgrind
** (repeatable where timings are not), at a given size of the state the
** input touches.
**
**   valgrind --tool=callgrind --instr-atstart=no ./instructions KIND SIZE
**
** Only the measured inputs are counted (instrumentation is switched on
** around them); the program prints how many there were, so the count per
** input is the collected total divided by that. `make bench-instructions`
** runs every kind at 1 000 and 100 000 and prints the counts per input.
**
** Kinds, and what SIZE is:
**   text_delta          a streamed delta into a transcript of SIZE entries (1 000 deltas)
**   text_delta_raw      the same delta as the gateway wrote it: a raw `line`, with the
**                       socket's `effect_id` (1 000 deltas)
**   text_delta_subscribed  the same with one subscriber that takes each delta's
**                       state_changed event (jcode_mobile_next_event, counted in)
**   set_draft           a keystroke with a transcript of SIZE entries (1 000 keystrokes)
**   permission_request  one frame of SIZE permission_request events with distinct ids
**   stdin_request       one frame of SIZE stdin_request events with distinct ids
**   session_renamed     one frame of SIZE session_renamed events with distinct session ids
**   tool_start          one frame of SIZE tool_start events with distinct call ids, in a turn
**   outbox              the last 100 of SIZE messages typed and sent while offline
**                       (set_draft + send_message: two calls per message)
**   queue_interrupt     the last 100 of SIZE messages typed and sent during a turn
**                       (queued as soft interrupts; two calls per message)
**   tokens, session_renamed_call, tap_node
**                       1 000 calls, one input each, in a turn with a transcript
**                       of SIZE entries: a `tokens` event (usage growing), a
**                       `session_renamed` event (a new title each time), and
**                       tap_node on the draft field (it takes the focus once)
**   tree, hit_test, screenshot_svg, tap_xy, scroll_messages
**                       5 calls with a transcript of SIZE entries (the screen
**                       shows its end): the layout's cost, and what each adds
**   delta_tree_changes  a streamed delta into a transcript of SIZE entries,
**                       then jcode_mobile_tree_changes from the revision
**                       before it (1 000 pairs, counted together: what a
**                       host that mirrors the tree pays per delta); prints
**                       the largest tree_changes answer
**   reply_delta_tree_changes
**                       the same pairs (delta, then tree_changes) into a reply
**                       in markdown that already holds SIZE bytes (headings,
**                       paragraphs with styles, lists, fenced code, tables):
**                       what a delta costs as the reply grows (100 pairs)
**   reply_markdown_delta_tree_changes
**                       the same, with deltas that change blocks and styles
**                       (a line ending, a list item, bold, code, a heading,
**                       a fence opened and closed, a table's rows), which
**                       the stream parses on from its open tail (1 000 pairs:
**                       the reply's arrays grow by doubling, a cost a delta
**                       pays only amortized)
**   tool_input_bash, tool_input_write, tool_input_edit, tool_input_apply_patch,
**   tool_input_patch; tool_once_<tool> (the same input in one delta)
**                       a tool call's input of about SIZE bytes (a many-line
**                       command, a file's content, an edit's old and new
**                       strings, a patch of many files in either format)
**                       streamed in 4-byte tool_input deltas, each followed by
**                       jcode_mobile_tree_changes (its card closed); the count
**                       is per input byte: it stays flat when a delta costs
**                       what it adds (the whole stream is linear)
**   history, first_tree a history of SIZE entries arriving (one call), and
**                       the first jcode_mobile_tree after it (one call)
**   restore             jcode_mobile_app_new of a snapshot holding SIZE saved
**                       servers and SIZE outbox messages (one call; the count
**                       is per saved entry, so SIZE is what it is divided by)
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/callgrind.h>

#include "jcode_mobile.h"

static void check(const char *what, char *answer) {
    if (!answer || strncmp(answer, "{\"ok\":true", 10) != 0) {
        fprintf(stderr, "instructions: %s failed: %.300s\n", what, answer ? answer : "(null)");
        exit(1);
    }
    jcode_mobile_string_free(answer);
}

/* app_new's options: a snapshot of `size` saved servers and `size` outbox messages, all distinct. */
static char *snapshot_options(int size) {
    size_t cap = 256 + (size_t)size * 256, n = 0;
    char *out = malloc(cap);
    if (!out) exit(1);
    n += (size_t)sprintf(out + n, "{\"snapshot\":{\"version\":1,\"servers\":[");
    for (int i = 0; i < size; i++)
        n += (size_t)sprintf(out + n, "%s{\"name\":\"s%d\",\"host\":\"host%d.local\",\"port\":7643,\"use_tls\":false,"
                             "\"working_dir\":\"/w\"}", i ? "," : "", i, i);
    n += (size_t)sprintf(out + n, "],\"outbox\":{\"messages\":[");
    for (int i = 0; i < size; i++)
        n += (size_t)sprintf(out + n, "%s{\"id\":\"o%d\",\"text\":\"message %d\",\"attachments\":[],\"delivery\":\"waiting\"}",
                             i ? "," : "", i + 1, i);
    sprintf(out + n, "],\"next_id\":1}}}");
    return out;
}

/* The "revision" of an answer. */
static unsigned long long revision_of(const char *answer) {
    const char *r = strstr(answer, "\"revision\":");
    return r ? strtoull(r + 11, NULL, 10) : 0;
}

/* The effect_id of the open socket: its websocket_connect in pending_effects. */
static long socket_effect_id(void *app) {
    char *state = jcode_mobile_state(app);
    const char *hit = state ? strstr(state, ",\"type\":\"websocket_connect\"") : NULL;
    if (!hit) {
        fprintf(stderr, "instructions: no websocket_connect pending\n");
        exit(1);
    }
    const char *p = hit;
    while (p > state && p[-1] >= '0' && p[-1] <= '9') p--;
    long id = strtol(p, NULL, 10);
    jcode_mobile_string_free(state);
    return id;
}

static char *history_of(int entries) {
    size_t cap = (size_t)entries * 96 + 256, used = 0;
    char *h = malloc(cap);
    if (!h) exit(1);
    used += (size_t)snprintf(h, cap,
        "{\"type\":\"websocket_event\",\"event\":{\"type\":\"history\",\"id\":2,\"session_id\":\"bench\",\"messages\":[");
    for (int i = 0; i < entries; i++)
        used += (size_t)snprintf(h + used, cap - used, "%s{\"role\":\"%s\",\"content\":\"entry %d of the history\"}",
                                 i ? "," : "", i % 2 ? "assistant" : "user", i);
    snprintf(h + used, cap - used, "]}}");
    return h;
}

/* One websocket_event whose raw frame holds `n` events made by `line`. */
static char *frame_of(int n, int (*line)(char *, size_t, int)) {
    size_t cap = (size_t)n * 160 + 64, used = 0;
    char *f = malloc(cap);
    if (!f) exit(1);
    used += (size_t)snprintf(f, cap, "{\"type\":\"websocket_event\",\"line\":\"");
    for (int i = 0; i < n; i++) used += (size_t)line(f + used, cap - used, i);
    snprintf(f + used, cap - used, "\"}");
    return f;
}

static int permission_line(char *out, size_t cap, int i) {
    return snprintf(out, cap,
        "{\\\"type\\\":\\\"permission_request\\\",\\\"request_id\\\":\\\"perm-%d\\\",\\\"action\\\":\\\"bash\\\","
        "\\\"detail\\\":\\\"run step %d\\\"}\\n", i, i);
}

static int stdin_line(char *out, size_t cap, int i) {
    return snprintf(out, cap,
        "{\\\"type\\\":\\\"stdin_request\\\",\\\"request_id\\\":\\\"in-%d\\\",\\\"prompt\\\":\\\"value %d?\\\","
        "\\\"is_password\\\":false,\\\"tool_call_id\\\":\\\"call-%d\\\"}\\n", i, i, i);
}

static int tool_line(char *out, size_t cap, int i) {
    return snprintf(out, cap, "{\\\"type\\\":\\\"tool_start\\\",\\\"id\\\":\\\"call-%d\\\",\\\"name\\\":\\\"bash\\\"}\\n", i);
}

static int renamed_line(char *out, size_t cap, int i) {
    return snprintf(out, cap,
        "{\\\"type\\\":\\\"session_renamed\\\",\\\"session_id\\\":\\\"ses-%d\\\",\\\"display_title\\\":\\\"Session %d\\\"}\\n",
        i, i);
}


/* A tool call's input JSON of about `size` bytes for `tool` (bash, write, edit, apply_patch, patch). */
static char *tool_input_of(const char *tool, int size) {
    size_t cap = (size_t)size + 4096, n = 0;
    char *out = malloc(cap);
    if (!out) exit(1);
    if (!strcmp(tool, "bash")) n += (size_t)sprintf(out, "{\"command\":\"");
    else if (!strcmp(tool, "write")) n += (size_t)sprintf(out, "{\"file_path\":\"src/big.rs\",\"content\":\"");
    else if (!strcmp(tool, "edit")) n += (size_t)sprintf(out, "{\"file_path\":\"src/big.rs\",\"old_string\":\"");
    else n += (size_t)sprintf(out, "{\"patch_text\":\"%s", !strcmp(tool, "apply_patch") ? "*** Begin Patch\\n" : "");
    int halves = 0;
    for (int i = 0; n < (size_t)size; i++) {
        if (!strcmp(tool, "bash")) n += (size_t)sprintf(out + n, "echo \\\"step %d\\\" >> log.txt\\n", i);
        else if (!strcmp(tool, "write")) n += (size_t)sprintf(out + n, "    let value%d = compute(%d);\\n", i, i);
        else if (!strcmp(tool, "edit")) {
            if (n >= (size_t)size / 2 && !halves++) n += (size_t)sprintf(out + n, "\",\"new_string\":\"");
            n += (size_t)sprintf(out + n, "    let value%d = compute(%d);\\n", i, i + (n >= (size_t)size / 2));
        } else if (!strcmp(tool, "apply_patch"))
            n += (size_t)sprintf(out + n, "*** Update File: src/f%d.rs\\n@@ fn f%d\\n-    old(%d);\\n+    new(%d);\\n", i, i, i, i);
        else
            n += (size_t)sprintf(out + n, "--- a/src/f%d.rs\\n+++ b/src/f%d.rs\\n@@ -1,1 +1,1 @@\\n-old(%d)\\n+new(%d)\\n", i, i, i, i);
    }
    sprintf(out + n, "%s\"}", !strcmp(tool, "apply_patch") ? "*** End Patch\\n" : "");
    return out;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: instructions KIND SIZE\n");
        return 2;
    }
    const char *kind = argv[1];
    int size = atoi(argv[2]);
    if (size < 1) return 2;
    void *app = jcode_mobile_app_new("{\"scenario\":\"connected_empty_chat\",\"log_capacity\":64}");
    if (!app) return 1;
    int measured = 0;
    char buf[128];

    if (!strcmp(kind, "text_delta") || !strcmp(kind, "set_draft") || !strcmp(kind, "text_delta_subscribed") ||
        !strcmp(kind, "text_delta_raw")) {
        void *subscription = NULL;
        if (!strcmp(kind, "text_delta_subscribed")) {
            subscription = jcode_mobile_subscribe(app, "{\"kinds\":[\"state\"]}");
            if (!subscription) return 1;
            check("subscribed", jcode_mobile_next_event(subscription, 0));
        }
        char *history = history_of(size);
        check("history", jcode_mobile_platform_event(app, history));
        free(history);
        check("send_message", jcode_mobile_dispatch(app, "{\"type\":\"send_message\",\"text\":\"go\"}"));
        int delta = strcmp(kind, "set_draft") != 0;
        if (subscription) { /* the history's and the send's events */
            char *e;
            while ((e = jcode_mobile_next_event(subscription, 0)) && !strstr(e, "\"event\":null")) check("event", e);
            jcode_mobile_string_free(e);
        }
        const char *event = "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"hello \"}}";
        char raw[192];
        if (!strcmp(kind, "text_delta_raw")) {
            snprintf(raw, sizeof raw,
                     "{\"type\":\"websocket_event\",\"effect_id\":%ld,"
                     "\"line\":\"{\\\"type\\\":\\\"text_delta\\\",\\\"text\\\":\\\"hello \\\"}\"}",
                     socket_effect_id(app));
            event = raw;
        }
        CALLGRIND_START_INSTRUMENTATION;
        for (measured = 0; measured < 1000; measured++) {
            if (delta) {
                check("text_delta", jcode_mobile_platform_event(app, event));
                if (subscription) check("next_event", jcode_mobile_next_event(subscription, 0));
            } else {
                snprintf(buf, sizeof buf, "{\"type\":\"set_draft\",\"value\":\"draft %d\"}", measured);
                check("set_draft", jcode_mobile_dispatch(app, buf));
            }
        }
        CALLGRIND_STOP_INSTRUMENTATION;
        jcode_mobile_unsubscribe(subscription);
    } else if (!strcmp(kind, "tokens") || !strcmp(kind, "session_renamed_call") || !strcmp(kind, "tap_node")) {
        char *history = history_of(size);
        check("history", jcode_mobile_platform_event(app, history));
        free(history);
        check("send_message", jcode_mobile_dispatch(app, "{\"type\":\"send_message\",\"text\":\"go\"}"));
        char input[256];
        CALLGRIND_START_INSTRUMENTATION;
        for (measured = 0; measured < 1000; measured++) {
            if (!strcmp(kind, "tokens")) {
                snprintf(input, sizeof input,
                         "{\"type\":\"websocket_event\",\"event\":{\"type\":\"tokens\",\"input\":%d,\"output\":%d}}",
                         1000 + measured, 10 + measured);
                check(kind, jcode_mobile_platform_event(app, input));
            } else if (!strcmp(kind, "session_renamed_call")) {
                snprintf(input, sizeof input,
                         "{\"type\":\"websocket_event\",\"event\":{\"type\":\"session_renamed\",\"session_id\":\"bench\","
                         "\"display_title\":\"Title %d\"}}", measured);
                check(kind, jcode_mobile_platform_event(app, input));
            } else {
                check(kind, jcode_mobile_dispatch(app, "{\"type\":\"tap_node\",\"node_id\":\"chat.draft\"}"));
            }
        }
        CALLGRIND_STOP_INSTRUMENTATION;
    } else if (!strcmp(kind, "permission_request") || !strcmp(kind, "stdin_request") || !strcmp(kind, "session_renamed") ||
               !strcmp(kind, "tool_start")) {
        check("send_message", jcode_mobile_dispatch(app, "{\"type\":\"send_message\",\"text\":\"go\"}"));
        char *frame = frame_of(size, !strcmp(kind, "permission_request") ? permission_line
                                     : !strcmp(kind, "stdin_request")    ? stdin_line
                                     : !strcmp(kind, "tool_start")       ? tool_line
                                                                         : renamed_line);
        CALLGRIND_START_INSTRUMENTATION;
        check(kind, jcode_mobile_platform_event(app, frame));
        CALLGRIND_STOP_INSTRUMENTATION;
        free(frame);
        measured = size;
    } else if (!strcmp(kind, "outbox") || !strcmp(kind, "queue_interrupt")) {
        int outbox = !strcmp(kind, "outbox");
        if (outbox) check("disconnect", jcode_mobile_dispatch(app, "{\"type\":\"disconnect\"}"));
        else check("send_message", jcode_mobile_dispatch(app, "{\"type\":\"send_message\",\"text\":\"go\"}"));
        int last = size < 100 ? size : 100;
        /* What a person does: type a message, send it (while offline it joins
        ** the outbox; during a turn it is queued as a soft interrupt). */
        for (int i = 0; i < size; i++) {
            if (i == size - last) CALLGRIND_START_INSTRUMENTATION;
            snprintf(buf, sizeof buf, "{\"type\":\"set_draft\",\"value\":\"message %d\"}", i);
            check("set_draft", jcode_mobile_dispatch(app, buf));
            check(kind, jcode_mobile_dispatch(app, "{\"type\":\"send_message\"}"));
        }
        CALLGRIND_STOP_INSTRUMENTATION;
        measured = last;
    } else if (!strcmp(kind, "history") || !strcmp(kind, "first_tree")) {
        /* A history of SIZE entries arriving, then the first screen after it. */
        char *history = history_of(size);
        if (!strcmp(kind, "history")) CALLGRIND_START_INSTRUMENTATION;
        check("history", jcode_mobile_platform_event(app, history));
        if (!strcmp(kind, "first_tree")) CALLGRIND_START_INSTRUMENTATION;
        else CALLGRIND_STOP_INSTRUMENTATION;
        if (!strcmp(kind, "first_tree")) check("tree", jcode_mobile_tree(app));
        CALLGRIND_STOP_INSTRUMENTATION;
        free(history);
        measured = 1;
    } else if (!strcmp(kind, "delta_tree_changes") || !strcmp(kind, "reply_delta_tree_changes") ||
               !strcmp(kind, "reply_markdown_delta_tree_changes")) {
        int mixed = !strcmp(kind, "reply_markdown_delta_tree_changes");
        int reply = mixed || !strcmp(kind, "reply_delta_tree_changes");
        /* Deltas that open, style and close blocks, in turn. */
        static const char *const mixed_deltas[] = {
            "Some **bold** words", " and `code`.\\n\\n", "- an item\\n", "- [x] done\\n\\n", "# A heading\\n\\n",
            "```c\\nint x;\\n", "x++;\\n```\\n\\n", "| a | b |\\n", "|---|---|\\n| 1 | 2 |\\n\\n", "> a quote\\n\\n",
        };
        char mixed_event[512];
        char *history = history_of(reply ? 100 : size);
        check("history", jcode_mobile_platform_event(app, history));
        free(history);
        check("send_message", jcode_mobile_dispatch(app, "{\"type\":\"send_message\",\"text\":\"go\"}"));
        const char *event = "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"hello \"}}";
        if (reply) {
            /* SIZE bytes of markdown, streamed in sections, ending in an open paragraph. */
            static const char *section =
                "## Section\\n\\nThe **core** parses `markdown` as it _streams_; see [docs](https://example.com).\\n\\n"
                "- one item\\n- [x] a task\\n\\n```swift\\nlet x = 1\\nprint(x)\\n```\\n\\n| a | b |\\n|---|--:|\\n| 1 | 2 |\\n\\n";
            size_t section_bytes = 220; /* about what one section adds, unescaped */
            char line[1024];
            snprintf(line, sizeof line, "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"%s\"}}", section);
            for (size_t added = 0; added < (size_t)size; added += section_bytes) check("section", jcode_mobile_platform_event(app, line));
        }
        check("text_delta", jcode_mobile_platform_event(app, event));
        char *tree = jcode_mobile_tree(app);
        if (!tree) return 1;
        unsigned long long since = revision_of(tree);
        jcode_mobile_string_free(tree);
        size_t largest = 0;
        CALLGRIND_START_INSTRUMENTATION;
        /* A reply's row and block arrays grow by doubling: measured over 1 000
         * mixed deltas (blocks added) the cost per delta is what a stream pays. */
        for (measured = 0; measured < (reply && !mixed ? 100 : 1000); measured++) {
            if (mixed) {
                snprintf(mixed_event, sizeof mixed_event,
                         "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"%s\"}}",
                         mixed_deltas[measured % (int)(sizeof mixed_deltas / sizeof mixed_deltas[0])]);
            }
            char *report = jcode_mobile_platform_event(app, mixed ? mixed_event : event);
            if (!report || strncmp(report, "{\"ok\":true", 10) != 0) {
                fprintf(stderr, "instructions: text_delta: %.300s\n", report ? report : "(null)");
                return 1;
            }
            unsigned long long revision = revision_of(report);
            jcode_mobile_string_free(report);
            char *changes = jcode_mobile_tree_changes(app, since);
            if (!changes || !strstr(changes, "\"ops\":")) {
                fprintf(stderr, "instructions: tree_changes: %.300s\n", changes ? changes : "(null)");
                return 1;
            }
            if (strlen(changes) > largest) largest = strlen(changes);
            jcode_mobile_string_free(changes);
            since = revision;
        }
        CALLGRIND_STOP_INSTRUMENTATION;
        printf("largest answer %zu bytes\n", largest);
    } else if (!strncmp(kind, "tool_input_", 11) || !strncmp(kind, "tool_once_", 10)) {
        /* tool_input_: streamed in 4-byte deltas; tool_once_: the whole input in one delta (a
           field of SIZE bytes stays bounded). Each delta is followed by tree_changes. */
        int once = kind[5] == 'o';
        const char *tool = kind + (once ? 10 : 11);
        char *input = tool_input_of(tool, size);
        check("send_message", jcode_mobile_dispatch(app, "{\"type\":\"send_message\",\"text\":\"go\"}"));
        char start[160];
        snprintf(start, sizeof start,
                 "{\"type\":\"websocket_event\",\"event\":{\"type\":\"tool_start\",\"id\":\"call-1\",\"name\":\"%s\"}}", tool);
        check("tool_start", jcode_mobile_platform_event(app, start));
        char *tree = jcode_mobile_tree(app);
        if (!tree) return 1;
        unsigned long long since = revision_of(tree);
        jcode_mobile_string_free(tree);
        size_t length = strlen(input);
        size_t chunk = once ? length : 4;
        char *event = malloc(chunk * 2 + 128);
        if (!event) return 1;
        CALLGRIND_START_INSTRUMENTATION;
        for (size_t at = 0; at < length; at += chunk) {
            /* The delta's bytes as a JSON string (the input's quotes and backslashes escaped). */
            size_t n = (size_t)sprintf(event, "{\"type\":\"websocket_event\",\"event\":{\"type\":\"tool_input\",\"delta\":\"");
            for (size_t k = at; k < at + chunk && k < length; k++) {
                if (input[k] == '"' || input[k] == '\\') event[n++] = '\\';
                event[n++] = input[k];
            }
            sprintf(event + n, "\"}}");
            char *report = jcode_mobile_platform_event(app, event);
            if (!report || strncmp(report, "{\"ok\":true", 10) != 0) {
                fprintf(stderr, "instructions: tool_input: %.300s\n", report ? report : "(null)");
                return 1;
            }
            unsigned long long revision = revision_of(report);
            jcode_mobile_string_free(report);
            char *changes = jcode_mobile_tree_changes(app, since);
            if (!changes || !strstr(changes, "\"ops\":")) {
                fprintf(stderr, "instructions: tree_changes: %.300s\n", changes ? changes : "(null)");
                return 1;
            }
            jcode_mobile_string_free(changes);
            since = revision;
        }
        CALLGRIND_STOP_INSTRUMENTATION;
        measured = (int)length;
        free(event);
        free(input);
    } else if (!strcmp(kind, "tree") || !strcmp(kind, "hit_test") || !strcmp(kind, "screenshot_svg") ||
               !strcmp(kind, "tap_xy") || !strcmp(kind, "scroll_messages")) {
        char *history = history_of(size);
        check("history", jcode_mobile_platform_event(app, history));
        free(history);
        CALLGRIND_START_INSTRUMENTATION;
        for (measured = 0; measured < 5; measured++) {
            if (!strcmp(kind, "tree")) check(kind, jcode_mobile_tree(app));
            else if (!strcmp(kind, "hit_test")) check(kind, jcode_mobile_hit_test(app, 100, 400));
            else if (!strcmp(kind, "screenshot_svg")) check(kind, jcode_mobile_screenshot_svg(app));
            /* The draft field: focusing it changes the state once, then not. */
            else if (!strcmp(kind, "tap_xy")) check(kind, jcode_mobile_dispatch(app, "{\"type\":\"tap_xy\",\"x\":100,\"y\":760}"));
            else {
                snprintf(buf, sizeof buf, "{\"type\":\"scroll_messages\",\"offset\":%d}", 100 * measured);
                check(kind, jcode_mobile_dispatch(app, buf));
            }
        }
        CALLGRIND_STOP_INSTRUMENTATION;
    } else if (!strcmp(kind, "restore")) {
        char *options = snapshot_options(size);
        CALLGRIND_START_INSTRUMENTATION;
        void *restored = jcode_mobile_app_new(options);
        CALLGRIND_STOP_INSTRUMENTATION;
        free(options);
        if (!restored) {
            fprintf(stderr, "instructions: app_new refused the snapshot\n");
            return 1;
        }
        jcode_mobile_app_free(restored);
        measured = size;
    } else {
        fprintf(stderr, "instructions: unknown kind %s\n", kind);
        return 2;
    }
    jcode_mobile_app_free(app);
    printf("measured %d\n", measured);
    return 0;
}
