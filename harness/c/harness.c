/*
** harness.c — C test harness for libjcode_mobile (the C ABI in
** include/jcode_mobile.h).
**
** It plays the host: it drives the app through pairing, connecting and a
** streamed chat turn, executing the effects itself and answering them with
** platform events; it feeds the ABI every kind of bad input; and it calls
** one handle from several threads at once. Every reply is checked to be one
** well-formed UTF-8 JSON object and is read with a small strict JSON parser
** (json_mini.h), so checks look at values, not substrings.
**
** Output: one line per failing check, then "N passed, N failed".
** Exit status: 0 only when nothing failed.
*/
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "jcode_mobile.h"
#include "json_mini.h"
#define CHECKS_FILE "harness.c"
#define CHECKS_THREADED
#include "checks.h" /* g_section: written by the main thread between sections only */

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ================================================================ sanitizers */

/* LeakSanitizer: the Swift runtime initialises each `static let` of the core
** once per process (swift::threading_impl::once_slow). Some of those values
** (the wire specs: `indirect enum WireType` payloads) are boxes whose
** pointers are stored with enum tag bits set, so LSan cannot see that they
** are still referenced and reports them as leaked (~1 KiB, a fixed number of
** blocks, not growing with calls; valgrind calls them "definitely lost" for
** the same reason). Only allocations made inside that one-time initialiser
** are suppressed; any per-call leak in the library or the harness is still
** reported. The equivalent valgrind suppression:
**     { swift-once-init  Memcheck:Leak  ...  fun:*once_slow*  ... }
** The suppression itself is in checks.h.
*/

/* ================================================================ checks (checks.h) */

static void expect_str_at(int line, const jv *doc, const char *path, const char *want, const char *ctx) {
    const jv *x = doc ? jget(doc, path) : NULL;
    char d[200];
    jdesc(x, d, sizeof d);
    check_at(line, x && x->kind == JSTR && x->len == strlen(want) && memcmp(x->str, want, x->len) == 0,
             "%s: %s is %s, expected \"%.200s\"", ctx, path, d, want);
}

static void expect_contains_at(int line, const jv *doc, const char *path, const char *part, const char *ctx) {
    const jv *x = doc ? jget(doc, path) : NULL;
    char d[200];
    jdesc(x, d, sizeof d);
    check_at(line, x && x->kind == JSTR && strstr(x->str, part) != NULL, "%s: %s is %s, expected it to contain \"%s\"",
             ctx, path, d, part);
}

static void expect_int_at(int line, const jv *doc, const char *path, long long want, const char *ctx) {
    const jv *x = doc ? jget(doc, path) : NULL;
    char d[200];
    jdesc(x, d, sizeof d);
    check_at(line, x && x->kind == JNUM && x->is_int && x->ival == want, "%s: %s is %s, expected %lld", ctx, path, d,
             want);
}

static void expect_bool_at(int line, const jv *doc, const char *path, int want, const char *ctx) {
    const jv *x = doc ? jget(doc, path) : NULL;
    char d[200];
    jdesc(x, d, sizeof d);
    check_at(line, x && x->kind == JBOOL && !x->boolean == !want, "%s: %s is %s, expected %s", ctx, path, d,
             want ? "true" : "false");
}

static void expect_null_at(int line, const jv *doc, const char *path, const char *ctx) {
    const jv *x = doc ? jget(doc, path) : NULL;
    char d[200];
    jdesc(x, d, sizeof d);
    check_at(line, x && x->kind == JNULL, "%s: %s is %s, expected null", ctx, path, d);
}

static void expect_len_at(int line, const jv *doc, const char *path, long want, const char *ctx) {
    long n = jlen(doc, path);
    check_at(line, n == want, "%s: %s has %ld elements (-1: not an array), expected %ld", ctx, path, n, want);
}

static void expect_nonempty_str_at(int line, const jv *doc, const char *path, const char *ctx) {
    const char *s = jstr(doc, path);
    check_at(line, s && *s, "%s: %s should be a non-empty string", ctx, path);
}

#define EXPECT_STR(doc, path, want, ctx) expect_str_at(__LINE__, (doc), (path), (want), (ctx))
#define EXPECT_CONTAINS(doc, path, part, ctx) expect_contains_at(__LINE__, (doc), (path), (part), (ctx))
#define EXPECT_INT(doc, path, want, ctx) expect_int_at(__LINE__, (doc), (path), (want), (ctx))
#define EXPECT_BOOL(doc, path, want, ctx) expect_bool_at(__LINE__, (doc), (path), (want), (ctx))
#define EXPECT_NULL(doc, path, ctx) expect_null_at(__LINE__, (doc), (path), (ctx))
#define EXPECT_LEN(doc, path, want, ctx) expect_len_at(__LINE__, (doc), (path), (want), (ctx))
#define EXPECT_NONEMPTY(doc, path, ctx) expect_nonempty_str_at(__LINE__, (doc), (path), (ctx))

/* ================================================================ replies */

/* A string returned by the library and its parsed form. */
typedef struct {
    char *raw;
    jv *doc;
} reply;

static void reply_free(reply *r) {
    jcode_mobile_string_free(r->raw);
    jfree(r->doc);
    r->raw = NULL;
    r->doc = NULL;
}

/* Checks that raw is one UTF-8 JSON object with a boolean "ok" and, when ok
** is false, a well-formed error object. Quiet: returns 0 and a reason. */
/* With JCODE_MOBILE_ANSWERS=FILE, every answer the harness reads is also
** written to FILE, one per line, for `python3 -m jcode_mobile.schema FILE`
** to validate against the schema the library publishes (make test-c). */
static FILE *g_answers;

static void record_answer(const char *raw) {
    static int opened;
    if (!opened) {
        const char *path = getenv("JCODE_MOBILE_ANSWERS");
        opened = 1;
        if (path && *path) g_answers = fopen(path, "w");
    }
    if (g_answers) fprintf(g_answers, "%s\n", raw);
}

static int reply_parse(char *raw, reply *r, char *why, size_t whylen) {
    size_t n, bad, at = 0;
    const char *err = NULL;
    const jv *ok, *e;
    r->raw = raw;
    r->doc = NULL;
    if (!raw) {
        snprintf(why, whylen, "returned NULL");
        return 0;
    }
    record_answer(raw);
    n = strlen(raw);
    bad = jmini_utf8_bad((const unsigned char *)raw, n);
    if (bad != n) {
        snprintf(why, whylen, "output is not valid UTF-8 (byte %lu)", (unsigned long)bad);
        return 0;
    }
    r->doc = jparse(raw, n, &err, &at);
    if (!r->doc) {
        snprintf(why, whylen, "output is not valid JSON (%s at byte %lu): %.200s", err, (unsigned long)at, raw);
        return 0;
    }
    ok = jget(r->doc, "ok");
    if (r->doc->kind != JOBJ || !ok || ok->kind != JBOOL) {
        snprintf(why, whylen, "output is not an object with a boolean \"ok\": %.200s", raw);
        return 0;
    }
    if (!ok->boolean) {
        long long off = 0;
        e = jget(r->doc, "error");
        if (!e || e->kind != JOBJ || !jstr(e, "code") || !jstr(e, "message")) {
            snprintf(why, whylen, "ok:false without an error {code, message}: %.200s", raw);
            return 0;
        }
        if (jget(e, "offset") && !(jint(e, "offset", &off) && off >= 0)) {
            snprintf(why, whylen, "error.offset is not a non-negative integer: %.200s", raw);
            return 0;
        }
        if (jget(e, "field") && !jstr(e, "field")) {
            snprintf(why, whylen, "error.field is not a string: %.200s", raw);
            return 0;
        }
    }
    return 1;
}

static reply take_at(int line, char *raw, const char *ctx) {
    reply r;
    char why[512];
    int good = reply_parse(raw, &r, why, sizeof why);
    check_at(line, good, "%s: %s", ctx, why);
    return r;
}

#define TAKE(raw, ctx) take_at(__LINE__, (raw), (ctx))

/* Checks an error reply and frees it. offset: OFF_IGNORE, OFF_ANY (present,
** within [0, input_len]) or an exact byte offset. field: NULL to ignore. */
#define OFF_IGNORE (-1LL)
#define OFF_ANY (-2LL)

static void expect_error_at(int line, char *raw, const char *code, const char *field, long long offset,
                            size_t input_len, const char *ctx) {
    reply r = take_at(line, raw, ctx);
    const char *got;
    long long off = 0;
    if (!r.doc) {
        reply_free(&r);
        return;
    }
    got = jstr(r.doc, "error.code");
    if (!check_at(line, !jtrue(r.doc, "ok") && got && strcmp(got, code) == 0, "%s: expected error %s, got %.300s",
                  ctx, code, r.raw)) {
        reply_free(&r);
        return;
    }
    if (field) EXPECT_STR(r.doc, "error.field", field, ctx);
    if (offset == OFF_ANY) {
        check_at(line, jint(r.doc, "error.offset", &off) && off >= 0 && (unsigned long long)off <= input_len,
                 "%s: error.offset missing or outside [0, %lu]: %.300s", ctx, (unsigned long)input_len, r.raw);
    } else if (offset >= 0) {
        expect_int_at(line, r.doc, "error.offset", offset, ctx);
    }
    reply_free(&r);
}

#define EXPECT_ERROR(raw, code, field, offset, len, ctx) \
    expect_error_at(__LINE__, (raw), (code), (field), (offset), (len), (ctx))

/* ================================================================ sessions */

/* One app handle and what the harness knows about it. */
typedef struct {
    void *app;
    long long rev;            /* the revision last reported */
    long long last_effect_id; /* effect ids must keep growing */
    long inputs;              /* dispatch + platform_event calls that reach the app's log */
    long long code_used_rev;  /* revision at which the pairing code was sent (0: not yet) */
} session;

enum { SAME = 0, CHANGES = 1, ANY_CHANGE = 2 };

static reply get_state_at(int line, session *s, const char *ctx) {
    reply r = take_at(line, jcode_mobile_state(s->app), ctx);
    if (r.doc) {
        check_at(line, jtrue(r.doc, "ok") && jget(r.doc, "state") && jget(r.doc, "state")->kind == JOBJ,
                 "%s: state() is not {ok:true,state:{…}}: %.200s", ctx, r.raw);
        expect_int_at(line, r.doc, "state.revision", s->rev, ctx);
    }
    return r;
}

static reply get_tree_at(int line, session *s, const char *ctx) {
    reply r = take_at(line, jcode_mobile_tree(s->app), ctx);
    if (r.doc) {
        check_at(line, jtrue(r.doc, "ok") && jget(r.doc, "tree") && jget(r.doc, "tree")->kind == JOBJ,
                 "%s: tree() is not {ok:true,revision,tree:{…}}: %.200s", ctx, r.raw);
        expect_int_at(line, r.doc, "revision", s->rev, ctx);
    }
    return r;
}

static reply get_logs_at(int line, session *s, uint32_t limit, const char *ctx) {
    reply r = take_at(line, jcode_mobile_logs(s->app, limit), ctx);
    long long x = 0;
    if (r.doc) {
        check_at(line,
                 jtrue(r.doc, "ok") && jint(r.doc, "capacity", &x) && jint(r.doc, "next_seq", &x) &&
                     jlen(r.doc, "entries") >= 0,
                 "%s: logs() is not {ok:true,capacity,next_seq,entries}: %.200s", ctx, r.raw);
    }
    return r;
}

#define GET_STATE(s, ctx) get_state_at(__LINE__, (s), (ctx))
#define GET_TREE(s, ctx) get_tree_at(__LINE__, (s), (ctx))
#define GET_LOGS(s, limit, ctx) get_logs_at(__LINE__, (s), (limit), (ctx))

/* Sends one action (is_event 0) or platform event (1) and checks the report:
** ok, revision (+1 / same / not smaller), effects with fresh growing ids,
** and that state() agrees with the reported revision. */
static reply send_at(int line, session *s, int is_event, const char *json, int change, const char *ctx) {
    char *raw = is_event ? jcode_mobile_platform_event(s->app, json) : jcode_mobile_dispatch(s->app, json);
    reply r, st;
    long long rev = 0;
    const jv *effects;
    size_t i;
    s->inputs++;
    r = take_at(line, raw, ctx);
    if (!r.doc) return r;
    if (!check_at(line, jtrue(r.doc, "ok"), "%s: rejected: %.300s", ctx, r.raw)) return r;
    if (check_at(line, jint(r.doc, "revision", &rev), "%s: the report has no integer revision", ctx)) {
        if (change == CHANGES)
            check_at(line, rev == s->rev + 1, "%s: revision %lld, expected %lld (the state changes)", ctx, rev,
                     s->rev + 1);
        else if (change == SAME)
            check_at(line, rev == s->rev, "%s: revision %lld, expected %lld (nothing changes)", ctx, rev, s->rev);
        else
            check_at(line, rev >= s->rev, "%s: revision went back from %lld to %lld", ctx, s->rev, rev);
        s->rev = rev;
    }
    effects = jget(r.doc, "effects");
    if (check_at(line, effects && effects->kind == JARR, "%s: the report has no effects array", ctx)) {
        for (i = 0; i < effects->n; i++) {
            const jv *e = effects->items[i];
            long long id = 0;
            int good = e->kind == JOBJ && jint(e, "effect_id", &id) && jstr(e, "type") != NULL;
            if (!check_at(line, good, "%s: effect %lu has no integer effect_id or string type", ctx, (unsigned long)i))
                continue;
            check_at(line, id > s->last_effect_id, "%s: effect_id %lld is not greater than the previous %lld", ctx, id,
                     s->last_effect_id);
            s->last_effect_id = id;
        }
    }
    st = get_state_at(line, s, ctx);
    reply_free(&st);
    return r;
}

#define DISPATCH(s, json, change, ctx) send_at(__LINE__, (s), 0, (json), (change), (ctx))
#define EVENT(s, json, change, ctx) send_at(__LINE__, (s), 1, (json), (change), (ctx))

/* The nth (0-based) effect of `type` in a report, or NULL. */
static const jv *find_effect(const jv *report, const char *type, int nth) {
    const jv *effects = report ? jget(report, "effects") : NULL;
    size_t i;
    if (!effects || effects->kind != JARR) return NULL;
    for (i = 0; i < effects->n; i++) {
        const char *t = jstr(effects->items[i], "type");
        if (t && strcmp(t, type) == 0 && nth-- == 0) return effects->items[i];
    }
    return NULL;
}

static int count_effects(const jv *report, const char *type) {
    int n = 0;
    while (find_effect(report, type, n)) n++;
    return n;
}

static long long effect_id_of(const jv *effect) {
    long long id = -1;
    if (effect) jint(effect, "effect_id", &id);
    return id;
}

/* ================================================================ the tree */

static const jv *find_node(const jv *node, const char *id) {
    const char *nid;
    const jv *children;
    size_t i;
    if (!node || node->kind != JOBJ) return NULL;
    nid = jstr(node, "id");
    if (nid && strcmp(nid, id) == 0) return node;
    children = jget(node, "children");
    if (!children || children->kind != JARR) return NULL;
    for (i = 0; i < children->n; i++) {
        const jv *hit = find_node(children->items[i], id);
        if (hit) return hit;
    }
    return NULL;
}

static int node_supports(const jv *node, const char *action) {
    const jv *acts = node ? jget(node, "supported_actions") : NULL;
    size_t i;
    if (!acts || acts->kind != JARR) return 0;
    for (i = 0; i < acts->n; i++)
        if (acts->items[i]->kind == JSTR && strcmp(acts->items[i]->str, action) == 0) return 1;
    return 0;
}

typedef struct {
    const char **ids;
    size_t n, cap;
    char problem[300];
    long nodes;
} tree_walk;

static int is_str_or_null(const jv *x) { return x && (x->kind == JSTR || x->kind == JNULL); }
static int is_bool(const jv *x) { return x && x->kind == JBOOL; }
static int is_num(const jv *x) { return x && x->kind == JNUM; }

static void walk_node(tree_walk *w, const jv *node, int depth) {
    const jv *children, *acts;
    const char *id = jstr(node, "id");
    size_t i;
    w->nodes++;
    if (w->problem[0]) return;
    if (depth > 64) {
        snprintf(w->problem, sizeof w->problem, "tree deeper than 64 levels");
        return;
    }
    if (node->kind != JOBJ || !id || !*id) {
        snprintf(w->problem, sizeof w->problem, "a node without a string id");
        return;
    }
    if (!jstr(node, "role") || !is_str_or_null(jget(node, "label")) || !is_str_or_null(jget(node, "value")) ||
        !is_str_or_null(jget(node, "placeholder")) || !is_bool(jget(node, "visible")) ||
        !is_bool(jget(node, "enabled")) || !is_bool(jget(node, "focused")) ||
        !is_str_or_null(jget(node, "accessibility_label")) || !is_str_or_null(jget(node, "accessibility_value")) ||
        !is_num(jget(node, "bounds.x")) || !is_num(jget(node, "bounds.y")) || !is_num(jget(node, "bounds.width")) ||
        !is_num(jget(node, "bounds.height"))) {
        snprintf(w->problem, sizeof w->problem, "node %.100s lacks a documented member or has the wrong type", id);
        return;
    }
    acts = jget(node, "supported_actions");
    if (!acts || acts->kind != JARR) {
        snprintf(w->problem, sizeof w->problem, "node %.100s: supported_actions is not an array", id);
        return;
    }
    for (i = 0; i < acts->n; i++) {
        if (acts->items[i]->kind != JSTR) {
            snprintf(w->problem, sizeof w->problem, "node %.100s: a supported action is not a string", id);
            return;
        }
    }
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 64;
        w->ids = (const char **)jmini_xrealloc((void *)w->ids, w->cap * sizeof *w->ids);
    }
    w->ids[w->n++] = id;
    children = jget(node, "children");
    if (!children || children->kind != JARR) {
        snprintf(w->problem, sizeof w->problem, "node %.100s: children is not an array", id);
        return;
    }
    for (i = 0; i < children->n; i++) walk_node(w, children->items[i], depth + 1);
}

