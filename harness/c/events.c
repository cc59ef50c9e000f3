/*
** events.c — C tests of the event stream of libjcode_mobile
** (jcode_mobile_subscribe, jcode_mobile_subscribe_callback,
** jcode_mobile_next_event, jcode_mobile_unsubscribe).
**
** Several threads subscribe, wait, dispatch and free at once; every answer
** is parsed with json_mini.h and its values are checked: the order and
** continuity of seqs and revisions, the events_lost marker of a full queue
** and the catch-up with jcode_mobile_changes, the kinds filter, the
** wake-ups of unsubscribe and app_free, the callback rules (in order, never
** twice at once, re-entrant calls, self-unsubscribe, nothing after
** unsubscribe returns) and every documented error code.
**
** Each test arms an alarm() watchdog: a deadlock ends the program with a
** message naming the test instead of hanging.
**
** Output: one line per failing check, then "events: N passed, N failed".
** Exit status: 0 only when nothing failed.
*/
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "jcode_mobile.h"
#include "json_mini.h"
#define CHECKS_FILE "events.c"
#define CHECKS_THREADED
#include "checks.h" /* g_section: written by the main thread between tests only */

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ================================================================ checks (checks.h) */

/* ================================================================ watchdog */

static void on_alarm(int sig) {
    static const char head[] = "FAIL events: watchdog: test \"";
    static const char tail[] = "\" did not finish in time (deadlock?)\n";
    const char *s = g_section;
    (void)sig;
    if (write(2, head, sizeof head - 1) < 0) _exit(3);
    if (write(2, s, strlen(s)) < 0) _exit(3);
    if (write(2, tail, sizeof tail - 1) < 0) _exit(3);
    _exit(3);
}

/* Seconds a test may take; generous, for valgrind and the sanitizers. */
#define WATCHDOG_SECONDS 240

static void begin(const char *name) {
    g_section = name;
    alarm(WATCHDOG_SECONDS);
}

static void end(void) { alarm(0); }

/* ================================================================ helpers */

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1000.0 + (double)t.tv_nsec / 1e6;
}

static void sleep_ms(long ms) {
    struct timespec t;
    t.tv_sec = ms / 1000;
    t.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&t, &t) != 0) {
    }
}

/* With JCODE_MOBILE_ANSWERS=FILE (opened by main before any thread starts),
** every answer read is also written to FILE, one per line, for
** `python3 -m jcode_mobile.schema FILE` to validate (make test-c). */
static FILE *g_answers;

/* Parses and frees a library answer; NULL (and a failed check) when it is not JSON. */
static jv *parse_answer(char *s, const char *ctx) {
    const char *err = NULL;
    size_t pos = 0;
    jv *doc;
    if (!CHECK(s != NULL, "%s: the answer is NULL", ctx)) return NULL;
    if (g_answers) fprintf(g_answers, "%s\n", s);
    doc = jparse(s, strlen(s), &err, &pos);
    CHECK(doc != NULL && doc->kind == JOBJ, "%s: the answer is not a JSON object (%s at %lu): %.200s", ctx,
          err ? err : "not an object", (unsigned long)pos, s);
    jcode_mobile_string_free(s);
    return doc;
}

/* The next event's answer (a parsed {"ok":true,"event":…}), or NULL. */
static jv *next_event(void *sub, int32_t timeout_ms, const char *ctx) {
    jv *doc = parse_answer(jcode_mobile_next_event(sub, timeout_ms), ctx);
    if (doc && !CHECK(jtrue(doc, "ok") && jget(doc, "event") != NULL, "%s: next_event answered no event member", ctx)) {
        jfree(doc);
        return NULL;
    }
    return doc;
}

static int type_is(const jv *doc, const char *type) {
    const char *t = jstr(doc, "event.type");
    return t && strcmp(t, type) == 0;
}

static int event_is_null(const jv *doc) {
    const jv *e = doc ? jget(doc, "event") : NULL;
    return e && e->kind == JNULL;
}

static long long int_at(const jv *doc, const char *path) {
    long long v = -1;
    if (!jint(doc, path, &v)) return -1;
    return v;
}

/* Checks an error answer's code (and field when given), frees it. */
static void expect_error_at(int line, char *answer, const char *code, const char *field, const char *message_part,
                            const char *ctx) {
    jv *doc = parse_answer(answer, ctx);
    const char *c = jstr(doc, "error.code"), *f = jstr(doc, "error.field"), *m = jstr(doc, "error.message");
    check_at(line, doc && jget(doc, "ok") && !jtrue(doc, "ok") && c && strcmp(c, code) == 0,
             "%s: expected error %s, got code %s", ctx, code, c ? c : "(none)");
    if (field) check_at(line, f && strcmp(f, field) == 0, "%s: expected field %s, got %s", ctx, field, f ? f : "(none)");
    if (message_part)
        check_at(line, m && strstr(m, message_part) != NULL, "%s: message \"%s\" should mention \"%s\"", ctx,
                 m ? m : "(none)", message_part);
    if (doc) jfree(doc);
}
#define EXPECT_ERROR(answer, code, field, part, ctx) expect_error_at(__LINE__, answer, code, field, part, ctx)

/* subscribe returned NULL and jcode_mobile_last_error() has this code. */
static void expect_subscribe_error_at(int line, void *sub, const char *code, const char *field, const char *ctx) {
    check_at(line, sub == NULL, "%s: subscribe should return NULL", ctx);
    if (sub) jcode_mobile_unsubscribe(sub);
    expect_error_at(line, jcode_mobile_last_error(), code, field, NULL, ctx);
}
#define EXPECT_SUBSCRIBE_ERROR(sub, code, field, ctx) expect_subscribe_error_at(__LINE__, sub, code, field, ctx)

static void dispatch_ok(void *app, const char *action, const char *ctx) {
    jv *doc = parse_answer(jcode_mobile_dispatch(app, action), ctx);
    CHECK(doc && jtrue(doc, "ok"), "%s: dispatch %s failed", ctx, action);
    if (doc) jfree(doc);
}

static void set_draft(void *app, const char *value) {
    char action[160];
    snprintf(action, sizeof action, "{\"type\":\"set_draft\",\"value\":\"%s\"}", value);
    dispatch_ok(app, action, "set_draft");
}

static long long state_revision(void *app) {
    jv *doc = parse_answer(jcode_mobile_state(app), "state");
    long long r = int_at(doc, "state.revision");
    if (doc) jfree(doc);
    return r;
}

static void *new_chat_app(void) {
    void *app = jcode_mobile_app_new("{\"scenario\":\"connected_empty_chat\"}");
    CHECK(app != NULL, "app_new connected_empty_chat failed");
    return app;
}

/* Takes the subscribed event; returns its revision and next_seq. */
static void take_subscribed(void *sub, long long *revision, long long *next_seq, const char *ctx) {
    jv *doc = next_event(sub, 0, ctx);
    CHECK(doc && type_is(doc, "subscribed"), "%s: the first event should be subscribed", ctx);
    *revision = int_at(doc, "event.revision");
    *next_seq = int_at(doc, "event.next_seq");
    CHECK(*revision >= 0 && *next_seq >= 1, "%s: subscribed has revision %lld next_seq %lld", ctx, *revision, *next_seq);
    if (doc) jfree(doc);
}

/* ================================================================ 1. bad input */

static void cb_noop(void *user_data, const char *event_json) {
    (void)user_data;
    (void)event_json;
}

