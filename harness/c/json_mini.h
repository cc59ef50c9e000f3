/*
** json_mini.h — a small, strict JSON reader for the C harness.
**
** Parses a complete JSON text (RFC 8259) into a tree of `jv` nodes:
**   - strings are decoded (all escapes, \u surrogate pairs) into UTF-8 and
**     kept with their length, so an embedded \u0000 survives;
**   - numbers keep a double and, for integral literals that fit, a long long;
**   - objects keep their keys in order; a duplicate key is a parse error;
**   - nesting deeper than JMINI_MAX_DEPTH is a parse error (no stack overflow);
**   - trailing characters, control characters in strings, bad escapes,
**     leading zeros and lone surrogates are errors.
** UTF-8 validity of the raw text is checked separately with jmini_utf8_bad().
**
** Values are looked up with a path: "state.transcript[-1].text" (keys
** separated by dots, [n] indexes an array, a negative n counts from the end).
**
** Everything is reentrant (no globals), so worker threads may use it.
** Included only by harness.c: all functions are static.
*/
#ifndef JSON_MINI_H
#define JSON_MINI_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JMINI_MAX_DEPTH 512

#if defined(__GNUC__) || defined(__clang__)
#  define JMINI_PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#  define JMINI_UNUSED __attribute__((unused))
#else
#  define JMINI_PRINTF_LIKE(f, a)
#  define JMINI_UNUSED
#endif

/* ---------------------------------------------------------------- memory */

static void *jmini_xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "harness: out of memory\n");
        exit(2);
    }
    return q;
}

static void *jmini_xmalloc(size_t n) { return jmini_xrealloc(NULL, n); }

/* --------------------------------------------------------- growable text */

typedef struct {
    char *d;
    size_t n, cap;
} sbuf;

static void sb_reserve(sbuf *b, size_t extra) {
    if (b->n + extra + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 64;
        while (c < b->n + extra + 1) c *= 2;
        b->d = (char *)jmini_xrealloc(b->d, c);
        b->cap = c;
    }
}

static void sb_putn(sbuf *b, const char *s, size_t n) {
    sb_reserve(b, n);
    if (n) memcpy(b->d + b->n, s, n);
    b->n += n;
    b->d[b->n] = '\0';
}

static void sb_putc(sbuf *b, char c) { sb_putn(b, &c, 1); }

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, strlen(s)); }

static JMINI_UNUSED JMINI_PRINTF_LIKE(2, 3) void sb_printf(sbuf *b, const char *fmt, ...) {
    va_list ap, ap2;
    int k;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k > 0) {
        sb_reserve(b, (size_t)k);
        vsnprintf(b->d + b->n, (size_t)k + 1, fmt, ap2);
        b->n += (size_t)k;
    }
    va_end(ap2);
}

/* Appends s as a JSON string literal (quoted, escaped). */
static JMINI_UNUSED void sb_json_string(sbuf *b, const char *s) {
    static const char hex[] = "0123456789abcdef";
    sb_putc(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '"': sb_puts(b, "\\\""); break;
        case '\\': sb_puts(b, "\\\\"); break;
        case '\n': sb_puts(b, "\\n"); break;
        case '\r': sb_puts(b, "\\r"); break;
        case '\t': sb_puts(b, "\\t"); break;
        default:
            if (c < 0x20) {
                char esc[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], '\0'};
                sb_puts(b, esc);
            } else {
                sb_putc(b, (char)c);
            }
        }
    }
    sb_putc(b, '"');
}

/* The buffer's text (never NULL); the caller frees it. */
static char *sb_take(sbuf *b) {
    char *d;
    sb_reserve(b, 0);
    b->d[b->n] = '\0';
    d = b->d;
    b->d = NULL;
    b->n = b->cap = 0;
    return d;
}

/* ------------------------------------------------------------------ UTF-8 */