static int cmp_str_ptr(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every node has the documented members; ids are unique. */
static void validate_tree_at(int line, const jv *tree_reply, const char *ctx) {
    tree_walk w;
    size_t i;
    const jv *root = tree_reply ? jget(tree_reply, "tree") : NULL;
    memset(&w, 0, sizeof w);
    if (!check_at(line, root != NULL, "%s: no tree", ctx)) return;
    walk_node(&w, root, 0);
    if (!w.problem[0] && w.n > 1) {
        qsort((void *)w.ids, w.n, sizeof *w.ids, cmp_str_ptr);
        for (i = 1; i < w.n; i++) {
            if (strcmp(w.ids[i - 1], w.ids[i]) == 0) {
                snprintf(w.problem, sizeof w.problem, "node id %.100s appears twice", w.ids[i]);
                break;
            }
        }
    }
    check_at(line, !w.problem[0], "%s: tree: %s", ctx, w.problem);
    free((void *)w.ids);
}

#define VALIDATE_TREE(doc, ctx) validate_tree_at(__LINE__, (doc), (ctx))

/* ================================================================ helpers */

/* The secrets of the flow. Distinctive, so a substring search means something. */
static const char TOKEN[] = "tok-Zq81mWv3xK7p";
static const char CODE[] = "731904";
/* What the harness's device answers to create_device_id. */
#define HARNESS_DEVICE_ID "c-harness-install-0001"

/* state, tree, logs and the change feed mention none of the secrets, raw or
** decoded: the token is never in the state, and once the pairing code has
** been used it is scrubbed from every retained change record too. */
static void expect_no_secrets_at(int line, session *s, const char *ctx) {
    const char *secrets[2];
    reply out[7];
    const char *what[7] = {"state", "tree", "logs", "changes(0)", "changes(since the code was used)", "snapshot",
                           "screenshot_svg"};
    int i, k;
    secrets[0] = TOKEN;
    secrets[1] = CODE;
    out[0] = take_at(line, jcode_mobile_state(s->app), ctx);
    out[1] = take_at(line, jcode_mobile_tree(s->app), ctx);
    out[2] = take_at(line, jcode_mobile_logs(s->app, 0), ctx);
    out[3] = take_at(line, jcode_mobile_changes(s->app, 0), ctx);
    out[4] = take_at(line, jcode_mobile_changes(s->app, (uint64_t)(s->code_used_rev > 0 ? s->code_used_rev : 0)), ctx);
    out[5] = take_at(line, jcode_mobile_snapshot(s->app), ctx);
    out[6] = take_at(line, jcode_mobile_screenshot_svg(s->app), ctx);
    for (i = 0; i < 7; i++) {
        for (k = 0; k < 2; k++) {
            int leaked;
            if (k == 1 && i == 4 && s->code_used_rev <= 0) continue;
            leaked = (out[i].raw && strstr(out[i].raw, secrets[k])) || jcontains(out[i].doc, secrets[k]);
            check_at(line, !leaked, "%s: the %s \"%s\" appears in %s", ctx, k == 0 ? "token" : "pairing code",
                     secrets[k], what[i]);
        }
        reply_free(&out[i]);
    }
}

#define EXPECT_NO_SECRETS(s, ctx) expect_no_secrets_at(__LINE__, (s), (ctx))

/* ================================================================ the change feed */

/* A host's copy of the state, kept current from jcode_mobile_changes. */
typedef struct {
    jv *state;
    long long rev;
} mirror;

/* Decodes the next JSON Pointer token (~1 → '/', ~0 → '~'); advances *p. */
static int ptr_token(const char **p, char *out, size_t cap) {
    size_t n = 0;
    if (**p != '/') return 0;
    (*p)++;
    while (**p && **p != '/') {
        char c = **p;
        if (c == '~') {
            (*p)++;
            if (**p == '0')
                c = '~';
            else if (**p == '1')
                c = '/';
            else
                return 0;
        }
        if (n + 1 >= cap) return 0;
        out[n++] = c;
        (*p)++;
    }
    out[n] = '\0';
    return 1;
}

static jv *child_of(jv *v, const char *token) {
    size_t i, k = strlen(token);
    char *end;
    unsigned long idx;
    if (v->kind == JOBJ) {
        for (i = 0; i < v->n; i++)
            if (v->klens[i] == k && memcmp(v->keys[i], token, k) == 0) return v->items[i];
        return NULL;
    }
    if (v->kind != JARR || !*token || (token[0] == '0' && token[1])) return NULL;
    idx = strtoul(token, &end, 10);
    return *end == '\0' && idx < v->n ? v->items[idx] : NULL;
}

/* Applies one RFC 6902 op (add / remove / replace) or the library's
** "append"; takes ownership of value. Returns NULL or what went wrong. */
static const char *apply_op(jv **root, const char *op, const char *path, jv *value) {
    char token[512];
    const char *p = path;
    jv *parent = NULL, *cur = *root;
    size_t i, k;
    if (!*path) { /* the whole document */
        if (strcmp(op, "replace") != 0 && strcmp(op, "add") != 0) return "only add/replace may target the root";
        jfree(*root);
        *root = value;
        return NULL;
    }
    while (*p) {
        if (!ptr_token(&p, token, sizeof token)) return "malformed JSON Pointer";
        parent = cur;
        if (!*p) break;
        cur = child_of(parent, token);
        if (!cur) return "path does not exist";
    }
    k = strlen(token);
    if (strcmp(op, "append") == 0) {
        jv *target = child_of(parent, token);
        sbuf b = {NULL, 0, 0};
        if (!target || target->kind != JSTR) return "append target is not a string";
        if (!value || value->kind != JSTR) return "append value is not a string";
        sb_putn(&b, target->str, target->len);
        sb_putn(&b, value->str, value->len);
        free(target->str);
        target->len = b.n;
        target->str = sb_take(&b);
        jfree(value);
        return NULL;
    }
    if (parent->kind == JOBJ) {
        for (i = 0; i < parent->n; i++) {
            if (parent->klens[i] == k && memcmp(parent->keys[i], token, k) == 0) {
                if (strcmp(op, "remove") == 0) {
                    jfree(jdetach(parent, token));
                    return NULL;
                }
                jfree(parent->items[i]);
                parent->items[i] = value;
                return NULL;
            }
        }
        if (strcmp(op, "add") != 0) return "member does not exist";
        {
            char *key = (char *)jmini_xmalloc(k + 1);
            memcpy(key, token, k + 1);
            jpush(parent, key, k, value);
        }
        return NULL;
    }
    if (parent->kind == JARR) {
        char *end = NULL;
        unsigned long idx = strcmp(token, "-") == 0 ? (unsigned long)parent->n : strtoul(token, &end, 10);
        if (strcmp(token, "-") != 0 && (*end != '\0' || !*token)) return "bad array index";
        if (strcmp(op, "add") == 0) {
            if (idx > parent->n) return "array index out of range";
            jpush(parent, NULL, 0, value); /* grow, then shift into place */
            memmove(parent->items + idx + 1, parent->items + idx, (parent->n - 1 - idx) * sizeof *parent->items);
            parent->items[idx] = value;
            return NULL;
        }
        if (idx >= parent->n) return "array index out of range";
        if (strcmp(op, "remove") == 0) {
            jfree(parent->items[idx]);
            memmove(parent->items + idx, parent->items + idx + 1, (parent->n - idx - 1) * sizeof *parent->items);
            parent->n--;
            return NULL;
        }
        if (strcmp(op, "replace") == 0) {
            jfree(parent->items[idx]);
            parent->items[idx] = value;
            return NULL;
        }
        return "unknown op";
    }
    return "parent is not a container";
}

static void mirror_init_at(int line, session *s, mirror *m, const char *ctx) {
    reply st = get_state_at(line, s, ctx);
    m->state = jdetach(st.doc, "state");
    m->rev = s->rev;
    reply_free(&st);
}

/* Brings the mirror up to date from changes(mirror.rev) and compares it with state(). */
static void mirror_sync_at(int line, session *s, mirror *m, const char *ctx) {
    reply ch = take_at(line, jcode_mobile_changes(s->app, (uint64_t)m->rev), ctx), st;
    long long rev = -1, since = -1, rrev = -1;
    const jv *records;
    char where[600];
    size_t i, j;
    int ok = 1;
    if (!ch.doc || !check_at(line, jtrue(ch.doc, "ok"), "%s: changes() failed: %.300s", ctx, ch.raw)) goto done;
    check_at(line, jint(ch.doc, "revision", &rev) && rev == s->rev, "%s: changes().revision is %lld, state is at %lld",
             ctx, rev, s->rev);
    check_at(line, jint(ch.doc, "since", &since) && since == m->rev, "%s: changes().since is %lld, asked %lld", ctx,
             since, m->rev);
    if (jtrue(ch.doc, "resync")) {
        jfree(m->state);
        m->state = jdetach(ch.doc, "state");
        check_at(line, m->state && m->state->kind == JOBJ, "%s: a resync without a state object", ctx);
        m->rev = rev;
    } else {
        records = jget(ch.doc, "changes");
        if (!check_at(line, records && records->kind == JARR, "%s: changes() has neither changes nor resync", ctx))
            goto done;
        if (m->rev == s->rev) check_at(line, records->n == 0, "%s: changes since the current revision are not empty", ctx);
        for (i = 0; ok && i < records->n; i++) {
            jv *record = records->items[i];
            jv *ops = (jv *)jget(record, "ops");
            if (!check_at(line, jint(record, "revision", &rrev) && rrev > m->rev && rrev <= rev && ops &&
                                    ops->kind == JARR,
                          "%s: change record %lu is malformed or out of order (revision %lld after %lld)", ctx,
                          (unsigned long)i, rrev, m->rev)) {
                ok = 0;
                break;
            }
            for (j = 0; j < ops->n; j++) {
                jv *op = ops->items[j];
                const char *name = jstr(op, "op"), *path = jstr(op, "path"), *err;
                jv *value = jdetach(op, "value");
                if (!name || !path) {
                    jfree(value);
                    ok = check_at(line, 0, "%s: revision %lld: op %lu has no op/path", ctx, rrev, (unsigned long)j);
                    break;
                }
                err = apply_op(&m->state, name, path, value);
                if (err) {
                    ok = check_at(line, 0, "%s: revision %lld: cannot apply %s %s: %s", ctx, rrev, name, path, err);
                    break;
                }
            }
            if (ok) {
                jv *r = jnew(JNUM);
                r->is_int = 1;
                r->ival = rrev;
                r->num = (double)rrev;
                apply_op(&m->state, "add", "/revision", r);
                m->rev = rrev;
            }
        }
        if (ok && records->n) check_at(line, m->rev == rev, "%s: the last record is %lld, the feed says %lld", ctx, m->rev, rev);
        if (!ok) goto done;
    }
    st = get_state_at(line, s, ctx);
    if (st.doc)
        check_at(line, !jdiff(m->state, jget(st.doc, "state"), where, sizeof where),
                 "%s: the state rebuilt from changes() differs from state() at %s", ctx, where);
    reply_free(&st);
done:
    reply_free(&ch);
}

#define MIRROR_INIT(s, m, ctx) mirror_init_at(__LINE__, (s), (m), (ctx))
#define MIRROR_SYNC(s, m, ctx) mirror_sync_at(__LINE__, (s), (m), (ctx))

/* The record of the last input only appends `text` to transcript strings. */
static void expect_append_only_at(int line, session *s, const char *text, const char *ctx) {
    reply ch = take_at(line, jcode_mobile_changes(s->app, (uint64_t)(s->rev - 1)), ctx);
    const jv *ops = ch.doc ? jget(ch.doc, "changes[0].ops") : NULL;
    sbuf all = {NULL, 0, 0};
    size_t i;
    int only_append = ops && ops->kind == JARR && ops->n > 0;
    EXPECT_LEN(ch.doc, "changes", 1, ctx);
    for (i = 0; only_append && i < ops->n; i++) {
        const char *op = jstr(ops->items[i], "op"), *path = jstr(ops->items[i], "path");
        const jv *value = jget(ops->items[i], "value");
        if (!op || strcmp(op, "append") != 0 || !path || strncmp(path, "/transcript/", 12) != 0 || !value ||
            value->kind != JSTR)
            only_append = 0;
        else
            sb_putn(&all, value->str, value->len);
    }
    check_at(line, only_append, "%s: a streamed delta should be append ops on the transcript: %.300s", ctx,
             ch.raw ? ch.raw : "(null)");
    check_at(line, only_append && all.n == strlen(text) && memcmp(all.d, text, all.n) == 0,
             "%s: the appended text is \"%.200s\", expected \"%.200s\"", ctx, all.d ? all.d : "", text);
    free(all.d);
    reply_free(&ch);
}

#define EXPECT_APPEND_ONLY(s, text, ctx) expect_append_only_at(__LINE__, (s), (text), (ctx))

/* {"type":"<type>","value":<string>} */
static char *action_value(const char *type, const char *value) {
    sbuf b = {NULL, 0, 0};
    sb_printf(&b, "{\"type\":\"%s\",\"value\":", type);
    sb_json_string(&b, value);
    sb_putc(&b, '}');
    return sb_take(&b);
}

/* {"type":"websocket_event","effect_id":N,"line":<line>} */
static char *ws_line_event(long long effect_id, const char *line) {
    sbuf b = {NULL, 0, 0};
    sb_printf(&b, "{\"type\":\"websocket_event\",\"effect_id\":%lld,\"line\":", effect_id);
    sb_json_string(&b, line);
    sb_putc(&b, '}');
    return sb_take(&b);
}

static reply dispatch_value_at(int line, session *s, const char *type, const char *value, int change) {
    char *json = action_value(type, value);
    reply r = send_at(line, s, 0, json, change, type);
    free(json);
    return r;
}

#define DISPATCH_VALUE(s, type, value, change) dispatch_value_at(__LINE__, (s), (type), (value), (change))

static reply ws_line_at(int line, session *s, long long connect_id, const char *frame, int change, const char *ctx) {
    char *json = ws_line_event(connect_id, frame);
    reply r = send_at(line, s, 1, json, change, ctx);
    free(json);
    return r;
}

#define WS_LINE(s, id, frame, change, ctx) ws_line_at(__LINE__, (s), (id), (frame), (change), (ctx))

/* Parses the NDJSON request carried by a websocket_send effect. */
static jv *sent_request(const jv *effect) {
    const char *line = effect ? jstr(effect, "line") : NULL;
    return line ? jparse(line, strlen(line), NULL, NULL) : NULL;
}

static void drop(reply r) { reply_free(&r); }

static int session_open(session *s, const char *options) {
    memset(s, 0, sizeof *s);
    s->app = jcode_mobile_app_new(options);
    return s->app != NULL;
}

/* Fills the pairing form and submits it (by action or by tapping the
** button); returns the http_pair effect id, or -1. */
static long long fill_and_submit_at(int line, session *s, int by_tap, const char *ctx) {
    reply r;
    long long id;
    /* ANY_CHANGE: on a retry the form may already hold these values. */
    drop(dispatch_value_at(line, s, "set_host", "devbox.local", ANY_CHANGE));
    drop(dispatch_value_at(line, s, "set_port", "7643", ANY_CHANGE));
    drop(dispatch_value_at(line, s, "set_pair_code", CODE, ANY_CHANGE));
    drop(dispatch_value_at(line, s, "set_device_name", "Harness Phone", ANY_CHANGE));
    drop(dispatch_value_at(line, s, "set_working_dir", "/home/harness/project", ANY_CHANGE));
    r = send_at(line, s, 0,
                by_tap ? "{\"type\":\"tap_node\",\"node_id\":\"pair.submit\"}" : "{\"type\":\"submit_pairing\"}",
                CHANGES, ctx);
    if (count_effects(r.doc, "create_device_id") == 1) {
        /* No identity yet (the first pairing of this install): the host creates one, then the code goes out. */
        char buf[160];
        snprintf(buf, sizeof buf, "{\"type\":\"device_id_created\",\"effect_id\":%lld,\"device_id\":\"%s\"}",
                 effect_id_of(find_effect(r.doc, "create_device_id", 0)), HARNESS_DEVICE_ID);
        reply_free(&r);
        r = send_at(line, s, 1, buf, CHANGES, ctx);
    }
    check_at(line, count_effects(r.doc, "http_pair") == 1, "%s: expected one http_pair effect: %.300s", ctx,
             r.raw ? r.raw : "(null)");
    s->code_used_rev = s->rev;
    id = effect_id_of(find_effect(r.doc, "http_pair", 0));
    reply_free(&r);
    return id;
}

#define FILL_AND_SUBMIT(s, by_tap, ctx) fill_and_submit_at(__LINE__, (s), (by_tap), (ctx))

/* ================================================================ 0. parser */

static void test_parser_self_check(void) {
    static const char *const bad[] = {
        "",         "{",       "{\"a\":1,}",       "[01]",         "[1,]",       "\"\\ud800\"", "\"\\udc00x\"",
        "{\"a\":1}x", "\"\x01\"", "{\"a\":1,\"a\":2}", "[\"\\q\"]",    "nul",        "-",           "1.",
        "1e",       "{a:1}",   "[1 2]",            "\"unterminated",
    };
    const char *good = "{\"a\":[1,-2.5e3,\"x\\u00e9\\ud83d\\ude00\\n\\\"\\\\\\/\",true,false,null,"
                       "-9223372036854775808,18446744073709551616],\"b\":{\"c\":\"\\u0000z\"},\"\":0}";
    size_t i;
    jv *v;
    g_section = "parser";
    v = jparse(good, strlen(good), NULL, NULL);
    if (CHECK(v != NULL, "the JSON reader rejects valid JSON")) {
        const jv *c = jget(v, "b.c");
        long long x = 0;
        CHECK(jint(v, "a[0]", &x) && x == 1, "a[0]");
        CHECK(jget(v, "a[1]") && jget(v, "a[1]")->num == -2500.0 && !jget(v, "a[1]")->is_int, "a[1]");
        EXPECT_STR(v, "a[2]", "x\xc3\xa9\xf0\x9f\x98\x80\n\"\\/", "parser");
        CHECK(jtrue(v, "a[3]") && !jtrue(v, "a[4]") && jget(v, "a[4]") && jget(v, "a[4]")->kind == JBOOL, "bools");
        EXPECT_NULL(v, "a[5]", "parser");
        CHECK(jint(v, "a[-2]", &x) && x == LLONG_MIN, "LLONG_MIN");
        CHECK(jget(v, "a[-1]") && !jget(v, "a[-1]")->is_int, "an integer too large for long long");
        CHECK(c && c->len == 2 && c->str[0] == '\0' && c->str[1] == 'z', "an embedded \\u0000");
        CHECK(jget(v, "a[8]") == NULL && jget(v, "missing") == NULL && jget(v, "a.b") == NULL, "missing paths");
        jfree(v);
    }
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = jparse(bad[i], strlen(bad[i]), NULL, NULL);
        CHECK(v == NULL, "the JSON reader accepts invalid JSON %s", bad[i]);
        jfree(v);
    }
    CHECK(jmini_utf8_bad((const unsigned char *)"a\xc3\xa9\xf0\x9f\x98\x80", 7) == 7, "valid UTF-8");
    CHECK(jmini_utf8_bad((const unsigned char *)"ab\xc0\xaf", 4) == 2, "overlong UTF-8");
    CHECK(jmini_utf8_bad((const unsigned char *)"\xed\xa0\x80", 3) == 0, "surrogate UTF-8");
    CHECK(jmini_utf8_bad((const unsigned char *)"a\xe2\x82", 3) == 1, "truncated UTF-8");
}