static void test_bad_input(void) {
    void *app, *freed, *sub, *cb;
    jv *doc;
    begin("bad_input");
    app = new_chat_app();
    freed = jcode_mobile_app_new(NULL);
    jcode_mobile_app_free(freed);

    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(NULL, NULL), "null_argument", "app", "subscribe(NULL)");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(freed, NULL), "invalid_handle", "app", "subscribe(freed app)");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe((void *)(uintptr_t)0x123456, NULL), "invalid_handle", "app",
                           "subscribe(garbage)");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe((char *)app + 1, NULL), "invalid_handle", "app",
                           "subscribe(app + 1)");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "{"), "invalid_json", NULL, "options \"{\"");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "\xff"), "invalid_utf8", NULL, "options not UTF-8");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "[1]"), "invalid_field", NULL, "options an array");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "{\"capacity\":0}"), "invalid_field", "capacity",
                           "capacity 0");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "{\"capacity\":70000}"), "invalid_field", "capacity",
                           "capacity 70000");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "{\"capacity\":2.5}"), "invalid_field", "capacity",
                           "capacity 2.5");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "{\"capacity_bytes\":65535}"), "invalid_field",
                           "capacity_bytes", "capacity_bytes under 64 KiB");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "{\"capacity_bytes\":1073741825}"), "invalid_field",
                           "capacity_bytes", "capacity_bytes over 1 GiB");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "{\"capacity\":8,\"colour\":1}"), "invalid_field", "colour",
                           "unknown member");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "{\"kinds\":\"state\"}"), "invalid_field", "kinds",
                           "kinds not an array");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(app, "{\"kinds\":[\"state\",\"trees\"]}"), "invalid_field",
                           "kinds[1]", "unknown kind");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe_callback(app, NULL, NULL, NULL), "null_argument", "callback",
                           "subscribe_callback(NULL callback)");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe_callback(NULL, NULL, cb_noop, NULL), "null_argument", "app",
                           "subscribe_callback(NULL app)");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe_callback(freed, NULL, cb_noop, NULL), "invalid_handle", "app",
                           "subscribe_callback(freed app)");

    /* NULL, "" and "{}" are the defaults. */
    sub = jcode_mobile_subscribe(app, "");
    CHECK(sub != NULL, "subscribe(app, \"\") failed");
    doc = parse_answer(jcode_mobile_last_error(), "last_error after success");
    CHECK(doc && jtrue(doc, "ok"), "last_error after a successful subscribe should be {\"ok\":true}");
    if (doc) jfree(doc);
    jcode_mobile_unsubscribe(sub);
    sub = jcode_mobile_subscribe(app, "{}");
    CHECK(sub != NULL, "subscribe(app, \"{}\") failed");
    CHECK(sub != app, "a subscription handle is not the app handle");

    /* A subscription is not an app, an app is not a subscription. */
    EXPECT_ERROR(jcode_mobile_dispatch(sub, "{\"type\":\"set_draft\",\"value\":\"x\"}"), "invalid_handle", "app",
                 NULL, "dispatch(subscription)");
    EXPECT_ERROR(jcode_mobile_state(sub), "invalid_handle", "app", NULL, "state(subscription)");
    EXPECT_SUBSCRIBE_ERROR(jcode_mobile_subscribe(sub, NULL), "invalid_handle", "app", "subscribe(subscription)");
    EXPECT_ERROR(jcode_mobile_next_event(NULL, 0), "null_argument", "subscription", NULL, "next_event(NULL)");
    EXPECT_ERROR(jcode_mobile_next_event(app, 0), "invalid_handle", "subscription", "app handle",
                 "next_event(app handle)");
    EXPECT_ERROR(jcode_mobile_next_event((void *)(uintptr_t)0x123456, 0), "invalid_handle", "subscription", NULL,
                 "next_event(garbage)");
    EXPECT_ERROR(jcode_mobile_next_event((char *)sub + 16, 0), "invalid_handle", "subscription", NULL,
                 "next_event(subscription + 16)");

    cb = jcode_mobile_subscribe_callback(app, "{\"kinds\":[\"effects\"]}", cb_noop, NULL);
    CHECK(cb != NULL, "subscribe_callback failed");
    EXPECT_ERROR(jcode_mobile_next_event(cb, 0), "invalid_handle", "subscription", "callback",
                 "next_event(callback subscription)");

    /* unsubscribe ignores what is not a live subscription; the app still works. */
    jcode_mobile_unsubscribe(NULL);
    jcode_mobile_unsubscribe(app);
    jcode_mobile_unsubscribe((void *)(uintptr_t)0x123456);
    set_draft(app, "still-works");
    jcode_mobile_unsubscribe(cb);
    jcode_mobile_unsubscribe(cb);
    jcode_mobile_unsubscribe(sub);
    EXPECT_ERROR(jcode_mobile_next_event(sub, 0), "invalid_handle", "subscription", "not a live",
                 "next_event(unsubscribed)");
    EXPECT_ERROR(jcode_mobile_next_event(cb, 0), "invalid_handle", "subscription", "not a live",
                 "next_event(unsubscribed callback)");
    jcode_mobile_unsubscribe(sub);
    set_draft(app, "and-still");
    jcode_mobile_app_free(app);
    end();
}

/* ================================================================ 2. timeouts */

typedef struct {
    void *app;
    long delay_ms;
} delayed_dispatch;

static void *dispatch_later(void *arg) {
    delayed_dispatch *d = (delayed_dispatch *)arg;
    sleep_ms(d->delay_ms);
    set_draft(d->app, "arrives-while-waiting");
    return NULL;
}

static void test_timeouts(void) {
    void *app = new_chat_app(), *sub;
    long long rev, seq;
    double t0, dt;
    jv *doc;
    pthread_t th;
    delayed_dispatch d;
    begin("timeouts");
    sub = jcode_mobile_subscribe(app, NULL);
    take_subscribed(sub, &rev, &seq, "timeouts");

    t0 = now_ms();
    doc = next_event(sub, 0, "timeout 0");
    dt = now_ms() - t0;
    CHECK(doc && event_is_null(doc), "timeout 0 on an empty queue should answer event null");
    CHECK(dt < 1000, "timeout 0 should not wait (took %.1f ms)", dt);
    if (doc) jfree(doc);

    t0 = now_ms();
    doc = next_event(sub, 50, "timeout 50");
    dt = now_ms() - t0;
    CHECK(doc && event_is_null(doc), "timeout 50 on an empty queue should answer event null");
    CHECK(dt >= 45, "timeout 50 returned after %.1f ms", dt);
    if (doc) jfree(doc);

    /* An event that arrives during a timed wait ends it. */
    d.app = app;
    d.delay_ms = 30;
    pthread_create(&th, NULL, dispatch_later, &d);
    doc = next_event(sub, 60000, "timed wait woken");
    CHECK(doc && type_is(doc, "state_changed") && int_at(doc, "event.seq") == seq,
          "a timed wait should return the state_changed (seq %lld) dispatched meanwhile", seq);
    if (doc) jfree(doc);
    pthread_join(th, NULL);
    doc = next_event(sub, 0, "its effects");
    CHECK(doc && type_is(doc, "effects_requested") && int_at(doc, "event.seq") == seq + 1,
          "then effects_requested (seq %lld)", seq + 1);
    if (doc) jfree(doc);

    jcode_mobile_unsubscribe(sub);
    jcode_mobile_app_free(app);
    end();
}

/* ================================================================ 3. fan-out */

#define FAN_SUBSCRIBERS 8
#define FAN_DISPATCHERS 4
#define FAN_PER_DISPATCHER 50

typedef struct {
    void *sub;
    long long state_events, effects_events, lost, other;
    int ok_order;
} fan_subscriber;

typedef struct {
    void *app;
    int index;
} fan_dispatcher;

static void *fan_subscriber_main(void *arg) {
    fan_subscriber *s = (fan_subscriber *)arg;
    long long want = (long long)FAN_DISPATCHERS * FAN_PER_DISPATCHER, rev = -1, seq = -1;
    jv *doc = next_event(s->sub, 60000, "fan-out subscribed");
    s->ok_order = 1;
    if (!CHECK(doc && type_is(doc, "subscribed"), "fan-out: first event is not subscribed")) {
        if (doc) jfree(doc);
        s->ok_order = 0;
        return NULL;
    }
    rev = int_at(doc, "event.revision");
    seq = int_at(doc, "event.next_seq");
    jfree(doc);
    while (s->state_events < want || s->effects_events < want) {
        doc = next_event(s->sub, 60000, "fan-out event");
        if (!doc || event_is_null(doc)) {
            CHECK(0, "fan-out: no event for 60 s after %lld state events", s->state_events);
            if (doc) jfree(doc);
            s->ok_order = 0;
            return NULL;
        }
        if (type_is(doc, "events_lost")) {
            s->lost++;
        } else if (int_at(doc, "event.seq") != seq) {
            if (s->ok_order)
                CHECK(0, "fan-out: seq %lld, expected %lld", int_at(doc, "event.seq"), seq);
            s->ok_order = 0;
        } else if (type_is(doc, "state_changed")) {
            if (int_at(doc, "event.revision") != rev + 1) {
                if (s->ok_order)
                    CHECK(0, "fan-out: revision %lld after %lld", int_at(doc, "event.revision"), rev);
                s->ok_order = 0;
            }
            rev = int_at(doc, "event.revision");
            s->state_events++;
        } else if (type_is(doc, "effects_requested")) {
            if (int_at(doc, "event.revision") != rev) {
                if (s->ok_order) CHECK(0, "fan-out: effects of revision %lld after state %lld",
                                       int_at(doc, "event.revision"), rev);
                s->ok_order = 0;
            }
            s->effects_events++;
        } else {
            s->other++;
        }
        seq++;
        jfree(doc);
    }
    return NULL;
}

static void *fan_dispatcher_main(void *arg) {
    fan_dispatcher *d = (fan_dispatcher *)arg;
    char value[64];
    int i;
    for (i = 0; i < FAN_PER_DISPATCHER; i++) {
        snprintf(value, sizeof value, "draft-%d-%d", d->index, i);
        set_draft(d->app, value);
    }
    return NULL;
}