/* Index of the first byte that does not start a well-formed UTF-8 sequence
** (overlongs, surrogates and code points above U+10FFFF are ill-formed), or
** n when all n bytes are valid. */
static JMINI_UNUSED size_t jmini_utf8_bad(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned c = s[i];
        size_t need, k;
        unsigned long cp, min;
        if (c < 0x80) {
            i++;
            continue;
        } else if ((c & 0xE0) == 0xC0) {
            need = 1, cp = c & 0x1F, min = 0x80;
        } else if ((c & 0xF0) == 0xE0) {
            need = 2, cp = c & 0x0F, min = 0x800;
        } else if ((c & 0xF8) == 0xF0) {
            need = 3, cp = c & 0x07, min = 0x10000;
        } else {
            return i;
        }
        if (n - i <= need) return i;
        for (k = 1; k <= need; k++) {
            unsigned cc = s[i + k];
            if ((cc & 0xC0) != 0x80) return i;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
        i += need + 1;
    }
    return n;
}

static void jmini_utf8_put(sbuf *b, unsigned long cp) {
    char out[4];
    if (cp < 0x80) {
        out[0] = (char)cp;
        sb_putn(b, out, 1);
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        sb_putn(b, out, 2);
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        sb_putn(b, out, 3);
    } else {
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        sb_putn(b, out, 4);
    }
}

/* ------------------------------------------------------------------- tree */

typedef enum { JNULL, JBOOL, JNUM, JSTR, JARR, JOBJ } jkind;

typedef struct jv jv;
struct jv {
    jkind kind;
    int boolean;     /* JBOOL */
    double num;      /* JNUM */
    int is_int;      /* JNUM: an integral literal that fits a long long */
    long long ival;  /* JNUM when is_int */
    char *str;       /* JSTR: decoded UTF-8, NUL-terminated */
    size_t len;      /* JSTR: length in bytes (may contain NUL) */
    size_t n, cap;   /* JARR / JOBJ: number of members */
    jv **items;      /* JARR / JOBJ: the values */
    char **keys;     /* JOBJ: decoded keys */
    size_t *klens;   /* JOBJ: key lengths */
};

static jv *jnew(jkind kind) {
    jv *v = (jv *)jmini_xmalloc(sizeof *v);
    memset(v, 0, sizeof *v);
    v->kind = kind;
    return v;
}

static void jfree(jv *v) {
    size_t i;
    if (!v) return;
    for (i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->klens);
    free(v->str);
    free(v);
}

static void jpush(jv *parent, char *key, size_t klen, jv *child) {
    if (parent->n == parent->cap) {
        size_t cap = parent->cap ? parent->cap * 2 : 8;
        parent->items = (jv **)jmini_xrealloc(parent->items, cap * sizeof *parent->items);
        if (parent->kind == JOBJ) {
            parent->keys = (char **)jmini_xrealloc(parent->keys, cap * sizeof *parent->keys);
            parent->klens = (size_t *)jmini_xrealloc(parent->klens, cap * sizeof *parent->klens);
        }
        parent->cap = cap;
    }
    parent->items[parent->n] = child;
    if (parent->kind == JOBJ) {
        parent->keys[parent->n] = key;
        parent->klens[parent->n] = klen;
    }
    parent->n++;
}

/* ----------------------------------------------------------------- parser */

typedef struct {
    const char *s;
    size_t len, pos;
    int depth;
    const char *err;
} jparser;

static int jp_fail(jparser *p, const char *msg) {
    if (!p->err) p->err = msg;
    return 0;
}

static void jp_ws(jparser *p) {
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            p->pos++;
        else
            break;
    }
}

static int jp_isdigit(char c) { return c >= '0' && c <= '9'; }