/* ================================================================ 1. versions */

static void test_versions(void) {
    const char *v;
    g_section = "versions";
    v = jcode_mobile_version();
    CHECK(v != NULL && strcmp(v, JCODE_MOBILE_VERSION) == 0, "jcode_mobile_version() is \"%s\", header says \"%s\"",
          v ? v : "(null)", JCODE_MOBILE_VERSION);
    CHECK(jcode_mobile_version() == v, "jcode_mobile_version() should return the same static string");
    CHECK(jcode_mobile_abi_version() == JCODE_MOBILE_ABI_VERSION, "abi version %lu, header says %d",
          (unsigned long)jcode_mobile_abi_version(), JCODE_MOBILE_ABI_VERSION);
    CHECK(JCODE_MOBILE_VERSION_CHECK(0, 1, 0), "JCODE_MOBILE_VERSION_CHECK(0,1,0)");
}

/* ================================================================ 2. the flow */

static void check_stream_at(int line, session *s, const char *expected, int streaming, char *asst_id, size_t idlen,
                            const char *ctx) {
    reply st = get_state_at(line, s, ctx), tr;
    const jv *last = st.doc ? jget(st.doc, "state.transcript[-1]") : NULL;
    const char *id = jstr(last, "id");
    char node_id[160];
    if (!check_at(line, last != NULL && id != NULL, "%s: the transcript has no last entry with an id", ctx)) {
        reply_free(&st);
        return;
    }
    expect_str_at(line, last, "role", "assistant", ctx);
    expect_str_at(line, last, "text", expected, ctx);
    expect_bool_at(line, last, "is_streaming", streaming, ctx);
    expect_bool_at(line, st.doc, "state.session.is_processing", streaming, ctx);
    expect_len_at(line, st.doc, "state.transcript", 2, ctx);
    if (!asst_id[0])
        snprintf(asst_id, idlen, "%s", id);
    else
        check_at(line, strcmp(asst_id, id) == 0, "%s: the assistant entry changed id from %s to %s", ctx, asst_id, id);
    snprintf(node_id, sizeof node_id, "message.%s", id);
    tr = get_tree_at(line, s, ctx);
    {
        const jv *node = find_node(tr.doc ? jget(tr.doc, "tree") : NULL, node_id);
        if (check_at(line, node != NULL, "%s: the tree has no node %s", ctx, node_id)) {
            expect_str_at(line, node, "value", expected, ctx);
            expect_bool_at(line, node, "visible", 1, ctx);
        }
    }
    reply_free(&tr);
    reply_free(&st);
}

#define CHECK_STREAM(s, expected, streaming, ctx) \
    check_stream_at(__LINE__, (s), (expected), (streaming), asst_id, sizeof asst_id, (ctx))

static void test_flow(void) {
    session s;
    reply r, st, tr, lg;
    const jv *e, *node;
    jv *req;
    long long pair_id, connect_id, store_id = -1, x = 0, next_seq = 0;
    const char *store_key;
    char *json;
    char asst_id[128] = "";
    sbuf expected = {NULL, 0, 0};
    mirror full, live;

    g_section = "flow";
    if (!CHECK(session_open(&s, NULL), "app_new(NULL) returned NULL")) return;

    /* First launch. */
    st = GET_STATE(&s, "first launch");
    EXPECT_STR(st.doc, "state.screen", "onboarding", "first launch");
    EXPECT_STR(st.doc, "state.connection.phase", "disconnected", "first launch");
    EXPECT_LEN(st.doc, "state.transcript", 0, "first launch");
    EXPECT_LEN(st.doc, "state.servers", 0, "first launch");
    EXPECT_NULL(st.doc, "state.banners.error", "first launch");
    reply_free(&st);
    tr = GET_TREE(&s, "first launch");
    VALIDATE_TREE(tr.doc, "first launch");
    EXPECT_STR(tr.doc, "tree.value", "onboarding", "first launch");
    node = find_node(jget(tr.doc, "tree"), "pair.submit");
    CHECK(node && node_supports(node, "tap"), "first launch: no tappable pair.submit node");
    CHECK(find_node(jget(tr.doc, "tree"), "pair.host") != NULL, "first launch: no pair.host node");
    reply_free(&tr);
    lg = GET_LOGS(&s, 0, "first launch");
    EXPECT_INT(lg.doc, "next_seq", 1, "first launch logs");
    EXPECT_INT(lg.doc, "capacity", 256, "first launch logs");
    EXPECT_LEN(lg.doc, "entries", 0, "first launch logs");
    reply_free(&lg);
    MIRROR_INIT(&s, &full, "first launch");
    MIRROR_SYNC(&s, &full, "changes(0) at revision 0");

    /* The form. */
    r = DISPATCH(&s, "{\"type\":\"set_host\",\"value\":\"devbox.local\"}", CHANGES, "set_host");
    EXPECT_LEN(r.doc, "effects", 0, "set_host");
    reply_free(&r);
    drop(DISPATCH_VALUE(&s, "set_port", "7643", CHANGES));
    drop(DISPATCH_VALUE(&s, "set_pair_code", CODE, CHANGES));
    drop(DISPATCH_VALUE(&s, "set_device_name", "Harness Phone", CHANGES));
    drop(DISPATCH_VALUE(&s, "set_working_dir", "/home/harness/project", CHANGES));
    st = GET_STATE(&s, "form filled");
    EXPECT_STR(st.doc, "state.pairing.host", "devbox.local", "form filled");
    EXPECT_STR(st.doc, "state.pairing.port", "7643", "form filled");
    EXPECT_STR(st.doc, "state.pairing.device_name", "Harness Phone", "form filled");
    EXPECT_BOOL(st.doc, "state.pairing.can_submit", 1, "form filled");
    reply_free(&st);
    tr = GET_TREE(&s, "form filled");
    node = find_node(jget(tr.doc, "tree"), "pair.host");
    EXPECT_STR(node, "value", "devbox.local", "form filled: pair.host");
    reply_free(&tr);

    /* submit_pairing → create_device_id (a first launch has no identity) → device_id_created → http_pair. */
    r = DISPATCH(&s, "{\"type\":\"submit_pairing\"}", CHANGES, "submit_pairing");
    EXPECT_LEN(r.doc, "effects", 1, "submit_pairing");
    e = find_effect(r.doc, "create_device_id", 0);
    CHECK(e != NULL, "submit_pairing: no create_device_id effect: %.300s", r.raw ? r.raw : "");
    {
        char buf[160];
        snprintf(buf, sizeof buf, "{\"type\":\"device_id_created\",\"effect_id\":%lld,\"device_id\":\"%s\"}",
                 effect_id_of(e), HARNESS_DEVICE_ID);
        reply_free(&r);
        st = GET_STATE(&s, "waiting for the identity");
        EXPECT_BOOL(st.doc, "state.pairing.awaiting_identity", 1, "waiting for the identity");
        EXPECT_NULL(st.doc, "state.lifecycle.device_id", "waiting for the identity");
        reply_free(&st);
        r = EVENT(&s, buf, CHANGES, "device_id_created");
    }
    /* http_pair, and the snapshot keeps the new identity */
    EXPECT_LEN(r.doc, "effects", 2, "device_id_created");
    CHECK(count_effects(r.doc, "storage_write") == 1, "device_id_created: expected one storage_write");
    EXPECT_STR(find_effect(r.doc, "storage_write", 0), "value.device.device_id", HARNESS_DEVICE_ID,
               "device_id_created: snapshot");
    e = find_effect(r.doc, "http_pair", 0);
    if (CHECK(e != NULL, "device_id_created: no http_pair effect: %.300s", r.raw ? r.raw : "")) {
        EXPECT_STR(e, "host", "devbox.local", "http_pair");
        EXPECT_INT(e, "port", 7643, "http_pair");
        EXPECT_BOOL(e, "use_tls", 0, "http_pair");
        EXPECT_STR(e, "code", CODE, "http_pair");
        EXPECT_STR(e, "device_id", HARNESS_DEVICE_ID, "http_pair");
        EXPECT_STR(e, "device_name", "Harness Phone", "http_pair");
    }
    pair_id = effect_id_of(e);
    reply_free(&r);
    s.code_used_rev = s.rev;
    st = GET_STATE(&s, "pairing");
    EXPECT_STR(st.doc, "state.connection.phase", "pairing", "pairing");
    EXPECT_BOOL(st.doc, "state.pairing.is_submitting", 1, "pairing");
    EXPECT_STR(st.doc, "state.pairing.pair_code", "", "pairing: the code leaves the state once sent");
    reply_free(&st);
    EXPECT_NO_SECRETS(&s, "after submit_pairing");

    /* pair_finished ok → secure_store_write, storage_write, websocket_connect, haptic, push. */
    {
        sbuf b = {NULL, 0, 0};
        sb_printf(&b,
                  "{\"type\":\"pair_finished\",\"effect_id\":%lld,\"ok\":true,\"token\":\"%s\","
                  "\"server_name\":\"devbox\",\"server_version\":\"0.9.2\"}",
                  pair_id, TOKEN);
        json = sb_take(&b);
    }
    r = EVENT(&s, json, CHANGES, "pair_finished");
    free(json);
    e = find_effect(r.doc, "secure_store_write", 0);
    CHECK(count_effects(r.doc, "secure_store_write") == 1, "pair_finished: expected one secure_store_write");
    EXPECT_STR(e, "value", TOKEN, "secure_store_write");
    EXPECT_NONEMPTY(e, "key", "secure_store_write");
    store_id = effect_id_of(e);
    store_key = jstr(e, "key");
    CHECK(count_effects(r.doc, "storage_write") == 1, "pair_finished: expected one storage_write");
    e = find_effect(r.doc, "storage_write", 0);
    EXPECT_STR(e, "key", "snapshot", "storage_write");
    EXPECT_INT(e, "value.version", 1, "storage_write");
    EXPECT_STR(e, "value.servers[0].host", "devbox.local", "storage_write");
    EXPECT_STR(e, "value.device.device_id", HARNESS_DEVICE_ID, "storage_write");
    CHECK(e && !jcontains(jget(e, "value"), TOKEN), "storage_write must not persist the token");
    CHECK(count_effects(r.doc, "websocket_connect") == 1, "pair_finished: expected one websocket_connect");
    e = find_effect(r.doc, "websocket_connect", 0);
    EXPECT_STR(e, "url", "ws://devbox.local:7643/ws", "websocket_connect");
    EXPECT_STR(e, "auth_token", TOKEN, "websocket_connect");
    connect_id = effect_id_of(e);
    e = find_effect(r.doc, "haptic", 0);
    EXPECT_STR(e, "style", "success", "haptic");
    CHECK(count_effects(r.doc, "register_push_notifications") == 1, "pair_finished: expected register_push_notifications");
    st = GET_STATE(&s, "paired");
    EXPECT_STR(st.doc, "state.connection.phase", "connecting", "paired");
    EXPECT_LEN(st.doc, "state.servers", 1, "paired");
    EXPECT_STR(st.doc, "state.servers[0].name", "devbox", "paired");
    EXPECT_STR(st.doc, "state.servers[0].host", "devbox.local", "paired");
    EXPECT_INT(st.doc, "state.servers[0].port", 7643, "paired");
    EXPECT_STR(st.doc, "state.servers[0].server_version", "0.9.2", "paired");
    EXPECT_NONEMPTY(st.doc, "state.selected_server_id", "paired");
    EXPECT_STR(st.doc, "state.pairing.pair_code", "", "paired");
    EXPECT_BOOL(st.doc, "state.pairing.is_submitting", 0, "paired");
    reply_free(&st);
    EXPECT_NO_SECRETS(&s, "after pairing");
    /* Logs keep the effects, redacted. */
    lg = GET_LOGS(&s, 3, "after pairing");
    EXPECT_STR(lg.doc, "entries[0].type", "submit_pairing", "logs");
    EXPECT_STR(lg.doc, "entries[0].effects[0].type", "create_device_id", "logs");
    EXPECT_STR(lg.doc, "entries[1].type", "device_id_created", "logs");
    EXPECT_STR(lg.doc, "entries[1].effects[0].type", "http_pair", "logs");
    EXPECT_STR(lg.doc, "entries[1].effects[0].code", "[redacted]", "logs");
    EXPECT_STR(lg.doc, "entries[2].type", "pair_finished", "logs");
    EXPECT_STR(lg.doc, "entries[2].kind", "event", "logs");
    {
        const jv *entry = jget(lg.doc, "entries[2]");
        EXPECT_STR(find_effect(entry, "websocket_connect", 0), "auth_token", "[redacted]", "logged websocket_connect");
        EXPECT_STR(find_effect(entry, "secure_store_write", 0), "value", "[redacted]", "logged secure_store_write");
    }
    reply_free(&lg);

    /* The Keychain write succeeded. */
    {
        sbuf b = {NULL, 0, 0};
        sb_printf(&b, "{\"type\":\"secure_store_write_finished\",\"effect_id\":%lld,\"key\":", store_id);
        sb_json_string(&b, store_key ? store_key : "");
        sb_puts(&b, ",\"ok\":true}");
        json = sb_take(&b);
    }
    reply_free(&r); /* store_key pointed into it */
    drop(EVENT(&s, json, ANY_CHANGE, "secure_store_write_finished"));
    free(json);

    /* websocket_opened → subscribe, get_history. */
    {
        char buf[96];
        snprintf(buf, sizeof buf, "{\"type\":\"websocket_opened\",\"effect_id\":%lld}", connect_id);
        r = EVENT(&s, buf, CHANGES, "websocket_opened");
    }
    CHECK(count_effects(r.doc, "websocket_send") == 2, "websocket_opened: expected two websocket_send: %.300s",
          r.raw ? r.raw : "");
    req = sent_request(find_effect(r.doc, "websocket_send", 0));
    EXPECT_INT(req, "id", 1, "first request");
    EXPECT_STR(req, "type", "subscribe", "first request");
    jfree(req);
    req = sent_request(find_effect(r.doc, "websocket_send", 1));
    EXPECT_INT(req, "id", 2, "second request");
    EXPECT_STR(req, "type", "get_history", "second request");
    jfree(req);
    reply_free(&r);

    /* history → the chat screen. */
    drop(WS_LINE(&s, connect_id, "{\"type\":\"history\",\"id\":2,\"session_id\":\"s1\",\"messages\":[]}", CHANGES,
                 "history"));
    st = GET_STATE(&s, "history");
    EXPECT_STR(st.doc, "state.screen", "chat", "history");
    EXPECT_STR(st.doc, "state.connection.phase", "connected", "history");
    EXPECT_BOOL(st.doc, "state.connection.socket_open", 1, "history");
    EXPECT_STR(st.doc, "state.session.id", "s1", "history");
    EXPECT_BOOL(st.doc, "state.session.history_loaded", 1, "history");
    EXPECT_LEN(st.doc, "state.transcript", 0, "history");
    reply_free(&st);
    tr = GET_TREE(&s, "chat");
    VALIDATE_TREE(tr.doc, "chat");
    EXPECT_STR(tr.doc, "tree.value", "chat", "chat");
    node = find_node(jget(tr.doc, "tree"), "chat.send");
    CHECK(node && node_supports(node, "tap"), "chat: no tappable chat.send node");
    CHECK(find_node(jget(tr.doc, "tree"), "chat.draft") != NULL, "chat: no chat.draft node");
    CHECK(find_node(jget(tr.doc, "tree"), "chat.messages") != NULL, "chat: no chat.messages node");
    reply_free(&tr);
    MIRROR_INIT(&s, &live, "chat");

    /* send_message → websocket_send message. */
    r = DISPATCH(&s, "{\"type\":\"send_message\",\"text\":\"hello\"}", CHANGES, "send_message");
    CHECK(count_effects(r.doc, "websocket_send") == 1, "send_message: expected one websocket_send: %.300s",
          r.raw ? r.raw : "");
    req = sent_request(find_effect(r.doc, "websocket_send", 0));
    EXPECT_INT(req, "id", 3, "message request");
    EXPECT_STR(req, "type", "message", "message request");
    EXPECT_STR(req, "content", "hello", "message request");
    jfree(req);
    reply_free(&r);
    st = GET_STATE(&s, "sent");
    EXPECT_LEN(st.doc, "state.transcript", 1, "sent");
    EXPECT_STR(st.doc, "state.transcript[0].role", "user", "sent");
    EXPECT_STR(st.doc, "state.transcript[0].text", "hello", "sent");
    EXPECT_BOOL(st.doc, "state.session.is_processing", 1, "sent");
    /* sent, not confirmed: it stays in the outbox until the server's ack or the turn's end */
    EXPECT_LEN(st.doc, "state.outbox", 1, "sent");
    EXPECT_STR(st.doc, "state.outbox[0].delivery", "awaiting_ack", "sent");
    reply_free(&st);

    /* The reply streams in: raw frames, one with two events, escapes, a parsed event, junk. */
    drop(WS_LINE(&s, connect_id, "{\"type\":\"text_delta\",\"text\":\"Hel\"}", CHANGES, "delta 1"));
    sb_puts(&expected, "Hel");
    CHECK_STREAM(&s, expected.d, 1, "after delta 1");
    MIRROR_SYNC(&s, &live, "changes after delta 1");

    drop(WS_LINE(&s, connect_id,
                 "{\"type\":\"text_delta\",\"text\":\"lo, \"}\n{\"type\":\"text_delta\",\"text\":\"w\\u00f6rld\"}",
                 CHANGES, "two deltas in one frame"));
    sb_puts(&expected, "lo, w\xc3\xb6rld");
    CHECK_STREAM(&s, expected.d, 1, "after a frame with two deltas");
    EXPECT_APPEND_ONLY(&s, "lo, w\xc3\xb6rld", "changes for two deltas");
    MIRROR_SYNC(&s, &live, "changes after two deltas");

    drop(WS_LINE(&s, connect_id, "{\"type\":\"text_delta\",\"text\":\" \\\"q\\\" \\\\ \\ud83d\\ude00\\n\"}", CHANGES,
                 "escaped delta"));
    sb_puts(&expected, " \"q\" \\ \xf0\x9f\x98\x80\n");
    CHECK_STREAM(&s, expected.d, 1, "after an escaped delta");
    EXPECT_APPEND_ONLY(&s, " \"q\" \\ \xf0\x9f\x98\x80\n", "changes for an escaped delta");
    MIRROR_SYNC(&s, &live, "changes after an escaped delta");

    {
        char buf[160];
        snprintf(buf, sizeof buf,
                 "{\"type\":\"websocket_event\",\"effect_id\":%lld,\"event\":{\"type\":\"text_delta\",\"text\":\"!\"}}",
                 connect_id);
        drop(EVENT(&s, buf, CHANGES, "parsed delta"));
    }
    sb_puts(&expected, "!");
    CHECK_STREAM(&s, expected.d, 1, "after a parsed event");
    EXPECT_APPEND_ONLY(&s, "!", "changes for a parsed delta");

    drop(WS_LINE(&s, connect_id,
                 "{\"type\":\"mystery_event\",\"x\":1}\nthis is not json\n{\"type\":\"text_delta\",\"text\":\"?\"}",
                 CHANGES, "frame with unknown and malformed events"));
    sb_puts(&expected, "?");
    CHECK_STREAM(&s, expected.d, 1, "after unknown and malformed server events");

    drop(WS_LINE(&s, connect_id, "{\"type\":\"done\",\"id\":3}", CHANGES, "done"));
    CHECK_STREAM(&s, expected.d, 0, "after done");
    MIRROR_SYNC(&s, &live, "changes after done");
    st = GET_STATE(&s, "done");
    EXPECT_STR(st.doc, "state.transcript[0].text", "hello", "done");
    EXPECT_STR(st.doc, "state.screen", "chat", "done");
    EXPECT_STR(st.doc, "state.connection.phase", "connected", "done");
    EXPECT_NULL(st.doc, "state.banners.error", "done");
    EXPECT_LEN(st.doc, "state.outbox", 0, "done: the turn's end confirms the message");
    reply_free(&st);
    free(expected.d);

    /* Answers nobody is waiting for change nothing. */
    {
        char buf[200];
        snprintf(buf, sizeof buf,
                 "{\"type\":\"pair_finished\",\"effect_id\":%lld,\"ok\":true,\"token\":\"other\"}", pair_id);
        r = EVENT(&s, buf, SAME, "pair_finished answered twice");
        EXPECT_LEN(r.doc, "effects", 0, "pair_finished answered twice");
        reply_free(&r);
        r = EVENT(&s, "{\"type\":\"websocket_opened\",\"effect_id\":999999}", SAME, "websocket_opened never issued");
        EXPECT_LEN(r.doc, "effects", 0, "websocket_opened never issued");
        reply_free(&r);
    }

    EXPECT_NO_SECRETS(&s, "end of the flow");

    /* The change feed rebuilds the whole state from revision 0, is empty at
    ** the current revision, and asks for a resync from an unknown one. */
    MIRROR_SYNC(&s, &full, "changes(0) replayed at the end of the flow");
    MIRROR_SYNC(&s, &live, "changes at the current revision");
    jfree(full.state);
    jfree(live.state);
    {
        reply ch = TAKE(jcode_mobile_changes(s.app, (uint64_t)s.rev + 1000), "changes(future revision)");
        CHECK(jtrue(ch.doc, "resync") && jget(ch.doc, "state") && jget(ch.doc, "state")->kind == JOBJ,
              "changes(a revision from the future) should ask for a resync with the state: %.200s",
              ch.raw ? ch.raw : "(null)");
        EXPECT_INT(ch.doc, "state.revision", s.rev, "changes(future revision)");
        EXPECT_INT(ch.doc, "revision", s.rev, "changes(future revision)");
        reply_free(&ch);
    }
    {
        /* since_revision is echoed exactly as passed, beyond INT64_MAX too. */
        static const struct {
            uint64_t since;
            const char *written;
        } beyond[] = {
            {UINT64_C(9223372036854775808), "\"since\":9223372036854775808,"},
            {UINT64_MAX, "\"since\":18446744073709551615,"},
        };
        size_t i;
        for (i = 0; i < sizeof beyond / sizeof beyond[0]; i++) {
            reply ch = TAKE(jcode_mobile_changes(s.app, beyond[i].since), "changes(beyond INT64_MAX)");
            CHECK(ch.raw && strstr(ch.raw, beyond[i].written) && jtrue(ch.doc, "resync"),
                  "changes(%s) should echo %s and resync: %.120s", beyond[i].written + 8, beyond[i].written,
                  ch.raw ? ch.raw : "(null)");
            reply_free(&ch);
        }
    }

    /* Logs: one entry per input, oldest first, bounded. */
    lg = GET_LOGS(&s, 0, "end of the flow");
    if (CHECK(jint(lg.doc, "next_seq", &next_seq), "logs: next_seq")) {
        CHECK(next_seq - 1 == s.inputs, "logs: next_seq %lld, but %ld inputs were sent (expected next_seq %ld)",
              next_seq, s.inputs, s.inputs + 1);
        EXPECT_LEN(lg.doc, "entries", (long)(next_seq - 1), "logs");
        {
            const jv *entries = jget(lg.doc, "entries");
            size_t i;
            int ordered = entries != NULL;
            for (i = 0; entries && i < entries->n; i++)
                if (!jint(entries->items[i], "seq", &x) || x != (long long)i + 1) ordered = 0;
            CHECK(ordered, "logs: entries are not seq 1, 2, 3… oldest first");
        }
        EXPECT_STR(lg.doc, "entries[-1].type", "websocket_opened", "logs: last entry");
        EXPECT_STR(lg.doc, "entries[-1].kind", "event", "logs: last entry");
        EXPECT_STR(lg.doc, "entries[0].type", "set_host", "logs: first entry");
        EXPECT_STR(lg.doc, "entries[0].kind", "action", "logs: first entry");
    }
    reply_free(&lg);
    lg = GET_LOGS(&s, 3, "logs(3)");
    EXPECT_LEN(lg.doc, "entries", 3, "logs(3)");
    EXPECT_INT(lg.doc, "entries[-1].seq", next_seq - 1, "logs(3)");
    reply_free(&lg);

    jcode_mobile_app_free(s.app);
}