static void test_fan_out(void) {
    void *app = new_chat_app();
    fan_subscriber subs[FAN_SUBSCRIBERS];
    fan_dispatcher ds[FAN_DISPATCHERS];
    pthread_t st[FAN_SUBSCRIBERS], dt[FAN_DISPATCHERS];
    long long want = (long long)FAN_DISPATCHERS * FAN_PER_DISPATCHER, rev0 = state_revision(app);
    int i;
    jv *doc;
    begin("fan_out");
    memset(subs, 0, sizeof subs);
    for (i = 0; i < FAN_SUBSCRIBERS; i++) {
        subs[i].sub = jcode_mobile_subscribe(app, NULL);
        CHECK(subs[i].sub != NULL, "subscribe %d failed", i);
    }
    for (i = 0; i < FAN_SUBSCRIBERS; i++) pthread_create(&st[i], NULL, fan_subscriber_main, &subs[i]);
    for (i = 0; i < FAN_DISPATCHERS; i++) {
        ds[i].app = app;
        ds[i].index = i;
        pthread_create(&dt[i], NULL, fan_dispatcher_main, &ds[i]);
    }
    for (i = 0; i < FAN_DISPATCHERS; i++) pthread_join(dt[i], NULL);
    for (i = 0; i < FAN_SUBSCRIBERS; i++) pthread_join(st[i], NULL);
    CHECK(state_revision(app) == rev0 + want, "the state's revision is %lld, expected %lld", state_revision(app),
          rev0 + want);
    for (i = 0; i < FAN_SUBSCRIBERS; i++) {
        CHECK(subs[i].ok_order, "subscriber %d saw events out of order", i);
        CHECK(subs[i].state_events == want, "subscriber %d got %lld state_changed, expected %lld", i,
              subs[i].state_events, want);
        CHECK(subs[i].effects_events == want, "subscriber %d got %lld effects_requested, expected %lld", i,
              subs[i].effects_events, want);
        CHECK(subs[i].lost == 0 && subs[i].other == 0, "subscriber %d got %lld events_lost and %lld others", i,
              subs[i].lost, subs[i].other);
        doc = next_event(subs[i].sub, 0, "fan-out drained");
        CHECK(doc && event_is_null(doc), "subscriber %d has an event beyond the expected ones", i);
        if (doc) jfree(doc);
        jcode_mobile_unsubscribe(subs[i].sub);
    }
    jcode_mobile_app_free(app);
    end();
}

/* ================================================================ 4. slow subscriber */

/* A subscriber that mirrors the state's revision from its events and, after
** events_lost, catches up with jcode_mobile_changes. */
typedef struct {
    void *app;
    long long mirror;
    long long catch_ups;
} mirror;

static void mirror_catch_up(mirror *m) {
    jv *doc = parse_answer(jcode_mobile_changes(m->app, (uint64_t)m->mirror), "changes after events_lost");
    const jv *changes = doc ? jget(doc, "changes") : NULL;
    size_t i;
    CHECK(doc && jtrue(doc, "ok") && !jtrue(doc, "resync") && changes && changes->kind == JARR,
          "changes(since %lld) should list the changes", m->mirror);
    for (i = 0; changes && i < changes->n; i++) {
        long long r = int_at(changes->items[i], "revision");
        CHECK(r == m->mirror + 1, "change record of revision %lld after %lld", r, m->mirror);
        m->mirror = r;
    }
    CHECK(doc && int_at(doc, "revision") == m->mirror, "changes: revision %lld, mirror %lld",
          int_at(doc, "revision"), m->mirror);
    m->catch_ups++;
    if (doc) jfree(doc);
}

/* Applies one event to the mirror. */
static void mirror_apply(mirror *m, const jv *doc) {
    if (type_is(doc, "events_lost")) {
        mirror_catch_up(m);
    } else if (type_is(doc, "state_changed")) {
        long long r = int_at(doc, "event.revision");
        if (r > m->mirror) {
            CHECK(r == m->mirror + 1, "state_changed of revision %lld after mirror %lld", r, m->mirror);
            m->mirror = r;
        }
    }
}

static void expect_event(void *sub, const char *type, long long seq, mirror *m, const char *ctx) {
    jv *doc = next_event(sub, 0, ctx);
    CHECK(doc && type_is(doc, type), "%s: expected %s, got %s", ctx, type, doc ? jstr(doc, "event.type") : "nothing");
    if (seq > 0) CHECK(int_at(doc, "event.seq") == seq, "%s: seq %lld, expected %lld", ctx, int_at(doc, "event.seq"), seq);
    if (doc && m) mirror_apply(m, doc);
    if (doc) jfree(doc);
}

static void expect_lost(void *sub, long long count, long long first, long long last, long long effects, mirror *m,
                        const char *ctx) {
    jv *doc = next_event(sub, 0, ctx);
    CHECK(doc && type_is(doc, "events_lost"), "%s: expected events_lost, got %s", ctx,
          doc ? jstr(doc, "event.type") : "nothing");
    CHECK(int_at(doc, "event.count") == count && int_at(doc, "event.first_seq") == first &&
              int_at(doc, "event.last_seq") == last && int_at(doc, "event.effects_lost") == effects,
          "%s: events_lost count %lld first %lld last %lld effects %lld, expected %lld %lld %lld %lld", ctx,
          int_at(doc, "event.count"), int_at(doc, "event.first_seq"), int_at(doc, "event.last_seq"),
          int_at(doc, "event.effects_lost"), count, first, last, effects);
    CHECK(jget(doc, "event.seq") == NULL, "%s: events_lost has no seq of its own", ctx);
    if (doc && m) mirror_apply(m, doc);
    if (doc) jfree(doc);
}

static void test_slow_subscriber(void) {
    void *app = new_chat_app(), *sub;
    long long rev0, s;
    mirror m;
    jv *doc;
    char value[32];
    int i;
    begin("slow_subscriber");
    sub = jcode_mobile_subscribe(app, "{\"capacity\":4}");
    CHECK(sub != NULL, "subscribe capacity 4 failed");
    /* 6 set_drafts: 12 events (state_changed, effects_requested each) into a
    ** queue of 4 that already holds subscribed: seqs s..s+2 fit, s+3…s+11 are lost. */
    for (i = 0; i < 6; i++) {
        snprintf(value, sizeof value, "slow-%d", i);
        set_draft(app, value);
    }
    m.app = app;
    m.catch_ups = 0;
    doc = next_event(sub, 0, "slow subscribed");
    CHECK(doc && type_is(doc, "subscribed"), "slow: first event is subscribed");
    rev0 = int_at(doc, "event.revision");
    s = int_at(doc, "event.next_seq");
    m.mirror = rev0;
    if (doc) jfree(doc);
    expect_event(sub, "state_changed", s, &m, "slow 1");
    /* Room for two: the next call's state_changed comes after the gap's marker. */
    set_draft(app, "slow-6");
    expect_event(sub, "effects_requested", s + 1, &m, "slow 2");
    expect_event(sub, "state_changed", s + 2, &m, "slow 3");
    expect_lost(sub, 9, s + 3, s + 11, 5, &m, "slow gap 1");
    CHECK(m.mirror == rev0 + 7, "after catching up the mirror is at %lld, expected %lld", m.mirror, rev0 + 7);
    expect_event(sub, "state_changed", s + 12, &m, "slow after the gap");
    /* s+13 (effects) found the queue full again: a gap of one, at the end. */
    expect_lost(sub, 1, s + 13, s + 13, 1, &m, "slow gap 2");
    doc = next_event(sub, 0, "slow drained");
    CHECK(doc && event_is_null(doc), "slow: nothing after the second gap");
    if (doc) jfree(doc);
    set_draft(app, "slow-7");
    expect_event(sub, "state_changed", s + 14, &m, "slow later 1");
    expect_event(sub, "effects_requested", s + 15, &m, "slow later 2");
    CHECK(m.catch_ups == 2, "two catch-ups, got %lld", m.catch_ups);
    CHECK(m.mirror == state_revision(app), "the mirror's revision %lld equals the state's %lld", m.mirror,
          state_revision(app));
    jcode_mobile_unsubscribe(sub);
    jcode_mobile_app_free(app);
    end();
}

/* A set_draft of `n` letters `letter`. */
static void set_long_draft(void *app, char letter, size_t n) {
    const char *prefix = "{\"type\":\"set_draft\",\"value\":\"";
    size_t p = strlen(prefix);
    char *action = malloc(p + n + 3);
    if (!CHECK(action != NULL, "malloc")) return;
    memcpy(action, prefix, p);
    memset(action + p, letter, n);
    memcpy(action + p + n, "\"}", 3);
    dispatch_ok(app, action, "set_draft (long)");
    free(action);
}