static int jp_hex4(jparser *p, unsigned *out) {
    unsigned v = 0;
    int i;
    if (p->len - p->pos < 4) return jp_fail(p, "truncated \\u escape");
    for (i = 0; i < 4; i++) {
        char c = p->s[p->pos + (size_t)i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return jp_fail(p, "bad hex digit in \\u escape");
    }
    p->pos += 4;
    *out = v;
    return 1;
}

/* At a '"': decodes the string into a fresh buffer. */
static int jp_string(jparser *p, char **out, size_t *outlen) {
    sbuf b = {NULL, 0, 0};
    p->pos++; /* the opening quote */
    for (;;) {
        unsigned char c;
        if (p->pos >= p->len) goto fail_unterminated;
        c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20) {
            jp_fail(p, "control character in string");
            goto fail;
        }
        if (c != '\\') {
            sb_putc(&b, (char)c);
            p->pos++;
            continue;
        }
        p->pos++;
        if (p->pos >= p->len) goto fail_unterminated;
        c = (unsigned char)p->s[p->pos++];
        switch (c) {
        case '"': sb_putc(&b, '"'); break;
        case '\\': sb_putc(&b, '\\'); break;
        case '/': sb_putc(&b, '/'); break;
        case 'b': sb_putc(&b, '\b'); break;
        case 'f': sb_putc(&b, '\f'); break;
        case 'n': sb_putc(&b, '\n'); break;
        case 'r': sb_putc(&b, '\r'); break;
        case 't': sb_putc(&b, '\t'); break;
        case 'u': {
            unsigned u, lo;
            unsigned long cp;
            if (!jp_hex4(p, &u)) goto fail;
            if (u >= 0xD800 && u <= 0xDBFF) {
                if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
                    jp_fail(p, "unpaired high surrogate");
                    goto fail;
                }
                p->pos += 2;
                if (!jp_hex4(p, &lo)) goto fail;
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    jp_fail(p, "high surrogate not followed by a low surrogate");
                    goto fail;
                }
                cp = 0x10000UL + (((unsigned long)u - 0xD800UL) << 10) + ((unsigned long)lo - 0xDC00UL);
            } else if (u >= 0xDC00 && u <= 0xDFFF) {
                jp_fail(p, "unpaired low surrogate");
                goto fail;
            } else {
                cp = u;
            }
            jmini_utf8_put(&b, cp);
            break;
        }
        default:
            jp_fail(p, "invalid escape");
            goto fail;
        }
    }
    *outlen = b.n;
    *out = sb_take(&b);
    return 1;
fail_unterminated:
    jp_fail(p, "unterminated string");
fail:
    free(b.d);
    return 0;
}

static jv *jp_number(jparser *p) {
    size_t start = p->pos, n;
    int integral = 1;
    char *text;
    jv *v;
    if (p->pos < p->len && p->s[p->pos] == '-') p->pos++;
    if (p->pos < p->len && p->s[p->pos] == '0') {
        p->pos++;
    } else if (p->pos < p->len && p->s[p->pos] >= '1' && p->s[p->pos] <= '9') {
        while (p->pos < p->len && jp_isdigit(p->s[p->pos])) p->pos++;
    } else {
        jp_fail(p, "bad number");
        return NULL;
    }
    if (p->pos < p->len && p->s[p->pos] == '.') {
        p->pos++;
        if (!(p->pos < p->len && jp_isdigit(p->s[p->pos]))) {
            jp_fail(p, "digit expected after '.'");
            return NULL;
        }
        while (p->pos < p->len && jp_isdigit(p->s[p->pos])) p->pos++;
        integral = 0;
    }
    if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-')) p->pos++;
        if (!(p->pos < p->len && jp_isdigit(p->s[p->pos]))) {
            jp_fail(p, "digit expected in exponent");
            return NULL;
        }
        while (p->pos < p->len && jp_isdigit(p->s[p->pos])) p->pos++;
        integral = 0;
    }
    n = p->pos - start;
    text = (char *)jmini_xmalloc(n + 1);
    memcpy(text, p->s + start, n);
    text[n] = '\0';
    v = jnew(JNUM);
    v->num = strtod(text, NULL);
    if (integral) {
        const char *q = text;
        int neg = 0, overflow = 0;
        unsigned long long acc = 0, limit;
        if (*q == '-') neg = 1, q++;
        limit = neg ? (unsigned long long)LLONG_MAX + 1ULL : (unsigned long long)LLONG_MAX;
        for (; *q; q++) {
            unsigned d = (unsigned)(*q - '0');
            if (acc > (limit - d) / 10) {
                overflow = 1;
                break;
            }
            acc = acc * 10 + d;
        }
        if (!overflow) {
            v->is_int = 1;
            if (!neg)
                v->ival = (long long)acc;
            else if (acc == (unsigned long long)LLONG_MAX + 1ULL)
                v->ival = LLONG_MIN;
            else
                v->ival = -(long long)acc;
        }
    }
    free(text);
    return v;
}