/* ================================================================ 3. pairing failures */

static void test_pairing_failures(void) {
    session s;
    reply r, st, tr;
    long long id;
    char buf[300];
    const jv *node;

    g_section = "pairing failures";

    /* 401: the code is wrong or expired. Submitted by tapping the button. */
    if (CHECK(session_open(&s, NULL), "app_new(NULL) returned NULL")) {
        id = FILL_AND_SUBMIT(&s, 1, "tap pair.submit");
        snprintf(buf, sizeof buf,
                 "{\"type\":\"pair_finished\",\"effect_id\":%lld,\"ok\":false,\"status\":401,"
                 "\"error\":\"Invalid or expired pairing code\"}",
                 id);
        r = EVENT(&s, buf, CHANGES, "pair_finished 401");
        CHECK(count_effects(r.doc, "websocket_connect") == 0 && count_effects(r.doc, "secure_store_write") == 0,
              "401: must not store or connect: %.300s", r.raw ? r.raw : "");
        reply_free(&r);
        st = GET_STATE(&s, "401");
        EXPECT_CONTAINS(st.doc, "state.banners.error.message", "Invalid or expired pairing code", "401");
        EXPECT_STR(st.doc, "state.screen", "onboarding", "401");
        EXPECT_STR(st.doc, "state.connection.phase", "disconnected", "401");
        EXPECT_STR(st.doc, "state.pairing.pair_code", "", "401");
        EXPECT_BOOL(st.doc, "state.pairing.is_submitting", 0, "401");
        EXPECT_LEN(st.doc, "state.servers", 0, "401");
        reply_free(&st);
        tr = GET_TREE(&s, "401");
        VALIDATE_TREE(tr.doc, "401");
        node = find_node(jget(tr.doc, "tree"), "banner.error");
        EXPECT_BOOL(node, "visible", 1, "401: banner.error");
        node = find_node(jget(tr.doc, "tree"), "banner.error.dismiss");
        CHECK(node && node_supports(node, "tap"), "401: banner.error.dismiss is not tappable");
        reply_free(&tr);
        EXPECT_NO_SECRETS(&s, "after 401");
        drop(DISPATCH(&s, "{\"type\":\"tap_node\",\"node_id\":\"banner.error.dismiss\"}", CHANGES, "dismiss by tap"));
        st = GET_STATE(&s, "dismissed");
        EXPECT_NULL(st.doc, "state.banners.error", "dismissed");
        reply_free(&st);
        jcode_mobile_app_free(s.app);
    }

    /* Unreachable: ok:false and no status. */
    if (CHECK(session_open(&s, ""), "app_new(\"\") returned NULL")) {
        id = FILL_AND_SUBMIT(&s, 0, "submit_pairing");
        snprintf(buf, sizeof buf,
                 "{\"type\":\"pair_finished\",\"effect_id\":%lld,\"ok\":false,\"error\":\"connection refused\"}", id);
        r = EVENT(&s, buf, CHANGES, "pair_finished unreachable");
        CHECK(count_effects(r.doc, "websocket_connect") == 0, "unreachable: must not connect");
        reply_free(&r);
        st = GET_STATE(&s, "unreachable");
        EXPECT_CONTAINS(st.doc, "state.banners.error.message", "Could not reach", "unreachable");
        EXPECT_CONTAINS(st.doc, "state.banners.error.message", "devbox.local", "unreachable");
        EXPECT_STR(st.doc, "state.connection.phase", "disconnected", "unreachable");
        EXPECT_STR(st.doc, "state.screen", "onboarding", "unreachable");
        reply_free(&st);
        EXPECT_NO_SECRETS(&s, "after unreachable");
        drop(DISPATCH(&s, "{\"type\":\"dismiss_error\"}", CHANGES, "dismiss_error"));
        st = GET_STATE(&s, "dismissed");
        EXPECT_NULL(st.doc, "state.banners.error", "dismissed");
        reply_free(&st);

        /* "Pair" again without retyping: the sent code was kept aside (not in
        ** the state) for the retry. Then another HTTP status. */
        st = GET_STATE(&s, "retry");
        EXPECT_BOOL(st.doc, "state.pairing.can_submit", 1, "retry without retyping");
        reply_free(&st);
        r = DISPATCH(&s, "{\"type\":\"submit_pairing\"}", CHANGES, "retry without retyping");
        EXPECT_STR(find_effect(r.doc, "http_pair", 0), "code", CODE, "retry without retyping: http_pair");
        id = effect_id_of(find_effect(r.doc, "http_pair", 0));
        reply_free(&r);
        snprintf(buf, sizeof buf, "{\"type\":\"pair_finished\",\"effect_id\":%lld,\"ok\":false,\"status\":500}", id);
        drop(EVENT(&s, buf, CHANGES, "pair_finished 500"));
        st = GET_STATE(&s, "500");
        EXPECT_CONTAINS(st.doc, "state.banners.error.message", "500", "500");
        reply_free(&st);
        EXPECT_NO_SECRETS(&s, "after 500");
        jcode_mobile_app_free(s.app);
    }
}

/* ================================================================ 4. bad input */

static size_t len_or_zero(const char *s) { return s ? strlen(s) : 0; }


/* Sends a bad input (input may be NULL; len is its length for offset
** checks), expects `code`, then checks that the app still answers, that
** its revision is unchanged and, when `logged`, that the logs gained one
** "rejected" entry carrying the code. */
static void expect_rejected_at(int line, session *s, int is_event, const char *input, size_t len, const char *code,
                               const char *field, long long offset, int logged, const char *ctx) {
    reply lg = get_logs_at(line, s, 1, ctx), st;
    long long seq_before = -1, seq_after = -1;
    jint(lg.doc, "next_seq", &seq_before);
    reply_free(&lg);
    expect_error_at(line,
                    is_event ? jcode_mobile_platform_event(s->app, input) : jcode_mobile_dispatch(s->app, input),
                    code, field, offset, len, ctx);
    st = get_state_at(line, s, ctx); /* still answers, revision unchanged */
    reply_free(&st);
    lg = get_logs_at(line, s, 1, ctx);
    jint(lg.doc, "next_seq", &seq_after);
    if (logged) {
        s->inputs++;
        check_at(line, seq_after == seq_before + 1, "%s: the rejected input was not logged (next_seq %lld → %lld)", ctx,
                 seq_before, seq_after);
        expect_str_at(line, lg.doc, "entries[-1].kind", "rejected", ctx);
        expect_str_at(line, lg.doc, "entries[-1].error", code, ctx);
    } else {
        check_at(line, seq_after == seq_before || seq_after == seq_before + 1,
                 "%s: next_seq jumped from %lld to %lld", ctx, seq_before, seq_after);
        if (seq_after == seq_before + 1) s->inputs++;
    }
    reply_free(&lg);
}

#define EXPECT_REJECTED(s, is_event, input, code, field, offset, logged, ctx)                                        \
    expect_rejected_at(__LINE__, (s), (is_event), (input), len_or_zero(input), (code), (field), (offset), \
                       (logged), (ctx))

/* `prefix` then `n` copies of `c` then `suffix`, NUL-terminated; the caller frees it. */
static char *repeat(const char *prefix, char c, size_t n, const char *suffix) {
    size_t p = strlen(prefix), q = strlen(suffix);
    char *buf = (char *)jmini_xmalloc(p + n + q + 1);
    memcpy(buf, prefix, p);
    memset(buf + p, c, n);
    memcpy(buf + p + n, suffix, q + 1);
    return buf;
}

