/*
** tiny_host.c — the smallest C host, built the way a host project builds
** against an installed library:
**
**     cc tiny_host.c $(pkg-config --cflags --libs jcode_mobile) -o tiny_host
**
** It checks that the library it loaded is the one it was compiled against,
** makes an app, sends one action, reads the state, and frees everything (so
** valgrind finds nothing but the library's one-time globals, which the
** installed suppression file covers). make test-install runs it.
**
** Exit status: 0 when every step answered as expected.
*/
#include <jcode_mobile.h>

#include <stdio.h>
#include <string.h>

static int expect(const char *what, char *reply, const char *part) {
    int ok = reply != NULL && strstr(reply, part) != NULL;
    if (!ok) fprintf(stderr, "tiny_host: %s: expected %s in %s\n", what, part, reply ? reply : "(null)");
    jcode_mobile_string_free(reply);
    return ok;
}

int main(void) {
    void *app;
    int ok;
    if (strcmp(jcode_mobile_version(), JCODE_MOBILE_VERSION) != 0 ||
        jcode_mobile_abi_version() != JCODE_MOBILE_ABI_VERSION) {
        fprintf(stderr, "tiny_host: compiled against %s (ABI %d), loaded %s (ABI %u)\n", JCODE_MOBILE_VERSION,
                JCODE_MOBILE_ABI_VERSION, jcode_mobile_version(), (unsigned)jcode_mobile_abi_version());
        return 1;
    }
    app = jcode_mobile_app_new(NULL);
    if (app == NULL) {
        char *why = jcode_mobile_last_error();
        fprintf(stderr, "tiny_host: app_new failed: %s\n", why ? why : "(null)");
        jcode_mobile_string_free(why);
        return 1;
    }
    ok = expect("dispatch(set_host)",
                jcode_mobile_dispatch(app, "{\"type\":\"set_host\",\"value\":\"devbox.local\"}"),
                "{\"ok\":true,\"revision\":1,") &&
         expect("state", jcode_mobile_state(app), "\"devbox.local\"");
    jcode_mobile_app_free(app);
    if (ok) printf("tiny_host: jcode_mobile %s works\n", jcode_mobile_version());
    return ok ? 0 : 1;
}