static void test_byte_budget(void) {
    void *app = new_chat_app(), *sub;
    long long rev0, s;
    mirror m;
    jv *doc;
    int i;
    begin("byte_budget");
    /* Room for 65 536 events, but 64 KiB: each set_draft of 20 000 letters
    ** makes a state_changed of about 20 100 bytes and an effects_requested
    ** (the snapshot with the draft) of about 20 800. subscribed and three
    ** events fit (61 000 bytes); the fourth would pass 64 KiB. */
    sub = jcode_mobile_subscribe(app, "{\"capacity\":65536,\"capacity_bytes\":65536}");
    CHECK(sub != NULL, "subscribe capacity_bytes 65536 failed");
    for (i = 0; i < 6; i++) set_long_draft(app, (char)('a' + i), 20000);
    m.app = app;
    m.catch_ups = 0;
    doc = next_event(sub, 0, "bytes subscribed");
    CHECK(doc && type_is(doc, "subscribed"), "bytes: first event is subscribed");
    rev0 = int_at(doc, "event.revision");
    s = int_at(doc, "event.next_seq");
    m.mirror = rev0;
    if (doc) jfree(doc);
    expect_event(sub, "state_changed", s, &m, "bytes 1");
    expect_event(sub, "effects_requested", s + 1, &m, "bytes 2");
    expect_event(sub, "state_changed", s + 2, &m, "bytes 3");
    expect_lost(sub, 9, s + 3, s + 11, 5, &m, "bytes gap");
    CHECK(m.mirror == rev0 + 6, "after catching up the mirror is at %lld, expected %lld", m.mirror, rev0 + 6);
    doc = next_event(sub, 0, "bytes drained");
    CHECK(doc && event_is_null(doc), "bytes: nothing after the gap");
    if (doc) jfree(doc);
    /* An event larger than the budget still goes into an empty queue. */
    set_long_draft(app, 'z', 100000);
    expect_event(sub, "state_changed", s + 12, &m, "bytes: a 100 000-letter draft into the empty queue");
    expect_lost(sub, 1, s + 13, s + 13, 1, &m, "bytes: its effects did not fit beside it");
    jcode_mobile_unsubscribe(sub);
    jcode_mobile_app_free(app);
    end();
}

/* ================================================================ 5. kinds */

static void test_kinds(void) {
    void *app = new_chat_app(), *effects, *ui;
    long long rev, s, s2;
    jv *doc;
    begin("kinds");
    effects = jcode_mobile_subscribe(app, "{\"kinds\":[\"effects\"]}");
    ui = jcode_mobile_subscribe(app, "{\"kinds\":[\"state\",\"app\"],\"capacity\":16}");
    CHECK(effects && ui, "subscribe with kinds failed");
    take_subscribed(effects, &rev, &s, "kinds effects");
    take_subscribed(ui, &rev, &s2, "kinds ui");
    CHECK(s == s2, "both subscriptions start at the same seq");
    dispatch_ok(app, "{\"type\":\"set_draft\",\"value\":\"hello\"}", "kinds set_draft");
    dispatch_ok(app, "{\"type\":\"send_message\",\"text\":\"hello\"}", "kinds send_message");

    doc = next_event(effects, 0, "effects 1");
    CHECK(doc && type_is(doc, "effects_requested") && int_at(doc, "event.seq") == s + 1,
          "effects: the set_draft's effects_requested (seq %lld)", s + 1);
    CHECK(doc && jstr(doc, "event.effects[0].type") && strcmp(jstr(doc, "event.effects[0].type"), "storage_write") == 0,
          "set_draft asks for a storage_write");
    if (doc) jfree(doc);
    doc = next_event(effects, 0, "effects 2");
    CHECK(doc && type_is(doc, "effects_requested") && int_at(doc, "event.seq") == s + 3,
          "effects: the send's effects_requested (seq %lld)", s + 3);
    CHECK(doc && jstr(doc, "event.effects[0].type") && strcmp(jstr(doc, "event.effects[0].type"), "websocket_send") == 0,
          "send_message asks for a websocket_send");
    CHECK(doc && jstr(doc, "event.effects[0].line") && strstr(jstr(doc, "event.effects[0].line"), "hello") != NULL,
          "the websocket_send line carries the message");
    CHECK(doc && int_at(doc, "event.effects[0].effect_id") > 0, "effects carry their effect_id");
    if (doc) jfree(doc);
    doc = next_event(effects, 0, "effects 3");
    CHECK(doc && event_is_null(doc), "effects: nothing else (no state_changed)");
    if (doc) jfree(doc);

    doc = next_event(ui, 0, "ui 1");
    CHECK(doc && type_is(doc, "state_changed") && int_at(doc, "event.seq") == s, "ui: state_changed seq %lld", s);
    CHECK(doc && jlen(doc, "event.ops") >= 1, "state_changed carries ops");
    if (doc) jfree(doc);
    doc = next_event(ui, 0, "ui 2");
    CHECK(doc && type_is(doc, "state_changed") && int_at(doc, "event.seq") == s + 2, "ui: state_changed seq %lld",
          s + 2);
    if (doc) jfree(doc);
    doc = next_event(ui, 0, "ui 3");
    CHECK(doc && event_is_null(doc), "ui: no effects_requested");
    if (doc) jfree(doc);

    /* An app event: disconnect moves the connection's phase; ui sees it, effects does not. */
    dispatch_ok(app, "{\"type\":\"disconnect\"}", "kinds disconnect");
    doc = next_event(ui, 0, "ui 4");
    CHECK(doc && type_is(doc, "state_changed") && int_at(doc, "event.seq") == s + 4, "ui: disconnect's state_changed");
    if (doc) jfree(doc);
    doc = next_event(ui, 0, "ui 5");
    CHECK(doc && type_is(doc, "connection_phase_changed") && int_at(doc, "event.seq") == s + 5,
          "ui: connection_phase_changed (seq %lld)", s + 5);
    CHECK(doc && jstr(doc, "event.from") && strcmp(jstr(doc, "event.from"), "connected") == 0 &&
              jstr(doc, "event.to") && strcmp(jstr(doc, "event.to"), "disconnected") == 0,
          "ui: from connected to disconnected");
    if (doc) jfree(doc);
    doc = next_event(effects, 0, "effects 4");
    CHECK(!doc || event_is_null(doc) || type_is(doc, "effects_requested"), "effects: no app event");
    if (doc) jfree(doc);
    jcode_mobile_unsubscribe(effects);
    jcode_mobile_unsubscribe(ui);
    jcode_mobile_app_free(app);
    end();
}

/* ================================================================ 5b. the tree kind */

/* A subscription with kinds ["tree"] gets tree_changed (the operations of
** jcode_mobile_tree_changes for each revision) and nothing else; a default
** subscription does not get it. */
static void test_tree_kind(void) {
    void *app = new_chat_app(), *tree, *plain;
    long long rev, s, rev2, s2;
    jv *doc;
    const jv *ops;
    size_t i;
    int draft_set = 0;
    begin("tree kind");
    tree = jcode_mobile_subscribe(app, "{\"kinds\":[\"tree\"]}");
    plain = jcode_mobile_subscribe(app, NULL);
    CHECK(tree && plain, "subscribe with kinds [tree] failed");
    take_subscribed(tree, &rev, &s, "tree subscription");
    take_subscribed(plain, &rev2, &s2, "default subscription");
    set_draft(app, "tree-draft");

    doc = next_event(tree, 0, "tree 1");
    CHECK(doc && type_is(doc, "tree_changed") && int_at(doc, "event.seq") == s + 1,
          "tree: the set_draft's tree_changed (seq %lld, after its state_changed)", s + 1);
    CHECK(doc && int_at(doc, "event.revision") == rev + 1 && int_at(doc, "event.since") == rev,
          "tree_changed: from revision %lld to %lld", rev, rev + 1);
    ops = doc ? jget(doc, "event.ops") : NULL;
    for (i = 0; ops && ops->kind == JARR && i < ops->n; i++) {
        const char *op = jstr(ops->items[i], "op"), *id = jstr(ops->items[i], "id");
        const char *value = jstr(ops->items[i], "set.value");
        if (op && id && value && strcmp(op, "update") == 0 && strcmp(id, "chat.draft") == 0 &&
            strcmp(value, "tree-draft") == 0)
            draft_set = 1;
    }
    CHECK(draft_set, "tree_changed: an update setting chat.draft's value");
    if (doc) jfree(doc);
    doc = next_event(tree, 0, "tree 2");
    CHECK(doc && event_is_null(doc), "tree: nothing else (no state_changed, no effects_requested)");
    if (doc) jfree(doc);

    /* A streamed delta: one append to the streaming message. */
    dispatch_ok(app, "{\"type\":\"send_message\"}", "tree send_message");
    doc = next_event(tree, 0, "tree 3");
    CHECK(doc && type_is(doc, "tree_changed"), "tree: the send's tree_changed");
    if (doc) jfree(doc);
    doc = parse_answer(jcode_mobile_platform_event(
                           app, "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}"),
                       "text_delta Hi");
    if (doc) jfree(doc);
    doc = parse_answer(jcode_mobile_platform_event(
                           app, "{\"type\":\"websocket_event\",\"event\":{\"type\":\"text_delta\",\"text\":\" there\"}}"),
                       "text_delta there");
    if (doc) jfree(doc);
    doc = next_event(tree, 0, "tree 4");
    CHECK(doc && type_is(doc, "tree_changed"), "tree: the first delta's tree_changed");
    if (doc) jfree(doc);
    doc = next_event(tree, 0, "tree 5");
    CHECK(doc && type_is(doc, "tree_changed") && jstr(doc, "event.ops[0].op") &&
              strcmp(jstr(doc, "event.ops[0].op"), "append") == 0 && jstr(doc, "event.ops[0].text") &&
              strcmp(jstr(doc, "event.ops[0].text"), " there") == 0,
          "tree: the second delta is an append of \" there\"");
    if (doc) jfree(doc);

    /* The default kinds: state, effects and app events, never tree_changed. */
    for (;;) {
        doc = next_event(plain, 0, "default");
        if (!doc || event_is_null(doc)) break;
        CHECK(!type_is(doc, "tree_changed"), "a default subscription got tree_changed");
        jfree(doc);
    }
    if (doc) jfree(doc);
    jcode_mobile_unsubscribe(tree);
    jcode_mobile_unsubscribe(plain);
    jcode_mobile_app_free(app);
    end();
}

