/*
** jcode_mobile.h — the C ABI of the jcode mobile application core.
**
** The core is the whole behaviour of the jcode mobile app (pairing, the
** connection to a jcode gateway, chat, tools, approvals, sessions, the
** semantic UI tree) behind an opaque handle. It never performs I/O: it asks
** the host to do things by returning *effects* and learns their outcome from
** *platform events*. Everything crosses this boundary as UTF-8 JSON text.
**
** A session with the core:
**
**     void *app = jcode_mobile_app_new(NULL);             // first launch
**     char *r = jcode_mobile_dispatch(app, "{\"type\":\"set_host\",\"value\":\"devbox.local\"}");
**     // r: {"ok":true,"revision":1,"effects":[]}
**     jcode_mobile_string_free(r);
**     ...
**     jcode_mobile_app_free(app);
**
** The actions, effects and platform events are listed in docs/ABI.md.
**
** CONVENTIONS (every function below follows them)
**
**   Strings.  Every string argument is UTF-8 and NUL-terminated. Every
**   `char *` returned is one JSON object, NUL-terminated, allocated by the
**   library and OWNED BY THE CALLER, who releases it with
**   jcode_mobile_string_free(). `const char *` results are static and must
**   not be freed. A function returns NULL only when memory is exhausted.
**
**   Memory.  When the answer of a call cannot be allocated, the call returns
**   {"ok":false,"error":{"code":"out_of_memory",…}} instead, or NULL when not
**   even that small answer can be allocated: the library's two allocations
**   that grow with the data, the answer's buffer and the input's tokens,
**   never abort. The app stays usable: a later call that needs less memory
**   works. An input refused with out_of_memory changed nothing. A dispatch
**   or platform_event whose *report* could not be allocated did apply its
**   input (it is in the logs and the state) but its effects are lost: read
**   the state or the change feed to catch up. (Memory the Swift runtime
**   cannot get for the app's own values, such as the state while an input
**   is applied or the tree's nodes, still ends the process.)
**
**   Errors.  Failures come back as JSON, never as a crash:
**
**       {"ok":false,"error":{"code":"invalid_json","message":"…","offset":12}}
**
**   `code` is stable and machine-readable (the table below); `message` is for
**   people and may change. `offset` (a byte offset into the input) comes with
**   invalid_utf8, invalid_json and too_deep; `field` (a path such as "event.text" or
**   "images[1].media_type") comes with invalid_field, unknown_type,
**   null_argument and too_large. New codes may be added in later versions:
**   treat a code you do not know like "internal".
**
**   Integers.  Every integer field has a range (docs/ABI.md lists them: a
**   port is 1 to 65535, an effect_id 1 to 9223372036854775807). A whole
**   number in the range is accepted however it is written (7643, 7643.0,
**   7.643e3); anything else, a number of any size beyond the range included,
**   is invalid_field with a message that names the range and the number as
**   written ("field \"port\" must be an integer from 1 to 65535, got
**   70000"). Nothing is rounded, clamped or wrapped.
**
**   Input that is well-formed but not allowed *now* (Send while
**   disconnected, a tap on a disabled button) is not an error: it is product
**   behaviour and shows in the state (a banner, an outbox entry).
**
**   Handles.  A handle (the `void *app` of jcode_mobile_app_new) is an
**   opaque number, not a pointer to memory: the library looks it up in its
**   table of live apps and never dereferences it. NULL is null_argument.
**   invalid_handle is the answer for every other value that is not a live
**   handle of this copy of the library:
**     - a freed handle: handle values are never reused within the process,
**       so a stale handle can never reach a newer app;
**     - an integer near a live handle: any two handles differ by at least
**       4096, so handle+1, handle-16 and the like are never handles;
**     - a handle of another copy of the library loaded in the same process
**       (two plugins that each bundle it): every copy issues its handles
**       from address space it has reserved for itself, so the copies never
**       issue the same value;
**     - any other value (a real pointer, garbage).
**   The reserved address space is inaccessible and costs no memory; a host
**   that reads through a handle as if it were a pointer faults at once.
**
**   Threads.  A handle may be used from any thread. Calls on one handle are
**   serialised by the library (a call waits for the one before it); calls on
**   different handles run in parallel. The library never calls back into the
**   host and starts no threads.
**
**   Limits.  Inputs larger than JCODE_MOBILE_MAX_INPUT_BYTES are rejected with
**   too_large (the library reads at most one byte past the limit). JSON
**   nested deeper than JCODE_MOBILE_MAX_DEPTH is rejected with too_deep.
**
**   Secrets.  Auth tokens and used pairing codes appear only in the effects
**   that need them (http_pair, secure_store_write, websocket_connect); never
**   in the state, the tree, the logs or the snapshot.
**
**   Persistence.  What survives a restart (saved servers, the last session
**   per server, the draft, the outbox, the device identity) is one JSON
**   snapshot. The core hands it to the host in a storage_write effect
**   {"key":"snapshot","value":{…}} after every call that changed it, and
**   jcode_mobile_snapshot() returns it on demand; pass it back to
**   jcode_mobile_app_new({"snapshot":…}) at the next launch. Tokens stay in
**   the host's secure store (one key per server). docs/LIFECYCLE.md has the
**   schema, the versioning rule and the connection's lifecycle.
**
** ERROR CODES
**
**   null_argument      a required pointer argument was NULL
**   invalid_handle     not a live handle of this copy of the library: freed,
**                      never issued, another copy's, or not a handle at all
**   invalid_utf8       the input is not valid UTF-8 (offset: first bad byte)
**   invalid_json       the input is not valid JSON (offset: where parsing stopped)
**   too_large          the input exceeds JCODE_MOBILE_MAX_INPUT_BYTES
**   too_deep           the input nests deeper than JCODE_MOBILE_MAX_DEPTH
**   unknown_type       the "type" of an action or event is unknown
**   invalid_field      a field is missing, has the wrong type or a bad value
**   invalid_scenario   app_new: unknown scenario or option, or a scenario and a snapshot
**   invalid_snapshot   app_new: the snapshot is not an object or has no integer version
**   unsupported_snapshot  app_new: the snapshot's version is not one this library
**                      reads (a newer library wrote it): keep it, do not discard it
**   out_of_memory      the answer, or the tokens of the input, could not be
**                      allocated (see Memory above); the app stays usable
**   internal           a bug in the library, reported instead of crashing
*/
#ifndef JCODE_MOBILE_H
#define JCODE_MOBILE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#  define JCODE_MOBILE_API __declspec(dllimport)
#elif defined(__GNUC__) || defined(__clang__)
#  define JCODE_MOBILE_API __attribute__((visibility("default")))
#else
#  define JCODE_MOBILE_API
#endif