static long long offset_of_byte(const char *s, unsigned char byte) {
    const char *p = strchr(s, (char)byte);
    return p ? (long long)(p - s) : -1;
}

static const char VALID_ACTION[] = "{\"type\":\"set_draft\",\"value\":\"x\"}";
static const char VALID_EVENT[] = "{\"type\":\"app_foreground\"}";

static void test_null_arguments(void) {
    session s;
    reply st;
    void *onboarding[3];
    const char *opts[3] = {NULL, "", "{}"};
    int i;
    char *le;

    g_section = "null arguments";
    for (i = 0; i < 3; i++) {
        onboarding[i] = jcode_mobile_app_new(opts[i]);
        if (CHECK(onboarding[i] != NULL, "app_new(%s) returned NULL", opts[i] ? opts[i] : "NULL")) {
            session t;
            memset(&t, 0, sizeof t);
            t.app = onboarding[i];
            st = GET_STATE(&t, "onboarding");
            EXPECT_STR(st.doc, "state.screen", "onboarding", opts[i] ? opts[i] : "app_new(NULL)");
            reply_free(&st);
            le = jcode_mobile_last_error();
            st = TAKE(le, "last_error after success");
            CHECK(jtrue(st.doc, "ok") && st.doc && st.doc->n == 1, "last_error after a success should be {\"ok\":true}: %s",
                  st.raw ? st.raw : "(null)");
            reply_free(&st);
        }
    }
    for (i = 0; i < 3; i++) jcode_mobile_app_free(onboarding[i]);

    if (!CHECK(session_open(&s, NULL), "app_new(NULL) returned NULL")) return;
    EXPECT_ERROR(jcode_mobile_dispatch(NULL, VALID_ACTION), "null_argument", "app", OFF_IGNORE, 0, "dispatch(NULL, …)");
    EXPECT_ERROR(jcode_mobile_dispatch(NULL, NULL), "null_argument", NULL, OFF_IGNORE, 0, "dispatch(NULL, NULL)");
    EXPECT_ERROR(jcode_mobile_platform_event(NULL, VALID_EVENT), "null_argument", "app", OFF_IGNORE, 0,
                 "platform_event(NULL, …)");
    EXPECT_ERROR(jcode_mobile_platform_event(NULL, NULL), "null_argument", NULL, OFF_IGNORE, 0,
                 "platform_event(NULL, NULL)");
    EXPECT_ERROR(jcode_mobile_state(NULL), "null_argument", "app", OFF_IGNORE, 0, "state(NULL)");
    EXPECT_ERROR(jcode_mobile_tree(NULL), "null_argument", "app", OFF_IGNORE, 0, "tree(NULL)");
    EXPECT_ERROR(jcode_mobile_logs(NULL, 0), "null_argument", "app", OFF_IGNORE, 0, "logs(NULL, 0)");
    EXPECT_ERROR(jcode_mobile_logs(NULL, 10), "null_argument", "app", OFF_IGNORE, 0, "logs(NULL, 10)");
    EXPECT_ERROR(jcode_mobile_changes(NULL, 0), "null_argument", "app", OFF_IGNORE, 0, "changes(NULL, 0)");
    EXPECT_ERROR(jcode_mobile_tree_changes(NULL, 0), "null_argument", "app", OFF_IGNORE, 0, "tree_changes(NULL, 0)");
    EXPECT_ERROR(jcode_mobile_snapshot(NULL), "null_argument", "app", OFF_IGNORE, 0, "snapshot(NULL)");
    EXPECT_ERROR(jcode_mobile_hit_test(NULL, 1, 1), "null_argument", "app", OFF_IGNORE, 0, "hit_test(NULL, 1, 1)");
    EXPECT_ERROR(jcode_mobile_screenshot_svg(NULL), "null_argument", "app", OFF_IGNORE, 0, "screenshot_svg(NULL)");
    EXPECT_REJECTED(&s, 0, (const char *)NULL, "null_argument", "action_json", OFF_IGNORE, 1,
                    "dispatch(app, NULL)");
    EXPECT_REJECTED(&s, 1, (const char *)NULL, "null_argument", "event_json", OFF_IGNORE, 1,
                    "platform_event(app, NULL)");
    jcode_mobile_app_free(NULL);      /* harmless */
    jcode_mobile_string_free(NULL);   /* harmless */
    st = GET_STATE(&s, "after app_free(NULL)");
    CHECK(jtrue(st.doc, "ok"), "the app stopped answering after app_free(NULL)");
    reply_free(&st);
    jcode_mobile_app_free(s.app);
}

static void test_malformed_inputs(void) {
    session s;
    size_t i;
    long long o;
    char *big, *deep;
    const size_t max = JCODE_MOBILE_MAX_INPUT_BYTES;
    struct bad_input {
        int is_event;
        const char *input;
        const char *code;
        const char *field;
        long long offset; /* OFF_IGNORE, OFF_ANY, or exact; -3: the first 0xff/0xc0/0xed/0xe2 byte */
    };
    static const struct bad_input table[] = {
        /* invalid UTF-8 */
        {0, "{\"type\":\"set_host\",\"value\":\"\xff\"}", "invalid_utf8", NULL, -3},
        {1, "{\"type\":\"app_foreground\",\"x\":\"\xff\"}", "invalid_utf8", NULL, -3},
        {0, "{\"type\":\"set_draft\",\"value\":\"\xc0\xaf\"}", "invalid_utf8", NULL, -3},
        {0, "{\"type\":\"set_draft\",\"value\":\"\xed\xa0\x80\"}", "invalid_utf8", NULL, -3},
        {0, "{\"type\":\"set_draft\",\"value\":\"ok\xe2\x82", "invalid_utf8", NULL, -3},
        /* invalid JSON */
        {0, "{\"type\":\"set_host\",", "invalid_json", NULL, OFF_ANY},
        {0, "{\"type\":\"set_host\" \"value\":\"x\"}", "invalid_json", NULL, OFF_ANY},
        {0, "{type:\"set_host\"}", "invalid_json", NULL, OFF_ANY},
        {0, "", "invalid_json", NULL, 0},
        {0, "   ", "invalid_json", NULL, OFF_ANY},
        {0, "{\"type\":\"dismiss_error\"} trailing", "invalid_json", NULL, OFF_ANY},
        {0, "{\"type\":\"set_draft\",\"value\":\"\\q\"}", "invalid_json", NULL, OFF_ANY},
        {0, "{\"type\":\"set_draft\",\"value\":\"a\nb\"}", "invalid_json", NULL, OFF_ANY},
        {0, "{\"type\":\"set_draft\",\"value\":NaN}", "invalid_json", NULL, OFF_ANY},
        {1, "{\"type\":\"app_foreground\"", "invalid_json", NULL, OFF_ANY},
        /* unknown type */
        {0, "{\"type\":\"fly_to_the_moon\"}", "unknown_type", "type", OFF_IGNORE},
        {1, "{\"type\":\"fly_to_the_moon\"}", "unknown_type", "type", OFF_IGNORE},
        /* invalid field */
        {0, "{\"type\":\"set_host\",\"value\":42}", "invalid_field", "value", OFF_IGNORE},
        {0, "{\"type\":\"set_host\"}", "invalid_field", "value", OFF_IGNORE},
        {0, "{\"value\":\"x\"}", "invalid_field", "type", OFF_IGNORE},
        {0, "[1,2]", "invalid_field", NULL, OFF_IGNORE},
        {0, "{\"type\":\"tap_node\",\"node_id\":null}", "invalid_field", "node_id", OFF_IGNORE},
        /* the transcript's actions: a missing node, an `expanded` that is not a boolean */
        {0, "{\"type\":\"set_expanded\",\"expanded\":true}", "invalid_field", "node_id", OFF_IGNORE},
        {0, "{\"type\":\"set_expanded\",\"node_id\":\"tool.m6.call_edit\",\"expanded\":\"yes\"}", "invalid_field",
         "expanded", OFF_IGNORE},
        {0, "{\"type\":\"set_expanded\",\"node_id\":\"tool.m6.call_edit\",\"expanded\":1}", "invalid_field", "expanded",
         OFF_IGNORE},
        {0, "{\"type\":\"set_expanded\",\"node_id\":\"tool.m6.call_edit\"}", "invalid_field", "expanded", OFF_IGNORE},
        {0, "{\"type\":\"copy\"}", "invalid_field", "node_id", OFF_IGNORE},
        {0, "{\"type\":\"copy\",\"node_id\":7}", "invalid_field", "node_id", OFF_IGNORE},
        {1, "{\"type\":\"pair_finished\",\"effect_id\":\"7\",\"ok\":true}", "invalid_field", "effect_id", OFF_IGNORE},
        {1, "{\"type\":\"websocket_event\",\"effect_id\":1,\"line\":5}", "invalid_field", "line", OFF_IGNORE},
        {1, "{\"type\":\"network_reachability_changed\",\"reachable\":\"yes\"}", "invalid_field", "reachable",
         OFF_IGNORE},
        /* dispatch documents invalid_scenario for load_scenario with an unknown name */
        {0, "{\"type\":\"load_scenario\",\"scenario\":\"no_such_scenario\"}", "invalid_scenario", NULL, OFF_IGNORE},
    };

    g_section = "malformed input";
    if (!CHECK(session_open(&s, "{\"scenario\":\"connected_chat\"}"), "app_new(connected_chat) returned NULL")) return;
    {
        reply st = take_at(__LINE__, jcode_mobile_state(s.app), "connected_chat");
        jint(st.doc, "state.revision", &s.rev);
        reply_free(&st);
    }

    for (i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct bad_input *b = &table[i];
        char ctx[200];
        snprintf(ctx, sizeof ctx, "%s(%.60s)", b->is_event ? "platform_event" : "dispatch", b->input);
        o = b->offset;
        if (o == -3) {
            o = offset_of_byte(b->input, 0xff);
            if (o < 0) o = offset_of_byte(b->input, 0xc0);
            if (o < 0) o = offset_of_byte(b->input, 0xed);
            if (o < 0) o = offset_of_byte(b->input, 0xe2);
        }
        EXPECT_REJECTED(&s, b->is_event, b->input, b->code, b->field, o, 1, ctx);
    }

    /* too_deep: 100 000 nested arrays, and deep nesting inside a valid action. */
    deep = (char *)jmini_xmalloc(200001);
    memset(deep, '[', 100000);
    memset(deep + 100000, ']', 100000);
    deep[200000] = '\0';
    EXPECT_REJECTED(&s, 0, deep, "too_deep", NULL, OFF_IGNORE, 1, "dispatch(100 000 × [)");
    EXPECT_REJECTED(&s, 1, deep, "too_deep", NULL, OFF_IGNORE, 1, "platform_event(100 000 × [)");
    free(deep);
    deep = repeat("{\"type\":\"set_draft\",\"value\":", '[', 100000, "");
    EXPECT_REJECTED(&s, 0, deep, "too_deep", NULL, OFF_IGNORE, 1, "dispatch(set_draft with 100 000 unclosed [)");
    free(deep);
    {
        /* Exactly JCODE_MOBILE_MAX_DEPTH levels is fine (the top-level object
        ** plus MAX - 1 arrays in an ignored extra field); one more is not. */
        char *opening = repeat("{\"type\":\"set_draft\",\"value\":\"deep\",\"extra\":", '[',
                               JCODE_MOBILE_MAX_DEPTH - 1, "");
        char *json = repeat(opening, ']', JCODE_MOBILE_MAX_DEPTH - 1, "}");
        drop(DISPATCH(&s, json, CHANGES, "an action nested exactly JCODE_MOBILE_MAX_DEPTH deep"));
        free(json);
        free(opening);
        opening = repeat("", '[', JCODE_MOBILE_MAX_DEPTH + 1, "");
        json = repeat(opening, ']', JCODE_MOBILE_MAX_DEPTH + 1, "");
        EXPECT_REJECTED(&s, 0, json, "too_deep", NULL, OFF_IGNORE, 1, "JCODE_MOBILE_MAX_DEPTH + 1 nested arrays");
        free(json);
        free(opening);
    }

    /* too_large: a 64 MiB action; MAX + 1 bytes with no NUL at all (the library
    ** may read at most one byte past the limit: ASan/valgrind catch more). */
    big = repeat("{\"type\":\"set_draft\",\"value\":\"", 'a', (size_t)64 * 1024 * 1024, "\"}");
    EXPECT_REJECTED(&s, 0, big, "too_large", "action_json", OFF_IGNORE, 1, "dispatch(64 MiB)");
    EXPECT_REJECTED(&s, 1, big, "too_large", "event_json", OFF_IGNORE, 1, "platform_event(64 MiB)");
    free(big);
    big = (char *)jmini_xmalloc(max + 1);
    memset(big, ' ', max + 1); /* no terminator anywhere */
    expect_rejected_at(__LINE__, &s, 0, big, max + 1, "too_large", "action_json", OFF_IGNORE, 1,
                       "dispatch(MAX + 1 bytes, unterminated)");
    /* Exactly MAX bytes (whitespace-padded) is accepted. */
    memcpy(big, "{\"type\":\"dismiss_error\"}", 24);
    big[max] = '\0';
    drop(DISPATCH(&s, big, ANY_CHANGE, "dispatch(exactly JCODE_MOBILE_MAX_INPUT_BYTES)"));
    free(big);

    /* A valid input still works after all of that. */
    drop(DISPATCH(&s, "{\"type\":\"set_draft\",\"value\":\"still alive\"}", CHANGES, "valid action after bad input"));
    {
        reply st = GET_STATE(&s, "after bad input");
        EXPECT_STR(st.doc, "state.draft", "still alive", "after bad input");
        reply_free(&st);
    }
    {
        reply lg = GET_LOGS(&s, 1, "after bad input");
        long long next_seq = 0;
        jint(lg.doc, "next_seq", &next_seq);
        CHECK(next_seq - 1 == s.inputs, "logs: next_seq %lld, but %ld inputs were logged", next_seq, s.inputs);
        reply_free(&lg);
    }
    jcode_mobile_app_free(s.app);
}

static void test_bad_handles(void) {
    void *freed, *fresh;
    int local = 0;
    size_t i;
    void *garbage[4];
    char ctx[120];

    g_section = "bad handles";
    freed = jcode_mobile_app_new(NULL);
    if (!CHECK(freed != NULL, "app_new(NULL) returned NULL")) return;
    jcode_mobile_app_free(freed);
    fresh = jcode_mobile_app_new(NULL); /* a new app must not inherit the old handle */
    CHECK(fresh != NULL, "app_new(NULL) returned NULL");

    garbage[0] = freed;
    garbage[1] = (void *)(uintptr_t)0xdeadbeefu;
    garbage[2] = (void *)&local; /* a real pointer that is not a handle */
    garbage[3] = (void *)((uintptr_t)fresh + 1);
    for (i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        void *h = garbage[i];
        const char *what = i == 0 ? "freed" : i == 1 ? "0xdeadbeef" : i == 2 ? "&local" : "live handle + 1";
        snprintf(ctx, sizeof ctx, "dispatch(%s)", what);
        EXPECT_ERROR(jcode_mobile_dispatch(h, VALID_ACTION), "invalid_handle", NULL, OFF_IGNORE, 0, ctx);
        snprintf(ctx, sizeof ctx, "platform_event(%s)", what);
        EXPECT_ERROR(jcode_mobile_platform_event(h, VALID_EVENT), "invalid_handle", NULL, OFF_IGNORE, 0, ctx);
        snprintf(ctx, sizeof ctx, "state(%s)", what);
        EXPECT_ERROR(jcode_mobile_state(h), "invalid_handle", NULL, OFF_IGNORE, 0, ctx);
        snprintf(ctx, sizeof ctx, "tree(%s)", what);
        EXPECT_ERROR(jcode_mobile_tree(h), "invalid_handle", NULL, OFF_IGNORE, 0, ctx);
        snprintf(ctx, sizeof ctx, "logs(%s)", what);
        EXPECT_ERROR(jcode_mobile_logs(h, 0), "invalid_handle", NULL, OFF_IGNORE, 0, ctx);
        snprintf(ctx, sizeof ctx, "changes(%s)", what);
        EXPECT_ERROR(jcode_mobile_changes(h, 0), "invalid_handle", NULL, OFF_IGNORE, 0, ctx);
        snprintf(ctx, sizeof ctx, "tree_changes(%s)", what);
        EXPECT_ERROR(jcode_mobile_tree_changes(h, 0), "invalid_handle", NULL, OFF_IGNORE, 0, ctx);
        snprintf(ctx, sizeof ctx, "snapshot(%s)", what);
        EXPECT_ERROR(jcode_mobile_snapshot(h), "invalid_handle", NULL, OFF_IGNORE, 0, ctx);
        snprintf(ctx, sizeof ctx, "hit_test(%s)", what);
        EXPECT_ERROR(jcode_mobile_hit_test(h, 10, 10), "invalid_handle", NULL, OFF_IGNORE, 0, ctx);
        snprintf(ctx, sizeof ctx, "screenshot_svg(%s)", what);
        EXPECT_ERROR(jcode_mobile_screenshot_svg(h), "invalid_handle", NULL, OFF_IGNORE, 0, ctx);
        /* A bad handle and a NULL argument: either error is right, nothing else. */
        {
            reply r = TAKE(jcode_mobile_dispatch(h, NULL), ctx);
            const char *code = jstr(r.doc, "error.code");
            CHECK(code && (strcmp(code, "invalid_handle") == 0 || strcmp(code, "null_argument") == 0),
                  "dispatch(%s, NULL): expected invalid_handle or null_argument, got %.200s", what,
                  r.raw ? r.raw : "(null)");
            reply_free(&r);
        }
        jcode_mobile_app_free(h); /* freeing a non-handle or twice is harmless */
    }
    /* The live handle survived all of that. */
    if (fresh) {
        session s;
        reply st;
        memset(&s, 0, sizeof s);
        s.app = fresh;
        st = GET_STATE(&s, "live handle after bad-handle calls");
        EXPECT_STR(st.doc, "state.screen", "onboarding", "live handle after bad-handle calls");
        reply_free(&st);
        jcode_mobile_app_free(fresh);
        jcode_mobile_app_free(fresh); /* double free */
        EXPECT_ERROR(jcode_mobile_state(fresh), "invalid_handle", NULL, OFF_IGNORE, 0, "state(after double free)");
    }
}