/* ================================================================ 6. unsubscribe wakes a waiter */

typedef struct {
    void *sub;
    pthread_mutex_t lock;
    int returned;
    char type[32], reason[32];
} waiter;

static void *waiter_main(void *arg) {
    waiter *w = (waiter *)arg;
    jv *doc = next_event(w->sub, -1, "waiter");
    pthread_mutex_lock(&w->lock);
    w->returned = 1;
    snprintf(w->type, sizeof w->type, "%s", doc && jstr(doc, "event.type") ? jstr(doc, "event.type") : "?");
    snprintf(w->reason, sizeof w->reason, "%s", doc && jstr(doc, "event.reason") ? jstr(doc, "event.reason") : "?");
    pthread_mutex_unlock(&w->lock);
    if (doc) jfree(doc);
    return NULL;
}

static void test_unsubscribe_wakes(void) {
    void *app = new_chat_app();
    waiter w;
    pthread_t th;
    long long rev, s;
    int returned;
    begin("unsubscribe_wakes");
    memset(&w, 0, sizeof w);
    pthread_mutex_init(&w.lock, NULL);
    w.sub = jcode_mobile_subscribe(app, NULL);
    take_subscribed(w.sub, &rev, &s, "unsubscribe_wakes");
    pthread_create(&th, NULL, waiter_main, &w);
    sleep_ms(500); /* time to block in next_event, even under ThreadSanitizer on a loaded machine */
    pthread_mutex_lock(&w.lock);
    returned = w.returned;
    pthread_mutex_unlock(&w.lock);
    CHECK(!returned, "next_event(-1) returned with nothing queued");
    jcode_mobile_unsubscribe(w.sub);
    pthread_join(th, NULL);
    CHECK(strcmp(w.type, "closed") == 0 && strcmp(w.reason, "unsubscribed") == 0,
          "the waiter should get closed unsubscribed, got %s %s", w.type, w.reason);
    EXPECT_ERROR(jcode_mobile_next_event(w.sub, 0), "invalid_handle", "subscription", NULL, "after unsubscribe");
    set_draft(app, "after-unsubscribe");
    pthread_mutex_destroy(&w.lock);
    jcode_mobile_app_free(app);
    end();
}

/* ================================================================ 7. one subscription, several waiters */

#define SHARED_WAITERS 4
#define SHARED_CALLS 60

typedef struct {
    void *sub;
    pthread_mutex_t *lock;
    unsigned char *seen; /* by seq */
    long long *taken, base;
    int duplicates, closed, late;
} shared_waiter;

static void *shared_waiter_main(void *arg) {
    shared_waiter *w = (shared_waiter *)arg;
    for (;;) {
        char *raw = jcode_mobile_next_event(w->sub, -1);
        jv *doc;
        if (raw && strstr(raw, "\"code\":\"invalid_handle\"")) {
            /* Between two calls when the main thread unsubscribed: not
            ** blocked, so not woken; the handle is gone, as documented. */
            w->late = 1;
            jcode_mobile_string_free(raw);
            return NULL;
        }
        doc = parse_answer(raw, "shared waiter");
        if (doc && !CHECK(jtrue(doc, "ok") && jget(doc, "event") != NULL, "shared waiter: next_event answered no event member")) {
            jfree(doc);
            return NULL;
        }
        if (!doc) return NULL;
        if (type_is(doc, "closed")) {
            w->closed = 1;
            jfree(doc);
            return NULL;
        }
        pthread_mutex_lock(w->lock);
        {
            long long i = int_at(doc, "event.seq") - w->base;
            if (i >= 0 && i < 2 * SHARED_CALLS) {
                if (w->seen[i]) w->duplicates++;
                w->seen[i] = 1;
            }
            (*w->taken)++;
        }
        pthread_mutex_unlock(w->lock);
        jfree(doc);
    }
}

static void test_shared_waiters(void) {
    void *app = new_chat_app(), *sub;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    unsigned char seen[2 * SHARED_CALLS];
    long long taken = 0, rev, s;
    shared_waiter ws[SHARED_WAITERS];
    pthread_t th[SHARED_WAITERS];
    char value[32];
    int i, duplicates = 0, closed = 0, late = 0, missing = 0;
    begin("shared_waiters");
    memset(seen, 0, sizeof seen);
    sub = jcode_mobile_subscribe(app, NULL);
    take_subscribed(sub, &rev, &s, "shared");
    for (i = 0; i < SHARED_WAITERS; i++) {
        ws[i].sub = sub;
        ws[i].lock = &lock;
        ws[i].seen = seen;
        ws[i].taken = &taken;
        ws[i].base = s;
        ws[i].duplicates = ws[i].closed = ws[i].late = 0;
        pthread_create(&th[i], NULL, shared_waiter_main, &ws[i]);
    }
    for (i = 0; i < SHARED_CALLS; i++) {
        snprintf(value, sizeof value, "shared-%d", i);
        set_draft(app, value);
    }
    for (;;) {
        long long t;
        pthread_mutex_lock(&lock);
        t = taken;
        pthread_mutex_unlock(&lock);
        if (t >= 2 * SHARED_CALLS) break;
        sleep_ms(5);
    }
    sleep_ms(200); /* let the waiters block again */
    jcode_mobile_unsubscribe(sub); /* wakes every waiter */
    for (i = 0; i < SHARED_WAITERS; i++) {
        pthread_join(th[i], NULL);
        duplicates += ws[i].duplicates;
        closed += ws[i].closed;
        late += ws[i].late;
    }
    for (i = 0; i < 2 * SHARED_CALLS; i++) missing += !seen[i];
    CHECK(taken == 2 * SHARED_CALLS, "the waiters took %lld events, expected %d", taken, 2 * SHARED_CALLS);
    CHECK(duplicates == 0 && missing == 0, "each event goes to exactly one waiter: %d duplicates, %d missing",
          duplicates, missing);
    /* A waiter the scheduler had not yet put back into next_event when
    ** unsubscribe ran gets invalid_handle instead (rare; seen under TSan). */
    CHECK(closed + late == SHARED_WAITERS && closed >= 1,
          "every blocked waiter woke with closed at unsubscribe (%d closed, %d between calls, of %d)", closed, late,
          SHARED_WAITERS);
    jcode_mobile_app_free(app);
    end();
}

/* ================================================================ 8. app_free wakes waiters */

#define FREE_WAITERS 8

typedef struct {
    void *sub;
    pthread_mutex_t *lock;
    int *blocked; /* how many took what was queued before they started */
    int events, ok, closed, closed_again;
} free_waiter;

/* Takes the 7 queued events, then blocks with -1 until closed. */
static void *free_waiter_main(void *arg) {
    free_waiter *w = (free_waiter *)arg;
    long long seq = -1;
    jv *doc;
    w->ok = 1;
    for (;;) {
        doc = next_event(w->sub, w->events < 7 ? 0 : -1, "free waiter");
        if (!doc) {
            w->ok = 0;
            return NULL;
        }
        if (type_is(doc, "closed")) {
            const char *r = jstr(doc, "event.reason");
            w->closed = r && strcmp(r, "app_freed") == 0;
            jfree(doc);
            break;
        }
        if (w->events == 0) {
            if (!type_is(doc, "subscribed")) w->ok = 0;
            seq = int_at(doc, "event.next_seq");
        } else if (int_at(doc, "event.seq") != seq++) {
            w->ok = 0;
        }
        w->events++;
        jfree(doc);
        if (w->events == 7) {
            pthread_mutex_lock(w->lock);
            (*w->blocked)++;
            pthread_mutex_unlock(w->lock);
        }
    }
    doc = next_event(w->sub, -1, "free waiter again");
    w->closed_again = doc && type_is(doc, "closed") && jstr(doc, "event.reason") &&
                      strcmp(jstr(doc, "event.reason"), "app_freed") == 0;
    if (doc) jfree(doc);
    return NULL;
}