/* ------------------------------------------------------------------------
** VERSIONS
**
** The library version (MAJOR.MINOR.PATCH) and the ABI version. The ABI
** version changes only when a function changes incompatibly; functions
** added later say "Since ABI n". Compare the macros (what you compiled
** against) with jcode_mobile_version() / jcode_mobile_abi_version() (what
** you loaded) to detect a mismatch.
*/
#define JCODE_MOBILE_VERSION_MAJOR 0
#define JCODE_MOBILE_VERSION_MINOR 2
#define JCODE_MOBILE_VERSION_PATCH 0
#define JCODE_MOBILE_VERSION "0.2.0"
#define JCODE_MOBILE_VERSION_NUMBER \
    (JCODE_MOBILE_VERSION_MAJOR * 1000000 + JCODE_MOBILE_VERSION_MINOR * 1000 + JCODE_MOBILE_VERSION_PATCH)
#define JCODE_MOBILE_VERSION_CHECK(major, minor, patch) \
    (JCODE_MOBILE_VERSION_NUMBER >= ((major) * 1000000 + (minor) * 1000 + (patch)))
#define JCODE_MOBILE_ABI_VERSION 1

/* Largest accepted input, in bytes (16 MiB). */
#define JCODE_MOBILE_MAX_INPUT_BYTES (16 * 1024 * 1024)
/* Deepest accepted JSON nesting. */
#define JCODE_MOBILE_MAX_DEPTH 128

