/*
** streamed.c — what an agent writes, streamed at token size: instructions
** (callgrind) to stream a reply of SIZE bytes of one KIND of markdown in
** deltas of 1 to 8 bytes, with jcode_mobile_tree_changes after each delta
** (what ABI.md tells a drawing host to do).
**
**   valgrind --tool=callgrind --instr-atstart=no ./streamed KIND SIZE
**
** Only the streaming is counted (instrumentation is switched on around it);
** the program prints how many deltas there were and the bytes streamed.
** `make bench-streamed` runs each kind at n and 4n and prints the total, the
** ratio (linear streaming: about 4) and the cost of one delta at the end
** against a plain-words delta into a reply of the same length.
**
** Kinds (the reply is made of repeated units of the kind until SIZE bytes):
**   words      plain words in paragraphs (the baseline)
**   bullets    a long bullet list, one short line per item
**   numbered   a long numbered list
**   tasks      a long task list ("- [ ]" and "- [x]")
**   table      a long table of two columns after its header
**   nested     a list whose items hold a nested list and a fenced code block
**   emphasis   one long paragraph of words with *emphasis*, **bold** and `code`
**   mixed      sections mixing headings, paragraphs, lists, tables and code
**   quote      one long block quote: paragraphs of several lines and a short list
**              in each section, as an agent quoting a document
**   html       one long HTML block (<div> of many lines, never closed)
**   file:PATH  a real document (e.g. file:docs/PERFORMANCE.md), repeated until SIZE bytes
**
** A last argument "tail" measures only the last 100 deltas (the cost of one
** delta into a reply of SIZE bytes); "once" sends the whole reply as one
** text_delta and measures it and its tree_changes (the cost of a field of
** SIZE bytes: bad input stays bounded). It prints how many deltas it
** measured, the reply's bytes and, with "once", the bytes of the
** tree_changes answer ("answer": what the core had to say about the field).
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valgrind/callgrind.h>

#include "jcode_mobile.h"

static void check(const char *what, char *answer) {
    if (!answer || strncmp(answer, "{\"ok\":true", 10) != 0) {
        fprintf(stderr, "streamed: %s: %.300s\n", what, answer ? answer : "(null)");
        exit(1);
    }
    jcode_mobile_string_free(answer);
}

static unsigned long long revision_of(const char *answer) {
    const char *at = strstr(answer, "\"revision\":");
    return at ? strtoull(at + 11, NULL, 10) : 0;
}

/* One unit of the kind, the i-th, into out; its length. */
static int unit(const char *kind, int i, char *out, size_t cap) {
    if (!strcmp(kind, "words"))
        return snprintf(out, cap, "The core reads what the agent writes and shows it as it streams in. %s",
                        i % 6 == 5 ? "\n\n" : "");
    if (!strcmp(kind, "bullets")) return snprintf(out, cap, "- Item %d: update the parser and its tests\n", i);
    if (!strcmp(kind, "numbered")) return snprintf(out, cap, "%d. Run step %d of the build and check it\n", i + 1, i + 1);
    if (!strcmp(kind, "tasks")) return snprintf(out, cap, "- [%c] Task %d: review the change\n", i % 3 ? ' ' : 'x', i);
    if (!strcmp(kind, "table")) {
        if (i == 0) return snprintf(out, cap, "| File | Lines | Status |\n|:--|--:|:-:|\n");
        return snprintf(out, cap, "| src/module_%d.swift | %d | ok |\n", i, i * 7);
    }
    if (!strcmp(kind, "nested"))
        return snprintf(out, cap, "- Step %d\n  - check `value_%d`\n  ```sh\n  make step%d\n  ```\n", i, i, i);
    if (!strcmp(kind, "emphasis"))
        return snprintf(out, cap, "Some *emphasis* and **bold %d** with `code` words ", i);
    if (!strcmp(kind, "mixed")) {
        switch (i % 6) {
        case 0: return snprintf(out, cap, "## Part %d\n\nThe **core** parses `markdown` as it _streams_.\n\n", i);
        case 1: return snprintf(out, cap, "- one item\n- [x] a task\n- another item\n\n");
        case 2: return snprintf(out, cap, "```swift\nlet x = %d\nprint(x)\n```\n\n", i);
        case 3: return snprintf(out, cap, "| a | b |\n|---|--:|\n| %d | 2 |\n| 3 | 4 |\n\n", i);
        case 4: return snprintf(out, cap, "1. first\n2. second\n3. third\n\n");
        default: return snprintf(out, cap, "> a quote with a [link](https://example.com)\n\n");
        }
    }
    if (!strcmp(kind, "quote")) {
        switch (i % 6) {
        case 0: return snprintf(out, cap, "> The core reads what the agent writes, part %d,\n", i);
        case 1: return snprintf(out, cap, "> and shows it as it streams in with `code` and **bold**.\n");
        case 2: return snprintf(out, cap, ">\n> - first point of part %d\n", i);
        case 3: return snprintf(out, cap, "> - second point with a [link](https://example.com)\n");
        case 4: return snprintf(out, cap, ">\n> A closing line of the section.\n");
        default: return snprintf(out, cap, ">\n");
        }
    }
    if (!strcmp(kind, "html")) {
        if (i == 0) return snprintf(out, cap, "<div class=\"reply\">\n");
        return snprintf(out, cap, "<p>Line %d of the block with <b>bold</b> text</p>\n", i);
    }
    return -1;
}