static jv *jp_value(jparser *p);

static jv *jp_array(jparser *p) {
    jv *arr;
    if (++p->depth > JMINI_MAX_DEPTH) {
        jp_fail(p, "nesting too deep");
        return NULL;
    }
    arr = jnew(JARR);
    p->pos++; /* '[' */
    jp_ws(p);
    if (p->pos < p->len && p->s[p->pos] == ']') {
        p->pos++;
        p->depth--;
        return arr;
    }
    for (;;) {
        jv *item = jp_value(p);
        if (!item) goto fail;
        jpush(arr, NULL, 0, item);
        jp_ws(p);
        if (p->pos >= p->len) {
            jp_fail(p, "unterminated array");
            goto fail;
        }
        if (p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->s[p->pos] == ']') {
            p->pos++;
            break;
        }
        jp_fail(p, "expected ',' or ']'");
        goto fail;
    }
    p->depth--;
    return arr;
fail:
    jfree(arr);
    return NULL;
}

static jv *jp_object(jparser *p) {
    jv *obj;
    if (++p->depth > JMINI_MAX_DEPTH) {
        jp_fail(p, "nesting too deep");
        return NULL;
    }
    obj = jnew(JOBJ);
    p->pos++; /* '{' */
    jp_ws(p);
    if (p->pos < p->len && p->s[p->pos] == '}') {
        p->pos++;
        p->depth--;
        return obj;
    }
    for (;;) {
        char *key;
        size_t klen, i;
        jv *value;
        jp_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != '"') {
            jp_fail(p, "expected a string key");
            goto fail;
        }
        if (!jp_string(p, &key, &klen)) goto fail;
        for (i = 0; i < obj->n; i++) {
            if (obj->klens[i] == klen && memcmp(obj->keys[i], key, klen) == 0) {
                free(key);
                jp_fail(p, "duplicate key");
                goto fail;
            }
        }
        jp_ws(p);
        if (p->pos >= p->len || p->s[p->pos] != ':') {
            free(key);
            jp_fail(p, "expected ':'");
            goto fail;
        }
        p->pos++;
        value = jp_value(p);
        if (!value) {
            free(key);
            goto fail;
        }
        jpush(obj, key, klen, value);
        jp_ws(p);
        if (p->pos >= p->len) {
            jp_fail(p, "unterminated object");
            goto fail;
        }
        if (p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->s[p->pos] == '}') {
            p->pos++;
            break;
        }
        jp_fail(p, "expected ',' or '}'");
        goto fail;
    }
    p->depth--;
    return obj;
fail:
    jfree(obj);
    return NULL;
}

static int jp_literal(jparser *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0) return jp_fail(p, "invalid literal");
    p->pos += n;
    return 1;
}

static jv *jp_value(jparser *p) {
    jv *v;
    jp_ws(p);
    if (p->pos >= p->len) {
        jp_fail(p, "unexpected end of input");
        return NULL;
    }
    switch (p->s[p->pos]) {
    case '{': return jp_object(p);
    case '[': return jp_array(p);
    case '"': {
        char *str;
        size_t n;
        if (!jp_string(p, &str, &n)) return NULL;
        v = jnew(JSTR);
        v->str = str;
        v->len = n;
        return v;
    }
    case 't':
    case 'f': {
        int is_true = p->s[p->pos] == 't';
        if (!jp_literal(p, is_true ? "true" : "false")) return NULL;
        v = jnew(JBOOL);
        v->boolean = is_true;
        return v;
    }
    case 'n':
        if (!jp_literal(p, "null")) return NULL;
        return jnew(JNULL);
    default:
        if (p->s[p->pos] == '-' || jp_isdigit(p->s[p->pos])) return jp_number(p);
        jp_fail(p, "unexpected character");
        return NULL;
    }
}

