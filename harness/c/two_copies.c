/*
** two_copies.c — two copies of libjcode_mobile in one process.
**
** Two plugins of one host may each bundle the library. They are two copies
** (two files, loaded RTLD_LOCAL), each with its own handle table. A handle of
** one copy must mean nothing to the other: every call with it is
** invalid_handle there, and freeing it there changes nothing.
**
** Usage: two_copies path/to/libjcode_mobile.so.1
** The program copies that file under another name into a fresh temporary
** directory, dlopens both, and removes the copy once it is loaded. It needs
** no network and stops itself after 60 seconds.
**
** Output: one line per failing check, then "N passed, N failed".
** Exit status: 0 only when nothing failed.
*/
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "json_mini.h"
#define CHECKS_FILE "two_copies.c"
#include "checks.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* The functions of include/jcode_mobile.h, as found in one loaded copy. */
typedef struct {
    const char *name;
    void *dl;
    void *(*app_new)(const char *);
    void (*app_free)(void *);
    char *(*dispatch)(void *, const char *);
    char *(*platform_event)(void *, const char *);
    char *(*state)(void *);
    char *(*tree)(void *);
    char *(*logs)(void *, uint32_t);
    char *(*changes)(void *, uint64_t);
    char *(*snapshot)(void *);
    void (*string_free)(char *);
} copy;

/* dlsym into a function pointer without an object-to-function pointer cast. */
static int bind(copy *c, void *fn_ptr, size_t fn_size, const char *symbol) {
    void *found = dlsym(c->dl, symbol);
    if (!CHECK(found != NULL, "%s: %s not found: %s", c->name, symbol, dlerror())) return 0;
    memcpy(fn_ptr, &found, fn_size);
    return 1;
}

#define BIND(c, field) bind((c), &(c)->field, sizeof (c)->field, "jcode_mobile_" #field)

static int load(copy *c, const char *name, const char *path) {
    c->name = name;
    c->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!CHECK(c->dl != NULL, "dlopen(%s): %s", path, dlerror())) return 0;
    return BIND(c, app_new) & BIND(c, app_free) & BIND(c, dispatch) & BIND(c, platform_event) & BIND(c, state) &
           BIND(c, tree) & BIND(c, logs) & BIND(c, changes) & BIND(c, snapshot) & BIND(c, string_free);
}

/* Copies the file at `from` to `to`. */
static int copy_file(const char *from, const char *to) {
    char buf[65536];
    size_t n;
    int ok = 1;
    FILE *in = fopen(from, "rb"), *out;
    if (!in) return 0;
    out = fopen(to, "wb");
    if (!out) {
        fclose(in);
        return 0;
    }
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
        if (fwrite(buf, 1, n, out) != n) ok = 0;
    }
    if (ferror(in)) ok = 0;
    fclose(in);
    if (fclose(out) != 0) ok = 0;
    return ok;
}

/* The value at `path` of the JSON object `raw` (released with c's
** string_free), or "" when raw is not JSON or has no string there. */
static void field_of(const copy *c, char *raw, const char *path, char *out, size_t cap) {
    const char *err = NULL;
    size_t at = 0;
    jv *doc = raw ? jparse(raw, strlen(raw), &err, &at) : NULL;
    const char *value = doc ? jstr(doc, path) : NULL;
    snprintf(out, cap, "%s", value ? value : "");
    jfree(doc);
    c->string_free(raw);
}

static void expect_code_at(int line, const copy *c, char *raw, const char *want, const char *ctx) {
    char code[64];
    field_of(c, raw, "error.code", code, sizeof code);
    check_at(line, strcmp(code, want) == 0, "%s: %s: expected error %s, got \"%s\"", c->name, ctx, want, code);
}

#define EXPECT_CODE(c, raw, want, ctx) expect_code_at(__LINE__, (c), (raw), (want), (ctx))

static void expect_draft_at(int line, const copy *c, void *app, const char *want, const char *ctx) {
    char draft[64];
    field_of(c, c->state(app), "state.draft", draft, sizeof draft);
    check_at(line, strcmp(draft, want) == 0, "%s: %s: expected the draft \"%s\", got \"%s\"", c->name, ctx, want,
             draft);
}

#define EXPECT_DRAFT(c, app, want, ctx) expect_draft_at(__LINE__, (c), (app), (want), (ctx))