/* Every function taking a handle, called with h: all must answer invalid_handle. */
static void expect_invalid_handle_everywhere_at(int line, void *h, const char *what) {
    char ctx[160];
    snprintf(ctx, sizeof ctx, "dispatch(%s)", what);
    expect_error_at(line, jcode_mobile_dispatch(h, VALID_ACTION), "invalid_handle", "app", OFF_IGNORE, 0, ctx);
    snprintf(ctx, sizeof ctx, "platform_event(%s)", what);
    expect_error_at(line, jcode_mobile_platform_event(h, VALID_EVENT), "invalid_handle", "app", OFF_IGNORE, 0, ctx);
    snprintf(ctx, sizeof ctx, "state(%s)", what);
    expect_error_at(line, jcode_mobile_state(h), "invalid_handle", "app", OFF_IGNORE, 0, ctx);
    snprintf(ctx, sizeof ctx, "tree(%s)", what);
    expect_error_at(line, jcode_mobile_tree(h), "invalid_handle", "app", OFF_IGNORE, 0, ctx);
    snprintf(ctx, sizeof ctx, "logs(%s)", what);
    expect_error_at(line, jcode_mobile_logs(h, 0), "invalid_handle", "app", OFF_IGNORE, 0, ctx);
    snprintf(ctx, sizeof ctx, "changes(%s)", what);
    expect_error_at(line, jcode_mobile_changes(h, 0), "invalid_handle", "app", OFF_IGNORE, 0, ctx);
    snprintf(ctx, sizeof ctx, "tree_changes(%s)", what);
    expect_error_at(line, jcode_mobile_tree_changes(h, 0), "invalid_handle", "app", OFF_IGNORE, 0, ctx);
    snprintf(ctx, sizeof ctx, "snapshot(%s)", what);
    expect_error_at(line, jcode_mobile_snapshot(h), "invalid_handle", "app", OFF_IGNORE, 0, ctx);
    snprintf(ctx, sizeof ctx, "hit_test(%s)", what);
    expect_error_at(line, jcode_mobile_hit_test(h, 10, 10), "invalid_handle", "app", OFF_IGNORE, 0, ctx);
    snprintf(ctx, sizeof ctx, "screenshot_svg(%s)", what);
    expect_error_at(line, jcode_mobile_screenshot_svg(h), "invalid_handle", "app", OFF_IGNORE, 0, ctx);
}

#define EXPECT_INVALID_HANDLE_EVERYWHERE(h, what) expect_invalid_handle_everywhere_at(__LINE__, (h), (what))