/* Parses exactly one JSON value spanning s[0..len). On failure returns NULL
** and sets *err / *errpos. */
static jv *jparse(const char *s, size_t len, const char **err, size_t *errpos) {
    jparser p;
    jv *v;
    p.s = s;
    p.len = len;
    p.pos = 0;
    p.depth = 0;
    p.err = NULL;
    v = jp_value(&p);
    if (v) {
        jp_ws(&p);
        if (p.pos != p.len) {
            jfree(v);
            v = NULL;
            jp_fail(&p, "trailing characters after the value");
        }
    }
    if (!v) {
        if (err) *err = p.err ? p.err : "parse error";
        if (errpos) *errpos = p.pos;
    }
    return v;
}

/* ----------------------------------------------------------------- lookup */

/* The value at `path`, or NULL when any step is missing or of another kind. */
static const jv *jget(const jv *v, const char *path) {
    const char *p = path;
    while (v && *p) {
        if (*p == '.') {
            p++;
        } else if (*p == '[') {
            char *end;
            long idx = strtol(p + 1, &end, 10);
            if (end == p + 1 || *end != ']' || v->kind != JARR) return NULL;
            if (idx < 0) idx += (long)v->n;
            if (idx < 0 || (size_t)idx >= v->n) return NULL;
            v = v->items[idx];
            p = end + 1;
        } else {
            size_t k = strcspn(p, ".["), i;
            const jv *next = NULL;
            if (v->kind != JOBJ) return NULL;
            for (i = 0; i < v->n; i++) {
                if (v->klens[i] == k && memcmp(v->keys[i], p, k) == 0) {
                    next = v->items[i];
                    break;
                }
            }
            v = next;
            p += k;
        }
    }
    return v;
}

/* The string at path (NULL if absent or not a string). */
static const char *jstr(const jv *v, const char *path) {
    const jv *x = v ? jget(v, path) : NULL;
    return x && x->kind == JSTR ? x->str : NULL;
}

/* 1 and *out when path holds an integer. */
static JMINI_UNUSED int jint(const jv *v, const char *path, long long *out) {
    const jv *x = v ? jget(v, path) : NULL;
    if (!x || x->kind != JNUM || !x->is_int) return 0;
    *out = x->ival;
    return 1;
}

/* 1 when path holds the boolean true. */
static JMINI_UNUSED int jtrue(const jv *v, const char *path) {
    const jv *x = v ? jget(v, path) : NULL;
    return x && x->kind == JBOOL && x->boolean;
}

/* Array length at path, or -1. */
static JMINI_UNUSED long jlen(const jv *v, const char *path) {
    const jv *x = v ? jget(v, path) : NULL;
    return x && x->kind == JARR ? (long)x->n : -1;
}

/* A short, human description of a value for failure messages. */
static JMINI_UNUSED void jdesc(const jv *v, char *buf, size_t n) {
    if (!v) {
        snprintf(buf, n, "(missing)");
        return;
    }
    switch (v->kind) {
    case JNULL: snprintf(buf, n, "null"); break;
    case JBOOL: snprintf(buf, n, "%s", v->boolean ? "true" : "false"); break;
    case JNUM:
        if (v->is_int)
            snprintf(buf, n, "%lld", v->ival);
        else
            snprintf(buf, n, "%g", v->num);
        break;
    case JSTR: snprintf(buf, n, "\"%.160s\"%s", v->str, v->len > 160 ? "…" : ""); break;
    case JARR: snprintf(buf, n, "array[%lu]", (unsigned long)v->n); break;
    case JOBJ: snprintf(buf, n, "object{%lu}", (unsigned long)v->n); break;
    }
}