/*
** jcode_mobile_version — the library version string.
**
** Role: library function (no handle).
** Returns: a static, NUL-terminated string such as "0.1.0"; never NULL;
**          never free it.
** Threads: safe from any thread.
** Since ABI 1.
*/
JCODE_MOBILE_API const char *jcode_mobile_version(void);

/*
** jcode_mobile_abi_version — the ABI version of the loaded library.
**
** Role: library function (no handle).
** Returns: JCODE_MOBILE_ABI_VERSION of the library that is loaded.
** Threads: safe from any thread.
** Since ABI 1.
*/
JCODE_MOBILE_API uint32_t jcode_mobile_abi_version(void);

/* ------------------------------------------------------------------------
** jcode_mobile_app_new — create an app.
**
** Role: constructor of the app handle.
**
** initial_scenario_json: NULL, "" or "{}" start the first-launch state (the
**   pairing form). Otherwise a JSON object with any of:
**     "scenario":     a named fixture ("connected_chat", … see docs/ABI.md)
**     "log_capacity": transitions kept by jcode_mobile_logs (1…100000, default 256)
**     "viewport":     {"width":W,"height":H}, the screen size the tree's bounds assume
**     "device_id":    identifies this install to servers (http_pair, subscribe),
**                     1 to 128 printable ASCII characters without spaces. Optional: without
**                     one (and none in the snapshot) the core asks the host
**                     for one with a create_device_id effect before pairing.
**     "device_name":  prefills the device name field
**     "snapshot":     a snapshot from storage_write {"key":"snapshot"} or
**                     jcode_mobile_snapshot() (not together with "scenario")
**   The string is read during the call only.
**
**   A restored app shows the chat of its server and connects when told the
**   app is in front: send {"type":"app_foreground"} once the app is visible
**   (at launch too); its report asks for the server's token
**   (secure_store_read) and then opens the socket. A snapshot that is partly
**   damaged is restored as far as it can be, and a notice names what was
**   left out.
**
** Returns: a new handle, or NULL on failure. The handle is a value this
**   process has never seen before from any copy of the library (see Handles
**   above); it is valid in this copy only, until jcode_mobile_app_free. On
**   failure, jcode_mobile_last_error() on the same thread says why:
**     invalid_utf8, invalid_json, too_large, too_deep  the argument is malformed
**     invalid_scenario  unknown scenario or option, a non-object, or both a
**                       scenario and a snapshot
**     invalid_field     an option has the wrong type or range
**     invalid_snapshot  the snapshot is not an object or has no integer version
**     unsupported_snapshot  the snapshot is of another (newer) version
**     internal          the system refused the address space handles are
**                       issued from (a very tight `ulimit -v`)
**     out_of_memory     the argument's tokens could not be allocated
** Ownership: release the handle with jcode_mobile_app_free().
** Threads: safe from any thread; handles are independent of each other.
** Since ABI 1.
*/
JCODE_MOBILE_API void *jcode_mobile_app_new(const char *initial_scenario_json);

/*
** jcode_mobile_last_error — why the last jcode_mobile_app_new on this thread
** returned NULL.
**
** Role: library function (no handle).
** Returns: a JSON object owned by the caller (free it with
**   jcode_mobile_string_free): the error object of the last failed
**   jcode_mobile_app_new on the calling thread, or {"ok":true} when the last
**   call on this thread succeeded or there was none. Read it on the thread
**   that called jcode_mobile_app_new. NULL when memory is exhausted.
** Threads: per-thread; safe from any thread.
** Since ABI 1.
*/
JCODE_MOBILE_API char *jcode_mobile_last_error(void);

/*
** jcode_mobile_app_free — destroy an app.
**
** Role: destructor of the app handle.
**
** app: a handle from jcode_mobile_app_new of this copy of the library.
**   NULL, an already freed handle, a handle of another copy of the library
**   and a value that is not a handle are ignored (nothing is freed, nothing
**   is reported): freeing twice is harmless.
** After the call the handle is invalid for good: later calls with it return
** invalid_handle, and no later jcode_mobile_app_new returns the same value.
** A call on the same handle already running on another thread finishes
** normally first.
** Threads: safe from any thread.
** Since ABI 1.
*/
JCODE_MOBILE_API void jcode_mobile_app_free(void *app);