/* Every function of `c` taking a handle refuses `foreign`. */
static void expect_refused_at(int line, const copy *c, void *foreign, const char *ctx) {
    char what[160];
    snprintf(what, sizeof what, "dispatch(%s)", ctx);
    expect_code_at(line, c, c->dispatch(foreign, "{\"type\":\"set_draft\",\"value\":\"forged\"}"), "invalid_handle",
                   what);
    snprintf(what, sizeof what, "platform_event(%s)", ctx);
    expect_code_at(line, c, c->platform_event(foreign, "{\"type\":\"app_foreground\"}"), "invalid_handle", what);
    snprintf(what, sizeof what, "state(%s)", ctx);
    expect_code_at(line, c, c->state(foreign), "invalid_handle", what);
    snprintf(what, sizeof what, "tree(%s)", ctx);
    expect_code_at(line, c, c->tree(foreign), "invalid_handle", what);
    snprintf(what, sizeof what, "logs(%s)", ctx);
    expect_code_at(line, c, c->logs(foreign, 0), "invalid_handle", what);
    snprintf(what, sizeof what, "changes(%s)", ctx);
    expect_code_at(line, c, c->changes(foreign, 0), "invalid_handle", what);
    snprintf(what, sizeof what, "snapshot(%s)", ctx);
    expect_code_at(line, c, c->snapshot(foreign), "invalid_handle", what);
}

#define EXPECT_REFUSED(c, foreign, ctx) expect_refused_at(__LINE__, (c), (foreign), (ctx))

static void each_copy_refuses_the_others_handle(copy *a, copy *b) {
    void *from_a = a->app_new(NULL), *from_b = b->app_new(NULL);
    if (!CHECK(from_a && from_b, "app_new(NULL) returned NULL (a: %p, b: %p)", from_a, from_b)) return;
    CHECK(from_a != from_b, "both copies issued the handle %p", from_a);

    EXPECT_CODE(a, a->dispatch(from_a, "{\"type\":\"set_draft\",\"value\":\"plugin a\"}"), "", "dispatch(own handle)");
    EXPECT_CODE(b, b->dispatch(from_b, "{\"type\":\"set_draft\",\"value\":\"plugin b\"}"), "", "dispatch(own handle)");

    EXPECT_REFUSED(a, from_b, "the other copy's handle");
    EXPECT_REFUSED(b, from_a, "the other copy's handle");

    /* Freeing through the wrong copy is ignored: the app lives on, unchanged. */
    a->app_free(from_b);
    b->app_free(from_a);
    EXPECT_DRAFT(a, from_a, "plugin a", "own handle after the other copy's calls and app_free");
    EXPECT_DRAFT(b, from_b, "plugin b", "own handle after the other copy's calls and app_free");

    a->app_free(from_a);
    b->app_free(from_b);
    EXPECT_REFUSED(a, from_a, "its own freed handle");
    EXPECT_REFUSED(b, from_b, "its own freed handle");
}

/* Many apps made alternately in both copies: no value is issued by both, and
** neither copy accepts any of the other's. */
static void the_copies_never_issue_the_same_value(copy *a, copy *b) {
    enum { APPS = 200 };
    void *in_a[APPS], *in_b[APPS];
    size_t i, j, shared = 0, accepted = 0;
    char code[64];
    for (i = 0; i < APPS; i++) {
        in_a[i] = a->app_new(NULL);
        in_b[i] = b->app_new(NULL);
        if (!CHECK(in_a[i] && in_b[i], "app_new(NULL) #%lu returned NULL", (unsigned long)i)) {
            for (j = 0; j <= i; j++) {
                a->app_free(in_a[j]);
                b->app_free(in_b[j]);
            }
            return;
        }
    }
    for (i = 0; i < APPS; i++) {
        for (j = 0; j < APPS; j++) shared += in_a[i] == in_b[j];
        field_of(a, a->state(in_b[i]), "error.code", code, sizeof code);
        accepted += strcmp(code, "invalid_handle") != 0;
        field_of(b, b->state(in_a[i]), "error.code", code, sizeof code);
        accepted += strcmp(code, "invalid_handle") != 0;
    }
    CHECK(shared == 0, "%lu handle values were issued by both copies", (unsigned long)shared);
    CHECK(accepted == 0, "%lu of 400 foreign handles were not refused with invalid_handle", (unsigned long)accepted);
    for (i = 0; i < APPS; i++) {
        a->app_free(in_a[i]);
        b->app_free(in_b[i]);
    }
}

int main(int argc, char **argv) {
    const char *tmp = getenv("TMPDIR");
    char dir[4096], other[4200];
    copy a, b;
    int loaded;

    setvbuf(stdout, NULL, _IOLBF, 0);
    alarm(60); /* bounded: a hang ends the run (SIGALRM) instead of blocking the suite */
    if (argc != 2) {
        fprintf(stderr, "usage: %s path/to/libjcode_mobile.so.1\n", argv[0]);
        return 2;
    }
    snprintf(dir, sizeof dir, "%s/jcode_mobile_two_copies_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(other, sizeof other, "%s/libother_plugin_jcode_mobile.so", dir);
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    loaded = CHECK(copy_file(argv[1], other), "could not copy %s to %s", argv[1], other) &&
             load(&a, "copy a", argv[1]) && load(&b, "copy b", other);
    remove(other);
    rmdir(dir);
    if (loaded && CHECK(a.app_new != b.app_new, "both paths resolved to one loaded copy")) {
        each_copy_refuses_the_others_handle(&a, &b);
        the_copies_never_issue_the_same_value(&a, &b);
    }
    printf("%ld passed, %ld failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
