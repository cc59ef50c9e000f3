/*
 * checks.h: the pass and fail counts of a C test program and its CHECK
 * (harness.c, events.c, two_copies.c).
 *
 * Define CHECKS_FILE (the file name a failure names) before including it, and
 * CHECKS_THREADED when threads check at once (the counts are then kept under a
 * mutex). g_section names the part of the program a failure is in; set it
 * between parts, from the main thread. CHECK(cond, fmt, ...) counts a pass or
 * prints the failure with its line and returns whether cond held.
 */
#ifndef JCODE_MOBILE_CHECKS_H
#define JCODE_MOBILE_CHECKS_H

#include "json_mini.h"

#include <stdarg.h>
#include <stdio.h>

#ifndef CHECKS_FILE
#  error "define CHECKS_FILE (the file a failure names) before including checks.h"
#endif

#ifdef CHECKS_THREADED
#  include <pthread.h>
static pthread_mutex_t g_check_lock = PTHREAD_MUTEX_INITIALIZER;
#  define CHECKS_LOCK() pthread_mutex_lock(&g_check_lock)
#  define CHECKS_UNLOCK() pthread_mutex_unlock(&g_check_lock)
#else
#  define CHECKS_LOCK() ((void)0)
#  define CHECKS_UNLOCK() ((void)0)
#endif

static long g_passed, g_failed;
static const char *volatile g_section = "";

static JMINI_PRINTF_LIKE(3, 4) int check_at(int line, int ok, const char *fmt, ...) {
    va_list ap;
    CHECKS_LOCK();
    if (ok) {
        g_passed++;
    } else {
        g_failed++;
        if (g_section[0] != '\0') {
            printf("FAIL [%s] %s:%d: ", g_section, CHECKS_FILE, line);
        } else {
            printf("FAIL %s:%d: ", CHECKS_FILE, line);
        }
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
    }
    CHECKS_UNLOCK();
    return ok;
}

#define CHECK(cond, ...) check_at(__LINE__, (cond) ? 1 : 0, __VA_ARGS__)

/* Under AddressSanitizer, LeakSanitizer is told to pass over what the Swift
 * runtime's one-time initialisers of globals allocate (harness.c says why). */
#if defined(__SANITIZE_ADDRESS__)
#  define CHECKS_ASAN 1
#elif defined(__has_feature)
#  if __has_feature(address_sanitizer)
#    define CHECKS_ASAN 1
#  endif
#endif
#ifdef CHECKS_ASAN
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:threading_impl::once_slow\n"; }
#endif

#endif