static void test_app_free_wakes(void) {
    void *app = new_chat_app(), *late;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    int blocked = 0, i, n;
    free_waiter ws[FREE_WAITERS];
    pthread_t th[FREE_WAITERS];
    long long rev, s;
    jv *doc;
    begin("app_free_wakes");
    memset(ws, 0, sizeof ws);
    for (i = 0; i < FREE_WAITERS; i++) {
        ws[i].sub = jcode_mobile_subscribe(app, NULL);
        ws[i].lock = &lock;
        ws[i].blocked = &blocked;
    }
    late = jcode_mobile_subscribe(app, NULL);
    set_draft(app, "free-1");
    set_draft(app, "free-2");
    set_draft(app, "free-3");
    for (i = 0; i < FREE_WAITERS; i++) pthread_create(&th[i], NULL, free_waiter_main, &ws[i]);
    for (;;) {
        pthread_mutex_lock(&lock);
        n = blocked;
        pthread_mutex_unlock(&lock);
        if (n == FREE_WAITERS) break;
        sleep_ms(5);
    }
    sleep_ms(50); /* they block in next_event(-1) */
    /* Two more events, then the free: whether a waiter takes them before or
    ** after the free, it gets both, then closed app_freed. */
    set_draft(app, "free-4");
    jcode_mobile_app_free(app);
    for (i = 0; i < FREE_WAITERS; i++) {
        pthread_join(th[i], NULL);
        CHECK(ws[i].ok && ws[i].events == 9, "waiter %d: %d events in order %d, expected 9 (subscribed, 8)", i,
              ws[i].events, ws[i].ok);
        CHECK(ws[i].closed, "waiter %d: woke with closed app_freed", i);
        CHECK(ws[i].closed_again, "waiter %d: next_event after closed answers closed app_freed again", i);
        jcode_mobile_unsubscribe(ws[i].sub);
    }

    /* A subscription that was not read: what it held, then closed app_freed, again and again. */
    take_subscribed(late, &rev, &s, "late");
    for (i = 0; i < 8; i++) {
        doc = next_event(late, 0, "late queued");
        CHECK(doc && int_at(doc, "event.seq") == s + i, "late: queued event %d has seq %lld, expected %lld", i,
              int_at(doc, "event.seq"), s + i);
        if (doc) jfree(doc);
    }
    for (i = 0; i < 3; i++) {
        doc = next_event(late, i == 2 ? -1 : 0, "late closed");
        CHECK(doc && type_is(doc, "closed") && jstr(doc, "event.reason") &&
                  strcmp(jstr(doc, "event.reason"), "app_freed") == 0,
              "late: closed app_freed (call %d)", i);
        if (doc) jfree(doc);
    }
    jcode_mobile_unsubscribe(late);
    EXPECT_ERROR(jcode_mobile_next_event(late, 0), "invalid_handle", "subscription", NULL, "late after unsubscribe");
    end();
}

/* Eight waiters blocked with -1 and nothing queued: app_free wakes them all. */
static void *blocked_waiter_main(void *arg) {
    waiter *w = (waiter *)arg;
    long long rev, s;
    jv *doc;
    take_subscribed(w->sub, &rev, &s, "blocked waiter");
    doc = next_event(w->sub, -1, "blocked waiter");
    pthread_mutex_lock(&w->lock);
    w->returned = 1;
    snprintf(w->type, sizeof w->type, "%s", doc && jstr(doc, "event.type") ? jstr(doc, "event.type") : "?");
    snprintf(w->reason, sizeof w->reason, "%s", doc && jstr(doc, "event.reason") ? jstr(doc, "event.reason") : "?");
    pthread_mutex_unlock(&w->lock);
    if (doc) jfree(doc);
    doc = next_event(w->sub, -1, "blocked waiter again");
    CHECK(doc && type_is(doc, "closed") && jstr(doc, "event.reason") &&
              strcmp(jstr(doc, "event.reason"), "app_freed") == 0,
          "after app_free, next_event(-1) answers closed app_freed at once");
    if (doc) jfree(doc);
    return NULL;
}

static void test_app_free_wakes_blocked(void) {
    void *app = new_chat_app();
    waiter ws[FREE_WAITERS];
    pthread_t th[FREE_WAITERS];
    int i, early = 0;
    begin("app_free_wakes_blocked");
    for (i = 0; i < FREE_WAITERS; i++) {
        memset(&ws[i], 0, sizeof ws[i]);
        pthread_mutex_init(&ws[i].lock, NULL);
        ws[i].sub = jcode_mobile_subscribe(app, NULL);
        pthread_create(&th[i], NULL, blocked_waiter_main, &ws[i]);
    }
    sleep_ms(150);
    for (i = 0; i < FREE_WAITERS; i++) {
        pthread_mutex_lock(&ws[i].lock);
        early += ws[i].returned;
        pthread_mutex_unlock(&ws[i].lock);
    }
    CHECK(early == 0, "%d waiters returned before app_free", early);
    jcode_mobile_app_free(app);
    for (i = 0; i < FREE_WAITERS; i++) {
        pthread_join(th[i], NULL);
        CHECK(strcmp(ws[i].type, "closed") == 0 && strcmp(ws[i].reason, "app_freed") == 0,
              "waiter %d should wake with closed app_freed, got %s %s", i, ws[i].type, ws[i].reason);
        jcode_mobile_unsubscribe(ws[i].sub);
        pthread_mutex_destroy(&ws[i].lock);
    }
    end();
}

/* ================================================================ 9. callbacks */

#define CB_THREADS 8
#define CB_PER_THREAD 25

typedef struct {
    pthread_mutex_t lock;
    void *app;
    void *self;          /* its own subscription, once subscribe returned */
    int inside, overlaps; /* never two invocations at once */
    long long calls, next_seq, revision, state_events, effects_events, out_of_order, lost;
    long long closed_app_freed, after_close;
    int started;          /* subscribed seen */
    int reentrant_done;   /* the re-entrant test dispatched from inside */
    int unsubscribe_returned, late_calls;
    int unsubscribe_on_state; /* self-unsubscribe test */
    int dispatch_on_state;    /* re-entrant test */
    int slow;                 /* sleep in each call (no-callback-after-unsubscribe test) */
    pthread_t closed_thread;
} cb_state;

static void cb_init(cb_state *c, void *app) {
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    c->app = app;
}

static void record_callback(void *user_data, const char *event_json) {
    cb_state *c = (cb_state *)user_data;
    const char *err = NULL;
    size_t pos = 0;
    jv *e = jparse(event_json, strlen(event_json), &err, &pos);
    const char *type = jstr(e, "type");
    int dispatch_now = 0, unsubscribe_now = 0;
    void *self;

    pthread_mutex_lock(&c->lock);
    if (c->inside) c->overlaps++;
    c->inside = 1;
    if (c->unsubscribe_returned) c->late_calls++;
    if (c->closed_app_freed) c->after_close++;
    c->calls++;
    self = c->self;
    pthread_mutex_unlock(&c->lock);

    CHECK(e != NULL && type != NULL, "callback: event_json is not an event: %.200s", event_json);
    if (c->slow) sleep_ms(1);
    pthread_mutex_lock(&c->lock);
    if (type && strcmp(type, "subscribed") == 0) {
        c->started = 1;
        c->next_seq = int_at(e, "next_seq");
        c->revision = int_at(e, "revision");
    } else if (type && strcmp(type, "events_lost") == 0) {
        c->lost++;
    } else if (type && strcmp(type, "closed") == 0) {
        if (jstr(e, "reason") && strcmp(jstr(e, "reason"), "app_freed") == 0) {
            c->closed_app_freed++;
            c->closed_thread = pthread_self();
        }
    } else if (type) {
        if (!c->started || int_at(e, "seq") != c->next_seq) c->out_of_order++;
        c->next_seq = int_at(e, "seq") + 1;
        if (strcmp(type, "state_changed") == 0) {
            if (int_at(e, "revision") != c->revision + 1) c->out_of_order++;
            c->revision = int_at(e, "revision");
            c->state_events++;
            if (c->dispatch_on_state && c->state_events == 1) dispatch_now = 1;
            if (c->unsubscribe_on_state && c->state_events == 1) unsubscribe_now = 1;
        } else if (strcmp(type, "effects_requested") == 0) {
            c->effects_events++;
        }
    }
    pthread_mutex_unlock(&c->lock);

    if (dispatch_now) {
        /* A call on the same app from inside the callback: its events come after this call returns. */
        jv *r = parse_answer(jcode_mobile_dispatch(c->app, "{\"type\":\"set_draft\",\"value\":\"from-callback\"}"),
                             "re-entrant dispatch");
        CHECK(r && jtrue(r, "ok"), "a dispatch from inside the callback should work");
        if (r) jfree(r);
        pthread_mutex_lock(&c->lock);
        c->reentrant_done = 1;
        pthread_mutex_unlock(&c->lock);
    }
    if (unsubscribe_now) {
        CHECK(self != NULL, "self-unsubscribe: the handle is known");
        jcode_mobile_unsubscribe(self);
    }
    if (e) jfree(e);
    pthread_mutex_lock(&c->lock);
    c->inside = 0;
    pthread_mutex_unlock(&c->lock);
}

