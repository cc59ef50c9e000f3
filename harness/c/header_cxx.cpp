// Compiles the header as C++ (make header-check): extern "C" guards and
// declarations must be valid C++ with warnings fatal.
#include "jcode_mobile.h"

static_assert(JCODE_MOBILE_ABI_VERSION >= 1, "ABI version macro");
static_assert(JCODE_MOBILE_VERSION_CHECK(0, 1, 0), "version check macro");

int jcode_mobile_header_cxx_check() {
    void *(*create)(const char *) = &jcode_mobile_app_new;
    void (*destroy)(void *) = &jcode_mobile_app_free;
    char *(*dispatch)(void *, const char *) = &jcode_mobile_dispatch;
    char *(*event)(void *, const char *) = &jcode_mobile_platform_event;
    char *(*state)(void *) = &jcode_mobile_state;
    char *(*tree)(void *) = &jcode_mobile_tree;
    char *(*logs)(void *, uint32_t) = &jcode_mobile_logs;
    void (*release)(char *) = &jcode_mobile_string_free;
    return create != nullptr && destroy != nullptr && dispatch != nullptr && event != nullptr && state != nullptr &&
           tree != nullptr && logs != nullptr && release != nullptr;
}