/* Whether `needle` occurs in any string value or key under v. */
static JMINI_UNUSED int jcontains(const jv *v, const char *needle) {
    size_t i, nl = strlen(needle);
    if (!v) return 0;
    if (v->kind == JSTR && v->len >= nl) {
        for (i = 0; i + nl <= v->len; i++)
            if (memcmp(v->str + i, needle, nl) == 0) return 1;
    }
    for (i = 0; i < v->n; i++) {
        if (v->keys && strstr(v->keys[i], needle)) return 1;
        if (jcontains(v->items[i], needle)) return 1;
    }
    return 0;
}

/* --------------------------------------------------------------- compare */

static int jdiff_at(const jv *a, const jv *b, char *path, size_t cap, size_t len) {
    size_t i, j, l2;
    int w;
    if (!a || !b) return a != b;
    if (a->kind != b->kind) return 1;
    switch (a->kind) {
    case JNULL: return 0;
    case JBOOL: return !a->boolean != !b->boolean;
    case JNUM:
        if (a->is_int && b->is_int) return a->ival != b->ival;
        return a->num < b->num || a->num > b->num;
    case JSTR: return a->len != b->len || memcmp(a->str, b->str, a->len) != 0;
    case JARR:
        if (a->n != b->n) {
            snprintf(path + len, cap - len, " (length %lu vs %lu)", (unsigned long)a->n, (unsigned long)b->n);
            return 1;
        }
        for (i = 0; i < a->n; i++) {
            w = snprintf(path + len, cap - len, "/%lu", (unsigned long)i);
            l2 = w < 0 ? len : (len + (size_t)w < cap ? len + (size_t)w : cap - 1);
            if (jdiff_at(a->items[i], b->items[i], path, cap, l2)) return 1;
            path[len] = '\0';
        }
        return 0;
    case JOBJ:
        for (i = 0; i < a->n; i++) {
            const jv *other = NULL;
            for (j = 0; j < b->n; j++)
                if (b->klens[j] == a->klens[i] && memcmp(b->keys[j], a->keys[i], a->klens[i]) == 0) other = b->items[j];
            w = snprintf(path + len, cap - len, "/%s%s", a->keys[i], other ? "" : " (missing on the right)");
            l2 = w < 0 ? len : (len + (size_t)w < cap ? len + (size_t)w : cap - 1);
            if (!other || jdiff_at(a->items[i], other, path, cap, l2)) return 1;
            path[len] = '\0';
        }
        if (a->n != b->n) {
            snprintf(path + len, cap - len, " (%lu members vs %lu)", (unsigned long)a->n, (unsigned long)b->n);
            return 1;
        }
        return 0;
    }
    return 1;
}

/* 1 when a and b differ (object members compared in any order); path gets
** the JSON Pointer of the first difference. */
static JMINI_UNUSED int jdiff(const jv *a, const jv *b, char *path, size_t cap) {
    if (cap == 0) return 1;
    path[0] = '\0';
    return jdiff_at(a, b, path, cap, 0);
}

/* Removes the member `key` of object v and returns it (owned by the caller),
** or NULL. */
static JMINI_UNUSED jv *jdetach(jv *v, const char *key) {
    size_t i, k = strlen(key);
    if (!v || v->kind != JOBJ) return NULL;
    for (i = 0; i < v->n; i++) {
        if (v->klens[i] == k && memcmp(v->keys[i], key, k) == 0) {
            jv *out = v->items[i];
            free(v->keys[i]);
            memmove(v->items + i, v->items + i + 1, (v->n - i - 1) * sizeof *v->items);
            memmove(v->keys + i, v->keys + i + 1, (v->n - i - 1) * sizeof *v->keys);
            memmove(v->klens + i, v->klens + i + 1, (v->n - i - 1) * sizeof *v->klens);
            v->n--;
            return out;
        }
    }
    return NULL;
}

#endif /* JSON_MINI_H */