/* `text` as a JSON string's inside. */
static size_t escape(const char *text, size_t n, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        if (c == '"' || c == '\\') { out[o++] = '\\'; out[o++] = c; }
        else if (c == '\n') { out[o++] = '\\'; out[o++] = 'n'; }
        else out[o++] = c;
    }
    out[o] = 0;
    return o;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: streamed KIND SIZE [tail]\n");
        return 2;
    }
    const char *kind = argv[1];
    long size = atol(argv[2]);
    int tail = argc > 3 && !strcmp(argv[3], "tail");
    int once = argc > 3 && !strcmp(argv[3], "once");
    if (size < 1) return 2;
    char *reply = malloc((size_t)size + 512);
    size_t length = 0;
    char piece[512];
    if (!strncmp(kind, "file:", 5)) {
        FILE *file = fopen(kind + 5, "rb");
        if (!file) {
            fprintf(stderr, "streamed: cannot read %s\n", kind + 5);
            return 2;
        }
        while (length < (size_t)size) {
            size_t got = fread(reply + length, 1, (size_t)size - length, file);
            if (got == 0) {
                if (length == 0) return 2;
                rewind(file);
                continue;
            }
            length += got;
        }
        fclose(file);
        /* Only whole UTF-8 characters, and no NUL or control bytes a JSON string would need escaped. */
        while (length > 0 && ((unsigned char)reply[length - 1] & 0xC0) == 0x80) length--;
        if (length > 0 && ((unsigned char)reply[length - 1] & 0x80)) length--;
        for (size_t i = 0; i < length; i++) if ((unsigned char)reply[i] < 0x20 && reply[i] != '\n') reply[i] = ' ';
    }
    for (int i = 0; length < (size_t)size; i++) {
        int n = unit(kind, i, piece, sizeof piece);
        if (n < 0) {
            fprintf(stderr, "streamed: unknown kind %s\n", kind);
            return 2;
        }
        memcpy(reply + length, piece, (size_t)n);
        length += (size_t)n;
    }
    void *app = jcode_mobile_app_new("{\"scenario\":\"connected_empty_chat\",\"log_capacity\":64}");
    if (!app) return 1;
    check("send_message", jcode_mobile_dispatch(app, "{\"type\":\"send_message\",\"text\":\"go\"}"));
    char *tree = jcode_mobile_tree(app);
    if (!tree) return 1;
    unsigned long long since = revision_of(tree);
    jcode_mobile_string_free(tree);

    static const int sizes[] = {4, 1, 7, 3, 8, 2, 5, 6};
    /* Room for the largest delta escaped (every byte doubled) and its event around it. */
    size_t largest = once ? length : 16;
    char *event = malloc(largest * 2 + 128);
    char *escaped = malloc(largest * 2 + 1);
    if (!event || !escaped) return 1;
    int deltas = 0, measured = 0, started = 0;
    /* With "once", the bytes of the tree_changes answer: what the core had to say. */
    size_t answered = 0;
    size_t at = 0;
    /* The deltas before the last 100, when only the tail is measured. */
    size_t tail_from = 0;
    if (tail) {
        size_t count = 0, pos = 0;
        int k = 0;
        while (pos < length) { pos += (size_t)sizes[k++ % 8]; count++; }
        size_t skip = count > 100 ? count - 100 : 0;
        for (k = 0, pos = 0; (size_t)k < skip; k++) pos += (size_t)sizes[k % 8];
        tail_from = pos;
    }
    if (!tail) CALLGRIND_START_INSTRUMENTATION;
    while (at < length) {
        if (tail && !started && at >= tail_from) {
            CALLGRIND_START_INSTRUMENTATION;
            started = 1;
        }
        size_t n = once ? length : (size_t)sizes[deltas % 8];
        if (at + n > length) n = length - at;
        /* Whole characters only. */
        while (at + n < length && ((unsigned char)reply[at + n] & 0xC0) == 0x80) n++;
        escape(reply + at, n, escaped);
        snprintf(event, largest * 2 + 128, "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"%s\"}}", escaped);
        char *report = jcode_mobile_platform_event(app, event);
        if (!report || strncmp(report, "{\"ok\":true", 10) != 0) {
            fprintf(stderr, "streamed: text_delta: %.300s\n", report ? report : "(null)");
            return 1;
        }
        unsigned long long revision = revision_of(report);
        jcode_mobile_string_free(report);
        char *changes = jcode_mobile_tree_changes(app, since);
        if (!changes || !strstr(changes, "\"ops\":")) {
            fprintf(stderr, "streamed: tree_changes: %.300s\n", changes ? changes : "(null)");
            return 1;
        }
        if (once) {
            /* Not part of what is measured. */
            CALLGRIND_STOP_INSTRUMENTATION;
            answered += strlen(changes);
            CALLGRIND_START_INSTRUMENTATION;
        }
        jcode_mobile_string_free(changes);
        since = revision;
        at += n;
        deltas++;
        if (!tail || started) measured++;
    }
    CALLGRIND_STOP_INSTRUMENTATION;
    printf("measured %d\n", measured);
    printf("bytes %zu\n", length);
    printf("answer %zu\n", answered);
    jcode_mobile_app_free(app);
    free(event);
    free(escaped);
    free(reply);
    return 0;
}