typedef struct {
    void *app;
    int index, count;
} cb_dispatcher;

static void *cb_dispatcher_main(void *arg) {
    cb_dispatcher *d = (cb_dispatcher *)arg;
    char value[64];
    int i;
    for (i = 0; i < d->count; i++) {
        snprintf(value, sizeof value, "cb-%d-%d", d->index, i);
        set_draft(d->app, value);
    }
    return NULL;
}

static void test_callback_concurrent(void) {
    void *app = new_chat_app(), *sub;
    cb_state c;
    cb_dispatcher ds[CB_THREADS];
    pthread_t th[CB_THREADS];
    long long want = (long long)CB_THREADS * CB_PER_THREAD, rev0 = state_revision(app);
    int i;
    begin("callback_concurrent");
    cb_init(&c, app);
    sub = jcode_mobile_subscribe_callback(app, "{\"capacity\":65536}", record_callback, &c);
    CHECK(sub != NULL, "subscribe_callback failed");
    pthread_mutex_lock(&c.lock);
    CHECK(c.started && c.calls == 1, "subscribed is delivered by the subscribing thread before it returns");
    pthread_mutex_unlock(&c.lock);
    for (i = 0; i < CB_THREADS; i++) {
        ds[i].app = app;
        ds[i].index = i;
        ds[i].count = CB_PER_THREAD;
        pthread_create(&th[i], NULL, cb_dispatcher_main, &ds[i]);
    }
    for (i = 0; i < CB_THREADS; i++) pthread_join(th[i], NULL);
    /* Every dispatching thread delivered (or left to the one delivering) before returning. */
    pthread_mutex_lock(&c.lock);
    CHECK(c.state_events == want, "callback: %lld state_changed, expected %lld", c.state_events, want);
    CHECK(c.effects_events == want, "callback: %lld effects_requested, expected %lld", c.effects_events, want);
    CHECK(c.out_of_order == 0, "callback: %lld events out of order", c.out_of_order);
    CHECK(c.overlaps == 0, "callback: %d invocations overlapped", c.overlaps);
    CHECK(c.lost == 0, "callback: %lld events_lost", c.lost);
    CHECK(c.revision == rev0 + want, "callback: last revision %lld, expected %lld", c.revision, rev0 + want);
    pthread_mutex_unlock(&c.lock);
    jcode_mobile_unsubscribe(sub);
    set_draft(app, "after");
    pthread_mutex_lock(&c.lock);
    CHECK(c.state_events == want, "no callback after unsubscribe");
    pthread_mutex_unlock(&c.lock);
    pthread_mutex_destroy(&c.lock);
    jcode_mobile_app_free(app);
    end();
}

static void test_callback_reentrant(void) {
    void *app = new_chat_app(), *sub;
    cb_state c;
    long long rev0 = state_revision(app);
    begin("callback_reentrant");
    cb_init(&c, app);
    c.dispatch_on_state = 1;
    sub = jcode_mobile_subscribe_callback(app, NULL, record_callback, &c);
    set_draft(app, "outer");
    pthread_mutex_lock(&c.lock);
    CHECK(c.reentrant_done, "the callback dispatched on its own app");
    CHECK(c.state_events == 2 && c.effects_events == 2, "both calls' events delivered: %lld state, %lld effects",
          c.state_events, c.effects_events);
    CHECK(c.revision == rev0 + 2 && c.out_of_order == 0 && c.overlaps == 0,
          "in order (revision %lld, %lld out of order, %d overlaps)", c.revision, c.out_of_order, c.overlaps);
    pthread_mutex_unlock(&c.lock);
    jcode_mobile_unsubscribe(sub);
    pthread_mutex_destroy(&c.lock);
    jcode_mobile_app_free(app);
    end();
}

static void test_callback_self_unsubscribe(void) {
    void *app = new_chat_app(), *sub;
    cb_state c;
    begin("callback_self_unsubscribe");
    cb_init(&c, app);
    c.unsubscribe_on_state = 1;
    sub = jcode_mobile_subscribe_callback(app, NULL, record_callback, &c);
    pthread_mutex_lock(&c.lock);
    c.self = sub;
    pthread_mutex_unlock(&c.lock);
    set_draft(app, "first");
    set_draft(app, "second");
    set_draft(app, "third");
    pthread_mutex_lock(&c.lock);
    CHECK(c.calls == 2, "subscribed and one state_changed, then nothing (%lld calls)", c.calls);
    CHECK(c.effects_events == 0, "the first call's effects_requested came after the unsubscribe: not delivered");
    pthread_mutex_unlock(&c.lock);
    EXPECT_ERROR(jcode_mobile_next_event(sub, 0), "invalid_handle", "subscription", NULL, "self-unsubscribed handle");
    jcode_mobile_unsubscribe(sub); /* released already: ignored */
    pthread_mutex_destroy(&c.lock);
    jcode_mobile_app_free(app);
    end();
}

static void test_callback_no_call_after_unsubscribe(void) {
    void *app = new_chat_app(), *sub;
    cb_state c;
    cb_dispatcher ds[4];
    pthread_t th[4];
    int i;
    long long calls;
    begin("callback_no_call_after_unsubscribe");
    cb_init(&c, app);
    c.slow = 1;
    sub = jcode_mobile_subscribe_callback(app, NULL, record_callback, &c);
    for (i = 0; i < 4; i++) {
        ds[i].app = app;
        ds[i].index = i;
        ds[i].count = 40;
        pthread_create(&th[i], NULL, cb_dispatcher_main, &ds[i]);
    }
    for (;;) {
        pthread_mutex_lock(&c.lock);
        calls = c.calls;
        pthread_mutex_unlock(&c.lock);
        if (calls >= 10) break;
        sleep_ms(1);
    }
    jcode_mobile_unsubscribe(sub); /* deliveries are running on the dispatching threads */
    pthread_mutex_lock(&c.lock);
    c.unsubscribe_returned = 1;
    pthread_mutex_unlock(&c.lock);
    for (i = 0; i < 4; i++) pthread_join(th[i], NULL);
    pthread_mutex_lock(&c.lock);
    CHECK(c.late_calls == 0, "%d callback invocations began after unsubscribe returned", c.late_calls);
    CHECK(c.overlaps == 0 && c.out_of_order == 0, "callbacks in order and one at a time (%d overlaps, %lld)",
          c.overlaps, c.out_of_order);
    pthread_mutex_unlock(&c.lock);
    pthread_mutex_destroy(&c.lock);
    jcode_mobile_app_free(app);
    end();
}

static void test_callback_app_freed(void) {
    void *app = new_chat_app(), *sub, *pull;
    cb_state c;
    jv *doc;
    begin("callback_app_freed");
    cb_init(&c, app);
    sub = jcode_mobile_subscribe_callback(app, NULL, record_callback, &c);
    pull = jcode_mobile_subscribe(app, "{\"kinds\":[\"state\"]}");
    set_draft(app, "before-free");
    jcode_mobile_app_free(app);
    pthread_mutex_lock(&c.lock);
    CHECK(c.state_events == 1 && c.effects_events == 1, "the events before app_free were delivered");
    CHECK(c.closed_app_freed == 1, "the callback received closed app_freed once (%lld)", c.closed_app_freed);
    CHECK(c.closed_app_freed == 1 && pthread_equal(c.closed_thread, pthread_self()),
          "closed app_freed is delivered by the freeing thread");
    CHECK(c.overlaps == 0 && c.out_of_order == 0, "in order, one at a time");
    pthread_mutex_unlock(&c.lock);
    EXPECT_ERROR(jcode_mobile_next_event(sub, 0), "invalid_handle", "subscription", "callback",
                 "a closed callback subscription is still not for next_event");
    jcode_mobile_unsubscribe(sub);
    pthread_mutex_lock(&c.lock);
    CHECK(c.after_close == 0, "no callback after closed (%lld)", c.after_close);
    pthread_mutex_unlock(&c.lock);
    /* The pull subscription of the same app: subscribed, its state_changed, closed. */
    doc = next_event(pull, 0, "pull subscribed");
    CHECK(doc && type_is(doc, "subscribed"), "pull: subscribed");
    if (doc) jfree(doc);
    doc = next_event(pull, 0, "pull state");
    CHECK(doc && type_is(doc, "state_changed"), "pull: state_changed");
    if (doc) jfree(doc);
    doc = next_event(pull, 0, "pull closed");
    CHECK(doc && type_is(doc, "closed"), "pull: closed");
    if (doc) jfree(doc);
    jcode_mobile_unsubscribe(pull);
    pthread_mutex_destroy(&c.lock);
    end();
}

/* A callback that frees its own app: the rest is delivered after it returns, then closed. */
typedef struct {
    void *app;
    int freed, closed, calls;
} freeing_cb;

static void free_from_callback(void *user_data, const char *event_json) {
    freeing_cb *f = (freeing_cb *)user_data;
    f->calls++;
    if (strstr(event_json, "\"state_changed\"") && !f->freed) {
        f->freed = 1;
        jcode_mobile_app_free(f->app);
    } else if (strstr(event_json, "\"app_freed\"")) {
        f->closed++;
    }
}