/*
** jcode_mobile_dispatch — tell the app what the person wants (an action).
**
** Role: method of the app handle.
**
** action_json: one action, {"type":"send_message","text":"hi"}; read during
**   the call only. Unknown extra fields are ignored.
** Returns (owned by the caller) the dispatch report:
**     {"ok":true,"revision":17,"effects":[{"effect_id":9,"type":"websocket_send","line":"…"}]}
**   `revision` is the state's revision after the action (it grows by one
**   when the state changed). Execute every effect; answer those that expect
**   an answer with jcode_mobile_platform_event, quoting their effect_id.
** Errors: null_argument (app or action_json is NULL), invalid_handle,
**   invalid_utf8, invalid_json, too_large, too_deep, unknown_type,
**   invalid_field, invalid_scenario (load_scenario with an unknown name),
**   out_of_memory (see Memory above: a report that could not be allocated
**   means the action applied but its effects are lost).
**   A rejected input changes nothing (it is still recorded in the logs).
**   NULL: not even the out_of_memory answer could be allocated.
** Threads: serialised with every other call on `app`.
** Since ABI 1.
*/
JCODE_MOBILE_API char *jcode_mobile_dispatch(void *app, const char *action_json);

/*
** jcode_mobile_platform_event — tell the app what the platform did (an
** effect's result, a server frame, a lifecycle change).
**
** Role: method of the app handle.
**
** event_json: one platform event, e.g.
**     {"type":"pair_finished","effect_id":3,"ok":true,"token":"…"}
**     {"type":"websocket_event","effect_id":5,"line":"{\"type\":\"text_delta\",\"text\":\"Hi\"}"}
**   read during the call only. An answer quoting an effect_id the app is not
**   waiting for (already answered, never issued, or from a replaced socket)
**   is recorded in the logs and changes nothing.
** Returns (owned by the caller) the dispatch report, as jcode_mobile_dispatch.
** Errors: null_argument, invalid_handle, invalid_utf8, invalid_json,
**   too_large, too_deep, unknown_type, invalid_field, out_of_memory (as for
**   jcode_mobile_dispatch; a frame whose lines do not fit is refused whole).
**   A malformed or unknown *server* event inside a websocket_event is not an
**   error: it is logged and dropped, and the rest of the frame still applies.
**   NULL: not even the out_of_memory answer could be allocated.
** Threads: serialised with every other call on `app`.
** Since ABI 1.
*/
JCODE_MOBILE_API char *jcode_mobile_platform_event(void *app, const char *event_json);

/*
** jcode_mobile_state — the app's domain state.
**
** Role: method of the app handle.
** Returns (owned by the caller) {"ok":true,"state":{…}}: revision, screen,
**   connection, pairing form, saved servers, session, transcript, soft
**   interrupts, outbox, pending requests, notices, banners, draft,
**   attachments, lifecycle, pending effects (docs/ABI.md lists every member).
** Errors: null_argument, invalid_handle, out_of_memory (the answer did not
**   fit in memory; nothing changed). NULL: not even that could be allocated.
** Threads: serialised with every other call on `app`.
** Since ABI 1.
*/
JCODE_MOBILE_API char *jcode_mobile_state(void *app);

/*
** jcode_mobile_tree — the semantic UI tree of the current screen.
**
** Role: method of the app handle.
** Returns (owned by the caller) {"ok":true,"revision":R,"tree":{…}}; every node
**   has id, role, label, value, placeholder, visible, enabled, focused,
**   accessibility_label, accessibility_value, supported_actions, bounds
**   {x,y,width,height} and children. Ids are stable ("pair.submit",
**   "message.m12", "permission.<request_id>.approve"); a node whose
**   supported_actions contains "tap" can be tapped with the action
**   {"type":"tap_node","node_id":…}.
** Errors: null_argument, invalid_handle, out_of_memory (the answer did not
**   fit in memory; nothing changed). NULL: not even that could be allocated.
** Threads: serialised with every other call on `app`.
** Since ABI 1.
*/
JCODE_MOBILE_API char *jcode_mobile_tree(void *app);