static int cmp_uintptr(const void *a, const void *b) {
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* The handle rules of include/jcode_mobile.h: an integer near a live handle
** is not a handle (any two handles are at least 4096 apart), a freed handle
** stays dead, and no handle value is ever issued twice in the process.
** (Handles of another copy of the library: harness/c/two_copies.c.) */
static void test_handles_are_unforgeable(void) {
    enum { APPS = 1000 };
    static uintptr_t seen[2 * APPS];
    void *live, *freed;
    reply st;
    session s;
    size_t i, n = 0, repeats = 0, too_close = 0;

    g_section = "handles are unforgeable";
    live = jcode_mobile_app_new(NULL);
    if (!CHECK(live != NULL, "app_new(NULL) returned NULL")) return;
    /* Before any other app exists: neither a neighbour nor the next stride is a handle. */
    EXPECT_INVALID_HANDLE_EVERYWHERE((void *)((uintptr_t)live + 1), "live + 1");
    EXPECT_INVALID_HANDLE_EVERYWHERE((void *)((uintptr_t)live - 1), "live - 1");
    EXPECT_INVALID_HANDLE_EVERYWHERE((void *)((uintptr_t)live + 16), "live + 16");
    EXPECT_INVALID_HANDLE_EVERYWHERE((void *)((uintptr_t)live - 16), "live - 16");
    EXPECT_INVALID_HANDLE_EVERYWHERE((void *)((uintptr_t)live + 4095), "live + 4095");
    EXPECT_INVALID_HANDLE_EVERYWHERE((void *)((uintptr_t)live + 4096), "live + 4096");

    freed = jcode_mobile_app_new(NULL);
    if (!CHECK(freed != NULL, "app_new(NULL) returned NULL")) {
        jcode_mobile_app_free(live);
        return;
    }
    jcode_mobile_app_free(freed);
    EXPECT_INVALID_HANDLE_EVERYWHERE(freed, "a freed handle");

    /* 1000 apps each freed before the next is made (where an allocator would
    ** hand the same slot back), then 1000 alive at once. */
    seen[n++] = (uintptr_t)live;
    seen[n++] = (uintptr_t)freed;
    for (i = 0; i < APPS - 1; i++) {
        void *h = jcode_mobile_app_new(NULL);
        if (!CHECK(h != NULL, "app_new(NULL) #%lu returned NULL", (unsigned long)i)) break;
        seen[n++] = (uintptr_t)h;
        jcode_mobile_app_free(h);
    }
    {
        static void *batch[APPS];
        size_t made = 0;
        for (i = 0; i < APPS - 1; i++) {
            batch[made] = jcode_mobile_app_new(NULL);
            if (!CHECK(batch[made] != NULL, "app_new(NULL) #%lu of the batch returned NULL", (unsigned long)i)) break;
            seen[n++] = (uintptr_t)batch[made++];
        }
        for (i = 0; i < made; i++) jcode_mobile_app_free(batch[i]);
        if (made > 0) EXPECT_INVALID_HANDLE_EVERYWHERE(batch[made / 2], "a handle of the freed batch");
    }
    CHECK(n == 2 * APPS, "%lu handles were issued, expected 2000", (unsigned long)n);
    qsort(seen, n, sizeof seen[0], cmp_uintptr);
    for (i = 1; i < n; i++) {
        if (seen[i] == seen[i - 1]) repeats++;
        else if (seen[i] - seen[i - 1] < 4096) too_close++;
    }
    CHECK(repeats == 0, "%lu of %lu handles repeat an earlier one", (unsigned long)repeats, (unsigned long)n);
    CHECK(too_close == 0, "%lu pairs of handles are less than 4096 apart", (unsigned long)too_close);

    /* The first handle lived through all of it. */
    memset(&s, 0, sizeof s);
    s.app = live;
    st = GET_STATE(&s, "the first handle after 2000 others came and went");
    EXPECT_STR(st.doc, "state.screen", "onboarding", "the first handle after 2000 others came and went");
    reply_free(&st);
    jcode_mobile_app_free(live);
    EXPECT_INVALID_HANDLE_EVERYWHERE(live, "the first handle, freed");
}

static void expect_new_fails_at(int line, const char *opts, size_t len, const char *code, const char *field,
                                long long offset, const char *ctx) {
    void *h = jcode_mobile_app_new(opts);
    if (!check_at(line, h == NULL, "%s: app_new succeeded, expected %s", ctx, code)) {
        jcode_mobile_app_free(h);
        return;
    }
    expect_error_at(line, jcode_mobile_last_error(), code, field, offset, len, ctx);
    /* Reading it again gives the same answer. */
    expect_error_at(line, jcode_mobile_last_error(), code, field, offset, len, ctx);
}

#define EXPECT_NEW_FAILS(opts, code, field, offset, ctx) \
    expect_new_fails_at(__LINE__, (opts), strlen(opts), (code), (field), (offset), (ctx))

static void test_app_new(void) {
    static const char *const scenarios[] = {
        "onboarding",           "pairing_ready",          "connected_chat",         "pairing_invalid_code",
        "server_unreachable",   "connected_empty_chat",   "chat_streaming",         "tool_approval_required",
        "tool_failed",          "network_reconnect",      "offline_queued_message", "long_running_task",
        "stdin_request_pending", "model_switch_failed",   "push_tool_approval_opened",
    };
    size_t i;
    char *big, *deep, *le;
    char opts[160];
    session s;
    reply st, tr, lg;

    g_section = "app_new";
    EXPECT_NEW_FAILS("{\"scenario\":", "invalid_json", NULL, OFF_ANY, "app_new(invalid JSON)");
    EXPECT_NEW_FAILS("{\"scenario\":\"no_such_scenario\"}", "invalid_scenario", NULL, OFF_IGNORE,
                     "app_new(unknown scenario)");
    EXPECT_NEW_FAILS("{\"log_capacity\":\"big\"}", "invalid_field", "log_capacity", OFF_IGNORE,
                     "app_new(log_capacity: string)");
    EXPECT_NEW_FAILS("{\"scenario\":42}", "invalid_field", "scenario", OFF_IGNORE, "app_new(scenario: 42)");
    EXPECT_NEW_FAILS("{\"log_capacity\":0}", "invalid_field", "log_capacity", OFF_IGNORE, "app_new(log_capacity: 0)");
    EXPECT_NEW_FAILS("{\"viewport\":\"big\"}", "invalid_field", NULL, OFF_IGNORE, "app_new(viewport: string)");
    EXPECT_NEW_FAILS("[]", "invalid_scenario", NULL, OFF_IGNORE, "app_new([])");
    EXPECT_NEW_FAILS("{\"no_such_option\":1}", "invalid_scenario", NULL, OFF_IGNORE, "app_new(unknown option)");
    EXPECT_NEW_FAILS("{\"snapshot\":{}}", "invalid_snapshot", "snapshot.version", OFF_IGNORE,
                     "app_new(snapshot without version)");
    EXPECT_NEW_FAILS("{\"snapshot\":[1]}", "invalid_snapshot", "snapshot", OFF_IGNORE, "app_new(snapshot: array)");
    EXPECT_NEW_FAILS("{\"snapshot\":{\"version\":\"1\"}}", "invalid_snapshot", "snapshot.version", OFF_IGNORE,
                     "app_new(snapshot version: string)");
    EXPECT_NEW_FAILS("{\"snapshot\":{\"version\":2}}", "unsupported_snapshot", "snapshot.version", OFF_IGNORE,
                     "app_new(snapshot version 2)");
    EXPECT_NEW_FAILS("{\"scenario\":\"connected_chat\",\"snapshot\":{\"version\":1}}", "invalid_scenario",
                     "snapshot", OFF_IGNORE, "app_new(scenario and snapshot)");
    EXPECT_NEW_FAILS("{\"scenario\":\"\xff\"}", "invalid_utf8", NULL, 13, "app_new(invalid UTF-8)");
    deep = repeat("", '[', 100000, "");
    EXPECT_NEW_FAILS(deep, "too_deep", NULL, OFF_IGNORE, "app_new(100 000 × [)");
    free(deep);
    big = repeat("{\"device_name\":\"", 'a', (size_t)64 * 1024 * 1024, "\"}");
    EXPECT_NEW_FAILS(big, "too_large", NULL, OFF_IGNORE, "app_new(64 MiB)");
    free(big);
    big = (char *)jmini_xmalloc((size_t)JCODE_MOBILE_MAX_INPUT_BYTES + 1);
    memset(big, ' ', (size_t)JCODE_MOBILE_MAX_INPUT_BYTES + 1); /* unterminated */
    expect_new_fails_at(__LINE__, big, (size_t)JCODE_MOBILE_MAX_INPUT_BYTES + 1, "too_large", NULL, OFF_IGNORE,
                        "app_new(MAX + 1 bytes, unterminated)");
    free(big);

    /* A success clears the thread's last error. */
    if (CHECK(session_open(&s, "{}"), "app_new({}) returned NULL")) {
        reply r;
        le = jcode_mobile_last_error();
        r = TAKE(le, "last_error after success");
        CHECK(jtrue(r.doc, "ok") && r.doc->n == 1, "last_error after a success: %s", r.raw ? r.raw : "(null)");
        reply_free(&r);
        jcode_mobile_app_free(s.app);
    }

    /* Every named fixture of SPEC section 4 loads and renders. */
    for (i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
        snprintf(opts, sizeof opts, "{\"scenario\":\"%s\"}", scenarios[i]);
        if (!CHECK(session_open(&s, opts), "app_new(%s) returned NULL", opts)) continue;
        st = take_at(__LINE__, jcode_mobile_state(s.app), opts);
        jint(st.doc, "state.revision", &s.rev);
        CHECK(jtrue(st.doc, "ok") && jstr(st.doc, "state.screen") != NULL, "%s: state has no screen", opts);
        reply_free(&st);
        tr = GET_TREE(&s, opts);
        VALIDATE_TREE(tr.doc, opts);
        reply_free(&tr);
        lg = GET_LOGS(&s, 0, opts);
        reply_free(&lg);
        EXPECT_NO_SECRETS(&s, opts);
        jcode_mobile_app_free(s.app);
    }

    /* Options. */
    if (CHECK(session_open(&s, "{\"log_capacity\":5,\"viewport\":{\"width\":320,\"height\":568},"
                               "\"device_id\":\"dev-harness-1\",\"device_name\":\"Pocket\"}"),
              "app_new(options) returned NULL")) {
        st = GET_STATE(&s, "options");
        EXPECT_STR(st.doc, "state.lifecycle.device_id", "dev-harness-1", "options");
        EXPECT_STR(st.doc, "state.pairing.device_name", "Pocket", "options");
        reply_free(&st);
        tr = GET_TREE(&s, "options");
        EXPECT_INT(tr.doc, "tree.bounds.width", 320, "options: viewport");
        EXPECT_INT(tr.doc, "tree.bounds.height", 568, "options: viewport");
        reply_free(&tr);
        for (i = 0; i < 7; i++) {
            char v[16];
            snprintf(v, sizeof v, "d%lu", (unsigned long)i);
            drop(DISPATCH_VALUE(&s, "set_draft", v, CHANGES));
        }
        lg = GET_LOGS(&s, 0, "options");
        EXPECT_INT(lg.doc, "capacity", 5, "options: log_capacity");
        EXPECT_INT(lg.doc, "next_seq", 8, "options: log_capacity");
        EXPECT_LEN(lg.doc, "entries", 5, "options: log_capacity");
        EXPECT_INT(lg.doc, "entries[0].seq", 3, "options: log_capacity");
        reply_free(&lg);
        /* load_scenario replaces the state. */
        drop(DISPATCH(&s, "{\"type\":\"load_scenario\",\"scenario\":\"connected_chat\"}", ANY_CHANGE, "load_scenario"));
        st = GET_STATE(&s, "load_scenario");
        EXPECT_STR(st.doc, "state.screen", "chat", "load_scenario");
        reply_free(&st);
        jcode_mobile_app_free(s.app);
    }
}

/* ================================================================ snapshot */

/* The "snapshot" member of a jcode_mobile_snapshot answer, as the library wrote it
** ({"ok":true,"snapshot":…}); NULL when the answer has another shape. Owned by the caller. */
/* ================================================================ tree changes */

/* jcode_mobile_tree_changes(app, since): {ok, revision, since, ops} or a resync. */
static reply tree_changes_at(int line, session *s, uint64_t since, const char *ctx) {
    reply r = take_at(line, jcode_mobile_tree_changes(s->app, since), ctx);
    if (r.doc && check_at(line, jtrue(r.doc, "ok"), "%s: not ok: %.300s", ctx, r.raw)) {
        expect_int_at(line, r.doc, "revision", s->rev, ctx);
        expect_int_at(line, r.doc, "since", (long long)since, ctx);
    }
    return r;
}

#define TREE_CHANGES(s, since, ctx) tree_changes_at(__LINE__, (s), (since), (ctx))

static void test_tree_changes(void) {
    session s;
    reply r, st;
    long long built;
    char id[64], want[96];
    void *sub;
    const char *got;

    g_section = "tree changes";
    if (!CHECK(session_open(&s, "{\"scenario\":\"connected_empty_chat\"}"), "app_new(connected_empty_chat) returned NULL"))
        return;

    /* Bad handles: NULL, a subscription (not an app), a freed app (test_bad_handles has more). */
    EXPECT_ERROR(jcode_mobile_tree_changes(NULL, 0), "null_argument", "app", OFF_IGNORE, 0, "tree_changes(NULL)");
    sub = jcode_mobile_subscribe(s.app, NULL);
    if (CHECK(sub != NULL, "subscribe(app, NULL) returned NULL")) {
        EXPECT_ERROR(jcode_mobile_tree_changes(sub, 0), "invalid_handle", "app", OFF_IGNORE, 0,
                     "tree_changes(a subscription handle)");
        jcode_mobile_unsubscribe(sub);
    }
    {
        void *freed = jcode_mobile_app_new(NULL);
        jcode_mobile_app_free(freed);
        EXPECT_ERROR(jcode_mobile_tree_changes(freed, 0), "invalid_handle", "app", OFF_IGNORE, 0,
                     "tree_changes(a freed app)");
    }

    /* The tree of revision 0 is handed out; its revision gets no operations. */
    drop(GET_TREE(&s, "tree at revision 0"));
    r = TREE_CHANGES(&s, 0, "tree_changes(the current revision)");
    EXPECT_LEN(r.doc, "ops", 0, "tree_changes(the current revision)");
    CHECK(jget(r.doc, "resync") == NULL, "tree_changes(the current revision) should not resync: %.200s", r.raw);
    reply_free(&r);

    /* A revision from the future is refused, naming since_revision (beyond INT64_MAX too). */
    EXPECT_ERROR(jcode_mobile_tree_changes(s.app, (uint64_t)s.rev + 1), "invalid_field", "since_revision", OFF_IGNORE,
                 0, "tree_changes(revision + 1)");
    EXPECT_ERROR(jcode_mobile_tree_changes(s.app, UINT64_MAX), "invalid_field", "since_revision", OFF_IGNORE, 0,
                 "tree_changes(UINT64_MAX)");

    /* Two drafts: revision 1's tree is never built, so it is not a revision the app can start from. */
    drop(DISPATCH_VALUE(&s, "set_draft", "Run", CHANGES));
    drop(DISPATCH_VALUE(&s, "set_draft", "Run the tests", CHANGES));
    r = TREE_CHANGES(&s, 1, "tree_changes(a revision never handed out)");
    CHECK(jtrue(r.doc, "resync") && jget(r.doc, "tree") && jget(r.doc, "tree")->kind == JOBJ && !jget(r.doc, "ops"),
          "tree_changes(a revision never handed out) should resync with the whole tree: %.200s", r.raw);
    EXPECT_STR(r.doc, "tree.id", "root", "tree_changes(resync)");
    reply_free(&r);
    /* From revision 0 (handed out): the draft field's value, set. */
    r = TREE_CHANGES(&s, 0, "tree_changes(0) after two drafts");
    {
        const jv *ops = jget(r.doc, "ops");
        size_t i;
        int found = 0;
        for (i = 0; ops && ops->kind == JARR && i < ops->n; i++) {
            const char *op = jstr(ops->items[i], "op"), *node = jstr(ops->items[i], "id");
            const char *value = jstr(ops->items[i], "set.value");
            if (op && node && value && strcmp(op, "update") == 0 && strcmp(node, "chat.draft") == 0 &&
                strcmp(value, "Run the tests") == 0)
                found = 1;
        }
        CHECK(found, "tree_changes(0): no update setting chat.draft's value to \"Run the tests\": %.400s", r.raw);
    }
    reply_free(&r);

    /* One streamed delta is an append to the streaming message's text… */
    drop(DISPATCH(&s, "{\"type\":\"send_message\"}", CHANGES, "send_message"));
    drop(EVENT(&s, "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}", CHANGES,
               "text_delta Hel"));
    drop(TREE_CHANGES(&s, 2, "tree_changes(2) after the first delta"));
    built = s.rev;
    drop(EVENT(&s, "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"lo \\u00e9\"}}",
               CHANGES, "text_delta lo é"));
    st = GET_STATE(&s, "the streaming message");
    got = jstr(st.doc, "state.transcript[-1].id");
    snprintf(id, sizeof id, "%s", got ? got : "?");
    reply_free(&st);
    snprintf(want, sizeof want, "message.%s", id);
    r = TREE_CHANGES(&s, (uint64_t)built, "tree_changes after one delta");
    EXPECT_STR(r.doc, "ops[0].op", "append", "one delta");
    EXPECT_STR(r.doc, "ops[0].id", want, "one delta");
    EXPECT_STR(r.doc, "ops[0].field", "value", "one delta");
    EXPECT_STR(r.doc, "ops[0].text", "lo \xc3\xa9", "one delta");
    /* …and to its markdown's last block, the paragraph it grows (value and accessibility value). */
    snprintf(want, sizeof want, "message.%s.md.0", id);
    EXPECT_STR(r.doc, "ops[1].op", "append", "one delta");
    EXPECT_STR(r.doc, "ops[1].id", want, "one delta");
    EXPECT_STR(r.doc, "ops[1].field", "value", "one delta");
    EXPECT_STR(r.doc, "ops[1].text", "lo \xc3\xa9", "one delta");
    CHECK(jlen(r.doc, "ops") <= 3, "one delta: the message's value, its block's value and accessibility value: %.300s",
          r.raw);
    CHECK(r.raw && strlen(r.raw) < 512, "one delta: the answer is %lu bytes", (unsigned long)(r.raw ? strlen(r.raw) : 0));
    reply_free(&r);
    jcode_mobile_app_free(s.app);
}

static char *snapshot_member(const char *raw) {
    static const char prefix[] = "{\"ok\":true,\"snapshot\":";
    size_t n;
    char *out;
    if (!raw || strncmp(raw, prefix, sizeof prefix - 1) != 0) return NULL;
    n = strlen(raw) - (sizeof prefix - 1);
    if (n < 2 || raw[strlen(raw) - 1] != '}') return NULL;
    out = (char *)jmini_xmalloc(n);
    memcpy(out, raw + sizeof prefix - 1, n - 1);
    out[n - 1] = '\0';
    return out;
}

/* ================================================================ hit-testing and screenshots */

static void test_hit_test_and_screenshot(void) {
    session s;
    reply r;
    g_section = "hit_test";
    if (!CHECK(session_open(&s, "{\"scenario\":\"connected_chat\"}"), "app_new(connected_chat) returned NULL")) return;

    /* The Send button (an arrow icon) at the right end of the composer, at the bottom of a 390 x 844 screen. */
    r = TAKE(jcode_mobile_hit_test(s.app, 350, 780), "hit_test(350, 780)");
    CHECK(jtrue(r.doc, "ok"), "hit_test(350, 780): not ok: %.200s", r.raw ? r.raw : "(null)");
    EXPECT_STR(r.doc, "node.id", "chat.send", "hit_test(350, 780)");
    EXPECT_STR(r.doc, "node.role", "button", "hit_test(350, 780)");
    EXPECT_STR(r.doc, "path[0]", "root", "hit_test(350, 780)");
    EXPECT_STR(r.doc, "path[1]", "chat.composer", "hit_test(350, 780)");
    EXPECT_STR(r.doc, "path[2]", "chat.send", "hit_test(350, 780)");
    EXPECT_STR(r.doc, "tap_target", "chat.send", "hit_test(350, 780)");
    reply_free(&r);

    /* Outside the viewport: no node, an empty path. */
    r = TAKE(jcode_mobile_hit_test(s.app, 391, 10), "hit_test(391, 10)");
    CHECK(jtrue(r.doc, "ok") && jget(r.doc, "node") && jget(r.doc, "node")->kind == JNULL,
          "hit_test(391, 10): node should be null: %.200s", r.raw ? r.raw : "(null)");
    CHECK(jlen(r.doc, "path") == 0, "hit_test(391, 10): path should be empty");
    reply_free(&r);

    /* A coordinate that is not a finite number is refused, naming it. */
    EXPECT_ERROR(jcode_mobile_hit_test(s.app, 0.0 / 0.0, 10), "invalid_field", "x", OFF_IGNORE, 0, "hit_test(NaN, 10)");
    EXPECT_ERROR(jcode_mobile_hit_test(s.app, 10, 1e308 * 10), "invalid_field", "y", OFF_IGNORE, 0, "hit_test(10, inf)");

    /* tap_xy taps what is there: the Settings button of the header (below the 47-point safe area). */
    drop(TAKE(jcode_mobile_dispatch(s.app, "{\"type\":\"tap_xy\",\"x\":350,\"y\":120}"), "tap_xy(350, 120)"));
    r = TAKE(jcode_mobile_state(s.app), "state after tap_xy");
    EXPECT_STR(r.doc, "state.screen", "settings", "tap_xy(350, 120) opens settings");
    reply_free(&r);

    g_section = "screenshot";
    r = TAKE(jcode_mobile_screenshot_svg(s.app), "screenshot_svg(settings)");
    CHECK(jtrue(r.doc, "ok"), "screenshot_svg: not ok: %.200s", r.raw ? r.raw : "(null)");
    EXPECT_STR(r.doc, "format", "svg", "screenshot_svg");
    EXPECT_INT(r.doc, "width", 390, "screenshot_svg");
    EXPECT_INT(r.doc, "height", 844, "screenshot_svg");
    {
        const char *svg = jstr(r.doc, "svg");
        CHECK(svg && strncmp(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\"", 39) == 0, "screenshot_svg: not an SVG document");
        CHECK(svg && strstr(svg, "</svg>") != NULL, "screenshot_svg: the document is not closed");
        CHECK(svg && strstr(svg, "data-role=\"screen\"") != NULL, "screenshot_svg: the screen's group is missing");
    }
    reply_free(&r);
    jcode_mobile_app_free(s.app);
}

static void test_snapshot(void) {
    session s, back;
    reply r, again, st;
    char *member = NULL, *opts;
    void *freed;

    g_section = "snapshot";
    EXPECT_ERROR(jcode_mobile_snapshot(NULL), "null_argument", "app", OFF_IGNORE, 0, "snapshot(NULL)");
    freed = jcode_mobile_app_new(NULL);
    if (CHECK(freed != NULL, "app_new(NULL) returned NULL")) {
        jcode_mobile_app_free(freed);
        EXPECT_ERROR(jcode_mobile_snapshot(freed), "invalid_handle", NULL, OFF_IGNORE, 0, "snapshot(freed)");
    }

    /* A first launch: version 1, no identity yet, nothing saved. */
    if (CHECK(session_open(&s, NULL), "app_new(NULL) returned NULL")) {
        r = TAKE(jcode_mobile_snapshot(s.app), "snapshot(first launch)");
        CHECK(jtrue(r.doc, "ok"), "snapshot(first launch): not ok: %.200s", r.raw ? r.raw : "(null)");
        EXPECT_INT(r.doc, "snapshot.version", 1, "snapshot(first launch)");
        EXPECT_NULL(r.doc, "snapshot.device.device_id", "snapshot(first launch)");
        EXPECT_LEN(r.doc, "snapshot.servers", 0, "snapshot(first launch)");
        EXPECT_NULL(r.doc, "snapshot.selected_server_id", "snapshot(first launch)");
        EXPECT_STR(r.doc, "snapshot.composer.draft", "", "snapshot(first launch)");
        EXPECT_LEN(r.doc, "snapshot.outbox.messages", 0, "snapshot(first launch)");
        reply_free(&r);
        jcode_mobile_app_free(s.app);
    }

    /* A connected app with a draft: the round trip gives the same snapshot, byte for byte. */
    if (!CHECK(session_open(&s, "{\"scenario\":\"connected_chat\"}"), "app_new(connected_chat) returned NULL")) return;
    drop(DISPATCH_VALUE(&s, "set_draft", "half a thought \xc3\xa9", CHANGES));
    r = TAKE(jcode_mobile_snapshot(s.app), "snapshot(connected_chat)");
    CHECK(jtrue(r.doc, "ok"), "snapshot(connected_chat): not ok: %.200s", r.raw ? r.raw : "(null)");
    EXPECT_INT(r.doc, "snapshot.version", 1, "snapshot(connected_chat)");
    EXPECT_LEN(r.doc, "snapshot.servers", 1, "snapshot(connected_chat)");
    EXPECT_STR(r.doc, "snapshot.servers[0].host", "devbox.local", "snapshot(connected_chat)");
    EXPECT_NONEMPTY(r.doc, "snapshot.servers[0].last_session_id", "snapshot(connected_chat)");
    EXPECT_NONEMPTY(r.doc, "snapshot.selected_server_id", "snapshot(connected_chat)");
    EXPECT_STR(r.doc, "snapshot.composer.draft", "half a thought \xc3\xa9", "snapshot(connected_chat)");
    /* Asking twice changes nothing. */
    again = TAKE(jcode_mobile_snapshot(s.app), "snapshot(connected_chat) again");
    CHECK(r.raw && again.raw && strcmp(r.raw, again.raw) == 0, "snapshot twice: the answers differ");
    reply_free(&again);
    member = snapshot_member(r.raw);
    if (CHECK(member != NULL, "snapshot: not {\"ok\":true,\"snapshot\":…}: %.200s", r.raw ? r.raw : "(null)")) {
        sbuf b = {NULL, 0, 0};
        sb_puts(&b, "{\"snapshot\":");
        sb_puts(&b, member);
        sb_puts(&b, "}");
        opts = sb_take(&b);
        if (CHECK(session_open(&back, opts), "app_new({snapshot}) returned NULL: %.300s", opts)) {
            again = TAKE(jcode_mobile_snapshot(back.app), "snapshot(restored)");
            CHECK(r.raw && again.raw && strcmp(r.raw, again.raw) == 0,
                  "round trip: the restored app's snapshot differs:\n  saved:    %.400s\n  restored: %.400s",
                  r.raw ? r.raw : "(null)", again.raw ? again.raw : "(null)");
            reply_free(&again);
            /* The restored app shows the chat and connects once in front. */
            st = GET_STATE(&back, "restored");
            EXPECT_STR(st.doc, "state.screen", "chat", "restored");
            EXPECT_STR(st.doc, "state.connection.phase", "connecting", "restored");
            EXPECT_STR(st.doc, "state.draft", "half a thought \xc3\xa9", "restored");
            reply_free(&st);
            again = EVENT(&back, "{\"type\":\"app_foreground\"}", ANY_CHANGE, "app_foreground after restore");
            EXPECT_STR(find_effect(again.doc, "secure_store_read", 0), "key", "jcode.token.devbox.local:7643",
                       "app_foreground after restore");
            reply_free(&again);
            jcode_mobile_app_free(back.app);
        }
        free(opts);
    }
    free(member);
    reply_free(&r);
    jcode_mobile_app_free(s.app);
}

/* ================================================================ 5. threads */

#define THREAD_CALLS 2000
#define SHARED_THREADS 4
#define OWN_THREADS 4

typedef struct {
    void *app;
    int tid;
    long dispatches;
    long failures;
    long long last_rev;
    char first_failure[640];
} worker;

static JMINI_PRINTF_LIKE(2, 3) void worker_fail(worker *w, const char *fmt, ...) {
    va_list ap;
    if (w->failures++ == 0) {
        va_start(ap, fmt);
        vsnprintf(w->first_failure, sizeof w->first_failure, fmt, ap);
        va_end(ap);
    }
}

static void *worker_main(void *arg) {
    worker *w = (worker *)arg;
    int i;
    char json[96], why[512];
    for (i = 0; i < THREAD_CALLS; i++) {
        reply r;
        char *raw;
        int kind = i % 3;
        long long rev = 0;
        if (kind == 0) {
            snprintf(json, sizeof json, "{\"type\":\"set_draft\",\"value\":\"t%d-%d\"}", w->tid, i);
            raw = jcode_mobile_dispatch(w->app, json);
            w->dispatches++;
        } else if (kind == 1) {
            raw = jcode_mobile_state(w->app);
        } else {
            raw = jcode_mobile_tree(w->app);
        }
        if (!reply_parse(raw, &r, why, sizeof why)) {
            worker_fail(w, "call %d: %s", i, why);
        } else if (!jtrue(r.doc, "ok")) {
            worker_fail(w, "call %d failed: %.300s", i, r.raw);
        } else if (!jint(r.doc, kind == 1 ? "state.revision" : "revision", &rev)) {
            worker_fail(w, "call %d: no revision", i);
        } else {
            /* Calls on one handle are serialised: this thread's own set_draft
            ** always lands after everything it saw before. */
            if (kind == 0 ? rev <= w->last_rev : rev < w->last_rev)
                worker_fail(w, "call %d: revision %lld after %lld", i, rev, w->last_rev);
            w->last_rev = rev;
        }
        reply_free(&r);
    }
    return NULL;
}

typedef struct {
    long failures;
    char first_failure[640];
} churner;

/* Creates, uses and frees handles, and checks that the last error is per thread. */
static void *churn_main(void *arg) {
    churner *c = (churner *)arg;
    int i;
    char why[512];
    for (i = 0; i < 200; i++) {
        void *h = jcode_mobile_app_new(i % 2 ? NULL : "{\"scenario\":\"connected_chat\"}");
        reply r;
        const char *code;
        if (!h) {
            if (c->failures++ == 0) snprintf(c->first_failure, sizeof c->first_failure, "app_new returned NULL");
            continue;
        }
        if (!reply_parse(jcode_mobile_dispatch(h, VALID_ACTION), &r, why, sizeof why) || !jtrue(r.doc, "ok")) {
            if (c->failures++ == 0) snprintf(c->first_failure, sizeof c->first_failure, "dispatch: %.300s", why);
        }
        reply_free(&r);
        jcode_mobile_app_free(h);
        reply_parse(jcode_mobile_state(h), &r, why, sizeof why);
        code = jstr(r.doc, "error.code");
        if (!code || strcmp(code, "invalid_handle") != 0) {
            if (c->failures++ == 0)
                snprintf(c->first_failure, sizeof c->first_failure, "state(freed): %.300s", r.raw ? r.raw : "(null)");
        }
        reply_free(&r);
        /* The last error belongs to this thread. */
        h = jcode_mobile_app_new("{\"scenario\":\"no_such_scenario\"}");
        jcode_mobile_app_free(h);
        reply_parse(jcode_mobile_last_error(), &r, why, sizeof why);
        code = jstr(r.doc, "error.code");
        if (h || !code || strcmp(code, "invalid_scenario") != 0) {
            if (c->failures++ == 0)
                snprintf(c->first_failure, sizeof c->first_failure, "last_error: %.300s", r.raw ? r.raw : "(null)");
        }
        reply_free(&r);
    }
    return NULL;
}

typedef struct {
    void *app;
    long calls, invalid, failures;
    long ok_before_free; /* read by the main thread under g_race_lock */
    char first_failure[640];
} racer;

static pthread_mutex_t g_race_lock = PTHREAD_MUTEX_INITIALIZER;

static long racer_progress(racer *r) {
    long n;
    pthread_mutex_lock(&g_race_lock);
    n = r->ok_before_free;
    pthread_mutex_unlock(&g_race_lock);
    return n;
}

/* Uses a handle until it has been freed under it: every answer must be ok
** (before) or invalid_handle (after), never a crash, never ok again. */
static void *racer_main(void *arg) {
    racer *r = (racer *)arg;
    char why[512];
    long i;
    for (i = 0; i < 20000000L && r->invalid < 50; i++) {
        reply rep;
        const char *code;
        char *raw = i % 2 ? jcode_mobile_state(r->app) : jcode_mobile_dispatch(r->app, VALID_ACTION);
        r->calls++;
        if (!reply_parse(raw, &rep, why, sizeof why)) {
            if (r->failures++ == 0) snprintf(r->first_failure, sizeof r->first_failure, "%s", why);
        } else if (jtrue(rep.doc, "ok")) {
            if (r->invalid) {
                if (r->failures++ == 0) snprintf(r->first_failure, sizeof r->first_failure, "ok after invalid_handle");
            } else {
                pthread_mutex_lock(&g_race_lock);
                r->ok_before_free++;
                pthread_mutex_unlock(&g_race_lock);
            }
        } else {
            code = jstr(rep.doc, "error.code");
            if (code && strcmp(code, "invalid_handle") == 0)
                r->invalid++;
            else if (r->failures++ == 0)
                snprintf(r->first_failure, sizeof r->first_failure, "unexpected: %.300s", rep.raw);
        }
        reply_free(&rep);
    }
    return NULL;
}

static void test_threads(void) {
    worker workers[SHARED_THREADS + OWN_THREADS];
    pthread_t threads[SHARED_THREADS + OWN_THREADS + 1];
    churner churn;
    racer racers[2];
    pthread_t racer_threads[2];
    void *shared;
    long total = 0;
    int i, started[SHARED_THREADS + OWN_THREADS + 1];
    session s;
    reply st, lg;
    long long next_seq = 0;
    struct timespec pause = {0, 1000 * 1000};

    g_section = "threads";
    shared = jcode_mobile_app_new(NULL);
    if (!CHECK(shared != NULL, "app_new(NULL) returned NULL")) return;
    memset(workers, 0, sizeof workers);
    memset(&churn, 0, sizeof churn);
    for (i = 0; i < SHARED_THREADS + OWN_THREADS; i++) {
        workers[i].tid = i;
        workers[i].last_rev = -1;
        workers[i].app = i < SHARED_THREADS ? shared : jcode_mobile_app_new(NULL);
        CHECK(workers[i].app != NULL, "app_new for worker %d returned NULL", i);
    }
    for (i = 0; i < SHARED_THREADS + OWN_THREADS; i++)
        started[i] = workers[i].app && pthread_create(&threads[i], NULL, worker_main, &workers[i]) == 0;
    started[SHARED_THREADS + OWN_THREADS] =
        pthread_create(&threads[SHARED_THREADS + OWN_THREADS], NULL, churn_main, &churn) == 0;
    for (i = 0; i <= SHARED_THREADS + OWN_THREADS; i++) {
        CHECK(started[i], "pthread_create failed for thread %d", i);
        if (started[i]) pthread_join(threads[i], NULL);
    }

    for (i = 0; i < SHARED_THREADS + OWN_THREADS; i++) {
        CHECK(workers[i].failures == 0, "worker %d (%s handle): %ld bad replies; first: %s", i,
              i < SHARED_THREADS ? "shared" : "own", workers[i].failures, workers[i].first_failure);
        if (i < SHARED_THREADS) total += workers[i].dispatches;
    }
    CHECK(churn.failures == 0, "churn thread: %ld failures; first: %s", churn.failures, churn.first_failure);

    /* The shared handle: every dispatch is accounted for. */
    memset(&s, 0, sizeof s);
    s.app = shared;
    s.rev = total; /* every set_draft had a new value */
    st = GET_STATE(&s, "shared handle after threads");
    {
        const char *draft = jstr(st.doc, "state.draft");
        CHECK(draft && draft[0] == 't' && strchr(draft, '-') != NULL, "shared: final draft %s is not a worker's",
              draft ? draft : "(missing)");
    }
    reply_free(&st);
    lg = GET_LOGS(&s, 0, "shared handle after threads");
    if (CHECK(jint(lg.doc, "next_seq", &next_seq), "shared: logs without next_seq"))
        CHECK(next_seq - 1 == total, "shared: next_seq %lld, but %ld dispatches were made", next_seq, total);
    EXPECT_LEN(lg.doc, "entries", 256, "shared: logs are bounded by their capacity");
    reply_free(&lg);

    for (i = SHARED_THREADS; i < SHARED_THREADS + OWN_THREADS; i++) {
        char ctx[64];
        snprintf(ctx, sizeof ctx, "own handle of worker %d", i);
        memset(&s, 0, sizeof s);
        s.app = workers[i].app;
        s.rev = workers[i].dispatches;
        st = GET_STATE(&s, ctx);
        reply_free(&st);
        lg = GET_LOGS(&s, 1, ctx);
        if (jint(lg.doc, "next_seq", &next_seq))
            CHECK(next_seq - 1 == workers[i].dispatches, "%s: next_seq %lld, but %ld dispatches were made", ctx,
                  next_seq, workers[i].dispatches);
        reply_free(&lg);
        jcode_mobile_app_free(workers[i].app);
    }

    /* The main thread's last error is its own: its last app_new succeeded. */
    {
        reply r = TAKE(jcode_mobile_last_error(), "main thread last_error");
        CHECK(jtrue(r.doc, "ok"), "main thread last_error was changed by another thread: %s", r.raw ? r.raw : "");
        reply_free(&r);
    }
    jcode_mobile_app_free(shared);

    /* Freeing a handle while other threads are using it. */
    memset(racers, 0, sizeof racers);
    racers[0].app = racers[1].app = jcode_mobile_app_new(NULL);
    if (!CHECK(racers[0].app != NULL, "app_new(NULL) returned NULL")) return;
    started[0] = pthread_create(&racer_threads[0], NULL, racer_main, &racers[0]) == 0;
    started[1] = pthread_create(&racer_threads[1], NULL, racer_main, &racers[1]) == 0;
    /* Free it once both racers are busy with it (or after ~10 s). */
    for (i = 0; i < 10000 && (racer_progress(&racers[0]) < 20 || racer_progress(&racers[1]) < 20); i++)
        nanosleep(&pause, NULL);
    jcode_mobile_app_free(racers[0].app);
    for (i = 0; i < 2; i++) {
        CHECK(started[i], "pthread_create failed for racer %d", i);
        if (!started[i]) continue;
        pthread_join(racer_threads[i], NULL);
        CHECK(racers[i].failures == 0, "racer %d: %ld failures in %ld calls; first: %s", i, racers[i].failures,
              racers[i].calls, racers[i].first_failure);
        CHECK(racers[i].ok_before_free > 0 && racers[i].invalid > 0,
              "racer %d: %ld ok calls before app_free, %ld invalid_handle after (both should be > 0)", i,
              racers[i].ok_before_free, racers[i].invalid);
    }
}

/* ================================================================ main */

/* ================================================================ the transcript's nodes */

/* The first node of `role` under `node` (depth-first), or NULL. */
static const jv *find_role(const jv *node, const char *role) {
    const char *r;
    const jv *children;
    size_t i;
    if (!node || node->kind != JOBJ) return NULL;
    r = jstr(node, "role");
    if (r && strcmp(r, role) == 0) return node;
    children = jget(node, "children");
    if (!children || children->kind != JARR) return NULL;
    for (i = 0; i < children->n; i++) {
        const jv *hit = find_role(children->items[i], role);
        if (hit) return hit;
    }
    return NULL;
}

/* The tree's node `id`, checked to be a boolean `expanded` equal to `want`. */
static void expect_expanded_at(int line, session *s, const char *id, int want, const char *ctx) {
    reply t = get_tree_at(line, s, ctx);
    const jv *node = find_node(jget(t.doc, "tree"), id);
    if (check_at(line, node != NULL, "%s: no node %s in the tree", ctx, id)) {
        expect_bool_at(line, node, "expanded", want, ctx);
        check_at(line, node_supports(node, "tap"), "%s: %s does not support tap", ctx, id);
    }
    reply_free(&t);
}

#define EXPECT_EXPANDED(s, id, want, ctx) expect_expanded_at(__LINE__, (s), (id), (want), (ctx))

/* set_expanded and a tap open and close a tool card (state's expanded_nodes
** says which); copy answers copy_to_clipboard with the text, exactly; a node
** that is not there, or has no copy, is a note and no effect; a code block
** carries its code, language and Copy button. */
static void test_transcript_nodes(void) {
    session s;
    reply r, t;
    const jv *node;
    char want[512];
    g_section = "transcript";
    if (!CHECK(session_open(&s, "{\"scenario\":\"code_edit_review\"}"), "app_new(code_edit_review) returned NULL")) return;
    r = GET_STATE(&s, "code_edit_review");
    EXPECT_LEN(r.doc, "state.expanded_nodes", 1, "code_edit_review opens the edit's card");
    EXPECT_STR(r.doc, "state.expanded_nodes[0].node_id", "tool.m5.call_edit", "code_edit_review");
    EXPECT_BOOL(r.doc, "state.expanded_nodes[0].expanded", 1, "code_edit_review");
    reply_free(&r);
    EXPECT_EXPANDED(&s, "tool.m5.call_edit", 1, "the edit's card, opened by the scenario");
    EXPECT_EXPANDED(&s, "tool.m5.call_read", 0, "the read's card, closed by default");

    /* Opened: its output shows; the state remembers it, the latest last. */
    drop(DISPATCH(&s, "{\"type\":\"set_expanded\",\"node_id\":\"tool.m5.call_read\",\"expanded\":true}", CHANGES,
                  "set_expanded(read, true)"));
    EXPECT_EXPANDED(&s, "tool.m5.call_read", 1, "after set_expanded(read, true)");
    t = GET_TREE(&s, "after set_expanded(read, true)");
    node = find_node(jget(t.doc, "tree"), "tool.m5.call_read.output");
    CHECK(node != NULL, "the opened card shows its output");
    EXPECT_STR(node, "value", "1\tpub fn connect() {\n2\t    retry(500);\n3\t}", "the read's output");
    reply_free(&t);
    r = GET_STATE(&s, "after set_expanded(read, true)");
    EXPECT_LEN(r.doc, "state.expanded_nodes", 2, "after set_expanded(read, true)");
    EXPECT_STR(r.doc, "state.expanded_nodes[1].node_id", "tool.m5.call_read", "after set_expanded(read, true)");
    EXPECT_BOOL(r.doc, "state.expanded_nodes[1].expanded", 1, "after set_expanded(read, true)");
    reply_free(&r);

    /* Tapped: it closes again; the choice replaces the earlier one. */
    drop(DISPATCH(&s, "{\"type\":\"tap_node\",\"node_id\":\"tool.m5.call_read\"}", CHANGES, "tap(read)"));
    EXPECT_EXPANDED(&s, "tool.m5.call_read", 0, "after tap(read)");
    t = GET_TREE(&s, "after tap(read)");
    CHECK(find_node(jget(t.doc, "tree"), "tool.m5.call_read.output") == NULL, "the closed card hides its output");
    reply_free(&t);
    r = GET_STATE(&s, "after tap(read)");
    EXPECT_LEN(r.doc, "state.expanded_nodes", 2, "after tap(read)");
    EXPECT_STR(r.doc, "state.expanded_nodes[1].node_id", "tool.m5.call_read", "after tap(read)");
    EXPECT_BOOL(r.doc, "state.expanded_nodes[1].expanded", 0, "after tap(read)");
    reply_free(&r);

    /* copy: the message's text as written, markdown markers and all. */
    r = DISPATCH(&s, "{\"type\":\"copy\",\"node_id\":\"message.m6\"}", SAME, "copy(message.m6)");
    if (CHECK(count_effects(r.doc, "copy_to_clipboard") == 1 && jlen(r.doc, "effects") == 1,
              "copy(message.m6): expected one copy_to_clipboard effect: %.300s", r.raw ? r.raw : "(null)")) {
        snprintf(want, sizeof want,
                 "{\"effect_id\":%lld,\"type\":\"copy_to_clipboard\",\"text\":\"Done: `connect` takes the delay, and the "
                 "**12 tests** pass.\"}",
                 effect_id_of(find_effect(r.doc, "copy_to_clipboard", 0)));
        CHECK(strstr(r.raw, want) != NULL, "copy(message.m6): the effect is not %s: %.300s", want, r.raw);
    }
    reply_free(&r);

    /* A node that is not there, or cannot be copied: a note, no effect. */
    r = DISPATCH(&s, "{\"type\":\"copy\",\"node_id\":\"message.m99\"}", SAME, "copy(message.m99)");
    EXPECT_LEN(r.doc, "effects", 0, "copy(message.m99)");
    reply_free(&r);
    r = DISPATCH(&s, "{\"type\":\"copy\",\"node_id\":\"tool.m5.call_read\"}", SAME, "copy(a tool card)");
    EXPECT_LEN(r.doc, "effects", 0, "copy(a tool card)");
    reply_free(&r);
    r = GET_LOGS(&s, 1, "logs after copy(a tool card)");
    EXPECT_STR(r.doc, "entries[0].type", "copy", "the log's last entry");
    EXPECT_STR(r.doc, "entries[0].notes[0]", "copy: no node \"tool.m5.call_read\" with copy on this screen",
               "the log's last entry");
    reply_free(&r);
    jcode_mobile_app_free(s.app);

    /* A code block: its code, language, copy, and a Copy button that copies it. */
    if (!CHECK(session_open(&s, "{\"scenario\":\"markdown_reply\"}"), "app_new(markdown_reply) returned NULL")) return;
    t = GET_TREE(&s, "markdown_reply");
    node = find_role(find_node(jget(t.doc, "tree"), "message.m5"), "code_block");
    if (CHECK(node != NULL, "markdown_reply: message.m5 has no code_block node")) {
        const char *id = jstr(node, "id");
        char action[256];
        EXPECT_STR(node, "value", "app.dispatch([\"type\": \"retry_connection\"])", "the code block");
        EXPECT_STR(node, "language", "swift", "the code block");
        CHECK(jget(node, "variant") == NULL, "a closed code block has no variant");
        CHECK(node_supports(node, "copy"), "the code block does not support copy");
        EXPECT_STR(node, "children[0].role", "button", "the code block's Copy button");
        EXPECT_STR(node, "children[0].label", "Copy", "the code block's Copy button");
        snprintf(want, sizeof want, "%s.copy", id ? id : "?");
        EXPECT_STR(node, "children[0].id", want, "the code block's Copy button");
        snprintf(action, sizeof action, "{\"type\":\"copy\",\"node_id\":\"%s\"}", id ? id : "?");
        r = DISPATCH(&s, action, SAME, "copy(code block)");
        EXPECT_STR(find_effect(r.doc, "copy_to_clipboard", 0), "text", "app.dispatch([\"type\": \"retry_connection\"])",
                   "copy(code block)");
        reply_free(&r);
        snprintf(action, sizeof action, "{\"type\":\"tap_node\",\"node_id\":\"%s.copy\"}", id ? id : "?");
        r = DISPATCH(&s, action, SAME, "tap(Copy)");
        EXPECT_STR(find_effect(r.doc, "copy_to_clipboard", 0), "text", "app.dispatch([\"type\": \"retry_connection\"])",
                   "tap(Copy)");
        reply_free(&r);
    }
    reply_free(&t);
    jcode_mobile_app_free(s.app);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_parser_self_check();
    test_versions();
    test_flow();
    test_pairing_failures();
    test_null_arguments();
    test_malformed_inputs();
    test_bad_handles();
    test_handles_are_unforgeable();
    test_app_new();
    test_snapshot();
    test_hit_test_and_screenshot();
    test_tree_changes();
    test_transcript_nodes();
    test_threads();
    if (g_answers) fclose(g_answers);
    printf("%ld passed, %ld failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