static void test_callback_frees_app(void) {
    freeing_cb f;
    void *sub;
    begin("callback_frees_app");
    memset(&f, 0, sizeof f);
    f.app = new_chat_app();
    sub = jcode_mobile_subscribe_callback(f.app, NULL, free_from_callback, &f);
    set_draft(f.app, "free-me");
    CHECK(f.freed == 1 && f.closed == 1, "the callback freed the app and then got closed app_freed (%d %d)", f.freed,
          f.closed);
    CHECK(f.calls == 4, "subscribed, state_changed, effects_requested (queued before the free), closed: %d calls",
          f.calls);
    EXPECT_ERROR(jcode_mobile_state(f.app), "invalid_handle", "app", NULL, "the app freed from a callback");
    jcode_mobile_unsubscribe(sub);
    end();
}

/* ---------------------------------------------------------------- bounded delivery */

/* A dispatch returns after delivering what it produced: the first thread's
** callback holds its delivery until a second thread has dispatched; the
** second then dispatches again and again until the first has returned. The
** first delivers its own two events at most, never the second's. */
typedef struct {
    pthread_mutex_t lock;
    void *app;
    pthread_t first;
    long long target_revision; /* the second thread's first dispatch applied */
    int inside_first, held, first_returned;
    long long on_first, on_second, last_seq, out_of_order, second_dispatches;
} hold_state;

static void hold_callback(void *user_data, const char *event_json) {
    hold_state *h = (hold_state *)user_data;
    const char *err = NULL;
    size_t pos = 0;
    jv *e = jparse(event_json, strlen(event_json), &err, &pos);
    int hold = 0;
    if (e && jstr(e, "type") && strcmp(jstr(e, "type"), "subscribed") != 0) {
        pthread_mutex_lock(&h->lock);
        if (int_at(e, "seq") <= h->last_seq) h->out_of_order++;
        h->last_seq = int_at(e, "seq");
        if (pthread_equal(pthread_self(), h->first)) {
            h->on_first++;
            if (!h->held) hold = h->held = h->inside_first = 1;
        } else {
            h->on_second++;
        }
        pthread_mutex_unlock(&h->lock);
    }
    /* Held until the second thread's dispatch is applied (its events are queued). */
    while (hold && state_revision(h->app) < h->target_revision) sleep_ms(1);
    if (e) jfree(e);
}

static void *hold_first_main(void *arg) {
    hold_state *h = (hold_state *)arg;
    set_draft(h->app, "first");
    pthread_mutex_lock(&h->lock);
    h->first_returned = 1;
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static void *hold_second_main(void *arg) {
    hold_state *h = (hold_state *)arg;
    char value[48];
    int inside = 0, done = 0;
    long long n = 0;
    while (!inside) {
        pthread_mutex_lock(&h->lock);
        inside = h->inside_first;
        pthread_mutex_unlock(&h->lock);
        if (!inside) sleep_ms(1);
    }
    /* Dispatches until the first thread's set_draft has returned (1 000 at most). */
    while (!done && n < 1000) {
        snprintf(value, sizeof value, "second-%lld", n);
        set_draft(h->app, value);
        n++;
        pthread_mutex_lock(&h->lock);
        done = h->first_returned;
        pthread_mutex_unlock(&h->lock);
    }
    pthread_mutex_lock(&h->lock);
    h->second_dispatches = n;
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

static void test_callback_dispatch_is_bounded(void) {
    hold_state h;
    void *sub;
    pthread_t first, second;
    begin("callback_dispatch_is_bounded");
    memset(&h, 0, sizeof h);
    pthread_mutex_init(&h.lock, NULL);
    h.app = new_chat_app();
    h.target_revision = state_revision(h.app) + 2;
    sub = jcode_mobile_subscribe_callback(h.app, "{\"capacity\":65536}", hold_callback, &h);
    pthread_mutex_lock(&h.lock);
    pthread_create(&first, NULL, hold_first_main, &h);
    h.first = first;
    pthread_mutex_unlock(&h.lock);
    pthread_create(&second, NULL, hold_second_main, &h);
    pthread_join(first, NULL);
    pthread_join(second, NULL);
    pthread_mutex_lock(&h.lock);
    CHECK(h.on_first <= 2, "the first set_draft delivered %lld events: at most its own 2, none of the second thread's",
          h.on_first);
    CHECK(h.second_dispatches >= 1, "the second thread dispatched while the first was held");
    CHECK(h.on_first + h.on_second == 2 + 2 * h.second_dispatches,
          "every event delivered once: %lld + %lld, expected %lld", h.on_first, h.on_second,
          2 + 2 * h.second_dispatches);
    CHECK(h.out_of_order == 0, "in seq order (%lld out of order)", h.out_of_order);
    pthread_mutex_unlock(&h.lock);
    jcode_mobile_unsubscribe(sub);
    jcode_mobile_app_free(h.app);
    pthread_mutex_destroy(&h.lock);
    end();
}

/* ---------------------------------------------------------------- no nesting per subscription */

/* 2 000 callback subscriptions of one app, each dispatching on the app the
** first time it sees a state_changed, on a thread of 512 KiB of stack (the
** default of an iOS secondary thread): a dispatch from a callback only
** queues, so the stack does not grow with the subscriptions. */
#define NEST_SUBS 2000
#define NEST_STACK (512 * 1024)

typedef struct {
    void *app;
    int index, dispatched;
    long long calls;
} nest_cb;

typedef struct {
    nest_cb cbs[NEST_SUBS];
    void *subs[NEST_SUBS];
    long long revision_before, revision_after;
    int subscribed;
} nest_run;

static void nest_callback(void *user_data, const char *event_json) {
    nest_cb *n = (nest_cb *)user_data;
    n->calls++;
    if (!n->dispatched && strstr(event_json, "\"type\":\"state_changed\"")) {
        char value[32];
        n->dispatched = 1;
        snprintf(value, sizeof value, "from-callback-%d", n->index);
        set_draft(n->app, value);
    }
}

static void *nest_main(void *arg) {
    nest_run *r = (nest_run *)arg;
    void *app = new_chat_app();
    int i;
    r->revision_before = state_revision(app);
    for (i = 0; i < NEST_SUBS; i++) {
        r->cbs[i].app = app;
        r->cbs[i].index = i;
        r->subs[i] = jcode_mobile_subscribe_callback(app, "{\"kinds\":[\"state\"],\"capacity\":4}", nest_callback,
                                                     &r->cbs[i]);
        if (r->subs[i]) r->subscribed++;
    }
    set_draft(app, "start");
    r->revision_after = state_revision(app);
    for (i = 0; i < NEST_SUBS; i++) jcode_mobile_unsubscribe(r->subs[i]);
    jcode_mobile_app_free(app);
    return NULL;
}

static void test_callback_no_nesting(void) {
    nest_run *r = calloc(1, sizeof *r);
    pthread_attr_t attr;
    pthread_t t;
    int i, dispatched = 0;
    begin("callback_no_nesting");
    if (!CHECK(r != NULL, "calloc")) return;
    pthread_attr_init(&attr);
    CHECK(pthread_attr_setstacksize(&attr, NEST_STACK) == 0, "a thread of 512 KiB of stack");
    CHECK(pthread_create(&t, &attr, nest_main, r) == 0, "pthread_create");
    pthread_join(t, NULL);
    pthread_attr_destroy(&attr);
    for (i = 0; i < NEST_SUBS; i++) dispatched += r->cbs[i].dispatched;
    CHECK(r->subscribed == NEST_SUBS, "%d subscriptions, expected 2000", r->subscribed);
    CHECK(dispatched == NEST_SUBS, "%d callbacks dispatched, expected 2000", dispatched);
    CHECK(r->revision_after == r->revision_before + 1 + NEST_SUBS, "revision %lld, expected %lld", r->revision_after,
          r->revision_before + 1 + NEST_SUBS);
    free(r);
    end();
}

/* ================================================================ main */

int main(void) {
    const char *answers = getenv("JCODE_MOBILE_ANSWERS");
    signal(SIGALRM, on_alarm);
    if (answers && *answers) g_answers = fopen(answers, "w");
    test_bad_input();
    test_timeouts();
    test_fan_out();
    test_slow_subscriber();
    test_byte_budget();
    test_kinds();
    test_tree_kind();
    test_unsubscribe_wakes();
    test_shared_waiters();
    test_app_free_wakes();
    test_app_free_wakes_blocked();
    test_callback_concurrent();
    test_callback_reentrant();
    test_callback_self_unsubscribe();
    test_callback_no_call_after_unsubscribe();
    test_callback_app_freed();
    test_callback_frees_app();
    test_callback_dispatch_is_bounded();
    test_callback_no_nesting();
    if (g_answers) fclose(g_answers);
    printf("events: %ld passed, %ld failed\n", g_passed, g_failed);
    return g_failed == 0 ? 0 : 1;
}