/*
** jcode_mobile_logs — the most recent transitions.
**
** Role: method of the app handle.
** limit: how many of the most recent entries to return; 0 returns all that
**   are kept (at most the log capacity).
** Returns (owned by the caller)
**     {"ok":true,"capacity":256,"next_seq":42,"entries":[{"seq","revision","kind","type","payload","effects","notes"}…]}
**   oldest first. kind is "action", "event" or "rejected" (an input the ABI
**   refused, with its "error" code). Payloads and effects are redacted:
**   secrets read "[redacted]"; inputs over 4 KiB are summarised.
** Errors: null_argument, invalid_handle, out_of_memory (the answer did not
**   fit in memory; nothing changed). NULL: not even that could be allocated.
** Threads: serialised with every other call on `app`.
** Since ABI 1.
*/
JCODE_MOBILE_API char *jcode_mobile_logs(void *app, uint32_t limit);

/*
** jcode_mobile_changes — what changed in the state after a revision.
**
** Role: method of the app handle.
**
** A host that keeps a copy of the state (from jcode_mobile_state) can keep
** it current from this feed, in bytes proportional to what changed: a
** streamed text delta is one operation of a few dozen bytes, whatever the
** length of the conversation.
**
** since_revision: the revision of the host's copy; any value. The answer's
**   "since" echoes it exactly as passed (18446744073709551615 for
**   UINT64_MAX); a revision the app never reached gets a resync.
** Returns (owned by the caller) either the changes
**     {"ok":true,"revision":12,"since":10,"changes":[
**       {"revision":11,"ops":[{"op":"append","path":"/transcript/4/text","value":"lo"}]},
**       {"revision":12,"ops":[…]}]}
**   (empty when since_revision is current), or, when the feed cannot describe
**   the way from since_revision (too old, unknown, or across a replacement of
**   a long transcript),
**     {"ok":true,"revision":12,"since":3,"resync":true,"state":{…}}
**   Operations are JSON Patch (RFC 6902) "add", "remove" and "replace" with
**   JSON Pointer paths into the state object, plus "append", which appends
**   "value" to the string at "path". Apply each record's ops in order, then
**   set the copy's "revision" member to the record's revision.
** Errors: null_argument, invalid_handle, out_of_memory (the answer did not
**   fit in memory; nothing changed). NULL: not even that could be allocated.
** Threads: serialised with every other call on `app`.
** Since ABI 1.
*/
JCODE_MOBILE_API char *jcode_mobile_changes(void *app, uint64_t since_revision);

/*
** jcode_mobile_snapshot — what the app would persist, now.
**
** Role: method of the app handle.
**
** The same snapshot the core hands out in storage_write {"key":"snapshot"}
** effects, for a host that saves at moments of its own choosing (when the
** app goes to the background, before it is terminated).
**
** Returns (owned by the caller)
**     {"ok":true,"snapshot":{"version":1,"device":{…},"servers":[…],
**       "selected_server_id":…,"composer":{…},"outbox":{…}}}
**   Pass the "snapshot" member to jcode_mobile_app_new({"snapshot":…}). It
**   never holds a secret (tokens stay in the secure store); it does hold the
**   draft, its images and unsent messages, so store it where the app's own
**   data lives. docs/LIFECYCLE.md has the schema and the versioning rule.
** Errors: null_argument, invalid_handle, out_of_memory (the answer did not
**   fit in memory; nothing changed). NULL: not even that could be allocated.
** Threads: serialised with every other call on `app`.
** Since ABI 1 (library 0.2.0; check jcode_mobile_version() before calling it
**   from a host that may load an older library).
*/
JCODE_MOBILE_API char *jcode_mobile_snapshot(void *app);

/*
** jcode_mobile_string_free — release a string returned by this library.
**
** Role: library function (no handle).
** ptr: a `char *` returned by any jcode_mobile_* function, or NULL (ignored).
**   Passing anything else, or the same string twice, is undefined behaviour,
**   as with free().
** Threads: safe from any thread.
** Since ABI 1.
*/
JCODE_MOBILE_API void jcode_mobile_string_free(char *ptr);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* JCODE_MOBILE_H */
