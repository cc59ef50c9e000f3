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
** The actions, effects and platform events are listed in docs/ABI.md;
** jcode_mobile_schema() returns a JSON Schema of every one of them.
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
**     - a freed handle: a handle's value is issued again only after at
**       least 16.7 million other handles were freed (a freed slot waits
**       behind 65 536 others, then comes back with the next of 256
**       generations), so a stale handle cannot reach a newer app before;
**     - an integer near a live handle: any two live handles differ by more
**       than 2048, so handle+1, handle-16 and the like are never handles;
**     - a handle of another copy of the library loaded in the same process
**       (two plugins that each bundle it): every copy issues its handles
**       from address space it has reserved for itself, so the copies never
**       issue the same value;
**     - any other value (a real pointer, garbage).
**   The reserved address space is inaccessible and costs no memory; a host
**   that reads through a handle as if it were a pointer faults at once.
**   Handles that come and go take no more of it than the handles alive at
**   once plus the quarantine (256 MiB on a 64-bit process).
**
**   Threads.  A handle may be used from any thread. Calls on one handle are
**   serialised by the library (a call waits for the one before it); calls on
**   different handles run in parallel. The library starts no threads. It
**   calls back into the host in one case only: the callback of a
**   jcode_mobile_subscribe_callback subscription, invoked by a thread that
**   called into the library (see EVENT STREAM below), with no library lock
**   held, so the callback may call any jcode_mobile_* function. Otherwise
**   the library never calls back into the host.
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
#define JCODE_MOBILE_VERSION_MINOR 7
#define JCODE_MOBILE_VERSION_PATCH 0
#define JCODE_MOBILE_VERSION "0.7.0"
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

/*
** jcode_mobile_schema — the runtime schema: a JSON Schema (2020-12) of every
** JSON value the library reads or writes.
**
** Role: library function (no handle).
** Returns (owned by the caller) {"ok":true,"schema":{…}}. The schema has a
**   definition ($defs) for every action, platform event, effect, gateway
**   request, server event and stream event (and a oneOf of each family:
**   "action", "effect", …), the options of jcode_mobile_app_new and
**   jcode_mobile_subscribe, the state, the tree, change records, log
**   entries, the snapshot, the error object, and the answer of every
**   function ("dispatch_answer", "state_answer", …). Its "x-functions"
**   member maps each function's name to the definitions of its input and
**   its answer: {"jcode_mobile_dispatch":{"input":"#/$defs/action",
**   "answer":"#/$defs/dispatch_answer"},…}. What the library writes is
**   described strictly (no member beyond those listed); what it reads
**   allows extra members where the library ignores them. The "$id" names
**   the library version; the document is the same for every call of one
**   library. docs/ABI.md has the reference generated from it.
** Errors: out_of_memory (the copy could not be allocated); NULL when not
**   even that answer could be allocated.
** Threads: safe from any thread.
** Since ABI 1 (library 0.3.0; check jcode_mobile_version() before calling it
**   from a host that may load an older library).
*/
JCODE_MOBILE_API char *jcode_mobile_schema(void);

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
**                     (1…100000 each), with an optional "safe_area":
**                     {"top":T,"left":L,"bottom":B,"right":R}, what the phone
**                     draws over each edge (status bar, notch, home indicator)
**                     in points, 0…100000, leaving some of the screen (T+B < H,
**                     L+R < W; else invalid_field). Default: a 390×844 iPhone's
**                     by the viewport's shape (upright 47 / 0 / 34 / 0, on its
**                     side 0 / 47 / 21 / 47). Since 0.7.0.
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
**     out_of_memory     the argument's tokens could not be allocated, or no
**                       address space is left to issue a handle from (a
**                       very tight `ulimit -v`; before 0.5.0: internal)
** Ownership: release the handle with jcode_mobile_app_free().
** Threads: safe from any thread; handles are independent of each other.
** Since ABI 1.
*/
JCODE_MOBILE_API void *jcode_mobile_app_new(const char *initial_scenario_json);

/*
** jcode_mobile_last_error — why the last jcode_mobile_app_new (or
** jcode_mobile_subscribe, jcode_mobile_subscribe_callback) on this thread
** returned NULL.
**
** Role: library function (no handle).
** Returns: a JSON object owned by the caller (free it with
**   jcode_mobile_string_free): the error object of the last failed
**   jcode_mobile_app_new, jcode_mobile_subscribe or
**   jcode_mobile_subscribe_callback on the calling thread, or {"ok":true}
**   when the last of these calls on this thread succeeded or there was none.
**   Read it on the thread that made the call. NULL when memory is exhausted.
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
** normally first. Since library 0.3.0 the app's event-stream subscriptions
** are closed: waiters in jcode_mobile_next_event wake, each subscription
** delivers what it held and then {"type":"closed","reason":"app_freed"}
** (a callback subscription receives them on the freeing thread); their
** handles stay valid until jcode_mobile_unsubscribe.
** Threads: safe from any thread, inside an event callback too.
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
**   {x,y,width,height} and children. Ids are stable and unique within the
**   tree ("pair.submit", "message.m12", "tool.m12.<call_id>",
**   "permission.<request_id>.approve"); a node whose supported_actions
**   contains "tap" can be tapped with the action {"type":"tap_node","node_id":…}.
**   The message list ("chat.messages") is windowed: its children are the
**   rows in and near the viewport (about a screen above and below it), its
**   "window" {start,end,total} says which of its rows they are, and its
**   "scroll" {offset,content_height,max_offset} where the viewport is
**   (content_height estimates the rows not laid out). So the answer's size
**   and cost follow the screen, not the length of the conversation; the
**   actions scroll_messages and scroll_to_message move the window. Bounds
**   are points, origin top-left of the viewport, except inside the message
**   list: its rows and their nodes are in the list's content coordinates
**   (since library 0.6.0): x as on the screen, y from the top of the
**   content, so a node sits on the screen at list.y - scroll.offset + y.
**   Scrolling, or a reply growing at its end, moves no row.
**   A message in markdown has its blocks as children (roles paragraph,
**   heading, list, list_item, quote, code_block, table, table_row,
**   table_cell, divider), a tool card its summary, diff and output, and
**   some nodes carry fields only their roles have: level, spans, language,
**   checked, variant, expanded, counts (docs/ABI.md, "The transcript's
**   nodes"); a node without one leaves it out: level (a heading), spans
**   (a text's styled runs [{text,styles,url?}]), language (a code block),
**   checked (a task list item), variant (a button's primary/secondary/
**   destructive, a list's ordered/bullet, a diff line's added/removed/
**   context, a code block still streaming "open", …), expanded (a tool
**   card, reasoning, a long output or diff) and counts {added,removed} (a
**   diff). The action {"type":"set_expanded","node_id":…,"expanded":…}
**   opens or closes a collapsible node (a tap toggles it); {"type":"copy",
**   "node_id":…} on a node whose supported_actions has "copy" answers the
**   effect copy_to_clipboard {text}.
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
**   secrets read "[redacted]"; inputs over 4 KiB are summarised, and so
**   are effects over 4 KiB ({"effect_id","type","summary"}). The log holds
**   the last log_capacity entries within 8 MiB (the newest always).
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
** jcode_mobile_tree_changes — what changed in the tree after a revision.
**
** Role: method of the app handle.
**
** The tree's counterpart of jcode_mobile_changes. A host that keeps a copy
** of the tree (from jcode_mobile_tree) keeps it current from these
** operations and redraws only the nodes they name: a streamed text delta is
** one "append" to one message, whatever the length of the conversation.
**
** since_revision: the revision of the host's copy: the "revision" of a
**   jcode_mobile_tree answer or of an earlier answer of this function (the
**   tree is built when asked for, so other revisions may have no tree). The
**   answer's "since" echoes it as passed.
** Returns (owned by the caller) either the operations
**     {"ok":true,"revision":12,"since":10,"ops":[
**       {"op":"append","id":"message.m7","field":"value","text":"lo"},
**       {"op":"update","id":"chat.messages","set":{"scroll":{…}}}]}
**   (empty when since_revision is current), or, when since_revision is not
**   a revision the app can describe the way from (never handed out, or too
**   old: a few hundred builds of the tree are kept),
**     {"ok":true,"revision":12,"since":3,"resync":true,"tree":{…}}
**   Operations, keyed by node ids (unique within the tree), applied in order:
**     {"op":"splice","parent":ID,"index":I,"remove":[IDS],"insert":[NODES]}
**         the children I … I+len(remove)-1 of ID (whose ids are IDS) give
**         way to NODES (whole subtrees): an insertion, a removal, or both;
**         the message list's window moves by splices;
**     {"op":"move","id":ID,"parent":P,"index":I}
**         the child ID of P moves to index I among the others;
**     {"op":"update","id":ID,"set":{FIELD:VALUE,…}}
**         the node's own fields that changed (any member of a node but id
**         and children; "scroll" or "window" null: no longer there);
**     {"op":"append","id":ID,"field":F,"text":T}
**         T is appended to the string F ("value", "label",
**         "accessibility_value" or "accessibility_label"; null counts as "");
**     {"op":"spans","id":ID,"keep":K,"spans":[SPANS]}  (since library 0.7.0)
**         the node's "spans" keep their first K (K at most their count) and
**         go on with SPANS; its "value" and "accessibility_value" become the
**         spans' texts joined (as a node with spans always has them): a
**         streamed paragraph with styles sends its last runs, not all of
**         them and its whole text again.
**   Then set the copy's revision to "revision". An operation the host does
**   not know (a newer library): read the whole tree (jcode_mobile_tree).
** Errors: null_argument, invalid_handle, invalid_field (since_revision is
**   after the current revision; "field" is "since_revision"),
**   out_of_memory. NULL: not even the error could be allocated.
** Threads: serialised with every other call on `app`.
** Since ABI 1 (library 0.5.0; check jcode_mobile_version() before calling
**   it from a host that may load an older library).
*/
JCODE_MOBILE_API char *jcode_mobile_tree_changes(void *app, uint64_t since_revision);

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
** jcode_mobile_hit_test — what is at a point of the screen.
**
** Role: method of the app handle; reads, never changes the app.
**
** The core lays the semantic tree out for the viewport of app_new's options
** (390 x 844 points unless set): points, origin top-left, the message list
** scrolled as its state says (scroll_messages). This answers the deepest
** visible node whose bounds hold (x, y); a message scrolled out of the list's
** frame is never hit. tap_xy {x, y} taps the answer's "tap_target".
**
** Returns (owned by the caller)
**     {"ok":true,"revision":12,
**      "node":{"id":"chat.send","role":"button","label":"Send","value":null,
**              "enabled":true,"supported_actions":["tap"],
**              "bounds":{"x":..,"y":..,"width":..,"height":..}},
**      "path":["root","chat.composer","chat.send"],
**      "tap_target":"chat.send"}
**   "node" is null (and "path" empty) for a point outside the viewport;
**   "tap_target" is the deepest node on the path a tap acts on, or null.
**   The node's "bounds" here are on the screen, also for a node in the
**   message list (whose bounds in the tree are the list's content
**   coordinates: see jcode_mobile_tree).
** Errors: null_argument, invalid_handle, invalid_field (x or y is NaN or
**   infinite; "field" names it), out_of_memory. NULL: not even the error
**   could be allocated.
** Threads: serialised with every other call on `app`.
** Since ABI 1 (library 0.4.0; check jcode_mobile_version() before calling
**   it from a host that may load an older library).
*/
JCODE_MOBILE_API char *jcode_mobile_hit_test(void *app, double x, double y);

/*
** jcode_mobile_screenshot_svg — a picture of the current screen.
**
** Role: method of the app handle; reads, never changes the app.
**
** An SVG document drawn from the same layout hit_test uses: the same tree
** gives the same bytes on every machine (text on a monospaced grid of 8
** points per character, 20 per line, in "DejaVu Sans Mono"). Each visible
** node is a <g data-id="…" data-role="…"> nested like the tree, so two
** pictures compare node by node. Secure fields show bullets, as in the tree.
** Convert it with any SVG renderer (rsvg-convert, cairosvg) for a PNG.
**
** Returns (owned by the caller)
**     {"ok":true,"revision":12,"format":"svg","width":390,"height":844,
**      "svg":"<svg xmlns=…>…</svg>\n"}
**   Its size follows what is on screen, not the length of the conversation.
** Errors: null_argument, invalid_handle, out_of_memory. NULL: not even the
**   error could be allocated.
** Threads: serialised with every other call on `app`.
** Since ABI 1 (library 0.4.0).
*/
JCODE_MOBILE_API char *jcode_mobile_screenshot_svg(void *app);

/* ------------------------------------------------------------------------
** EVENT STREAM
**
** Instead of polling jcode_mobile_state after every call, a host can
** subscribe to an app and be told what happened: a UI thread blocks in
** jcode_mobile_next_event and redraws only when told; an effect executor
** on its own thread receives the effects to carry out. docs/EVENTS.md has
** the event types, examples and a whole C example.
**
** Events.  Every event is one JSON object with a "type":
**     subscribed         {"type":"subscribed","revision":R,"next_seq":S}
**                        always the first event of a subscription
**     state_changed      {"seq":S,"type":"state_changed","revision":R,"ops":[…]}
**                        the records of jcode_mobile_changes ("resync":true
**                        instead of "ops" when the change was too large)
**     effects_requested  {"seq":S,"type":"effects_requested","revision":R,"effects":[…]}
**                        the effects of the call's report, secrets included
**     server_paired, pairing_failed, history_synced,
**     connection_phase_changed, turn_finished   (kind "app")
**     events_lost        {"type":"events_lost","count":N,"first_seq":A,
**                        "last_seq":B,"effects_lost":E} where events were dropped
**     closed             {"type":"closed","reason":"unsubscribed"|"app_freed"}
**   Each call of jcode_mobile_dispatch / jcode_mobile_platform_event yields,
**   in this order, state_changed (if the state changed), its app events, and
**   effects_requested (if it asked for effects). `seq` is 1 for the app's
**   first event and one more for each event after it, whoever subscribes;
**   every subscription sees the events it asked for in seq order (they are
**   queued while the call holds the app's lock). A state_changed carries
**   what the state showed at that moment (a pairing code being typed, a
**   draft); effects_requested carries secrets exactly like the dispatch
**   report: a UI thread should subscribe with {"kinds":["state","app"]}.
**
** Queue.  Each subscription keeps at most `capacity` undelivered events
**   (subscribed counts as one) and at most `capacity_bytes` bytes of them
**   (an event larger than that still goes into an empty queue). When it is
**   full, in events or in bytes, later events are dropped
**   and counted until there is room again; at the place of the gap the
**   subscriber then receives one events_lost (which may take one slot
**   beyond capacity) before any later event, and catches up with
**   jcode_mobile_changes(app, the last revision it saw). Nothing else is
**   ever dropped.
**
** Lifetime.  A subscription does not keep its app alive. A subscription
**   handle comes from the same space as app handles (see Handles above): an
**   app handle is never a subscription handle and vice versa.
**   jcode_mobile_app_free closes every subscription of the app; each still
**   delivers what it held, then {"type":"closed","reason":"app_freed"}. The
**   handle of a closed subscription stays valid until
**   jcode_mobile_unsubscribe, which the host must still call.
**
** Options (options_json of both subscribe functions): NULL, "" or "{}" for
** the defaults, or an object with any of
**     "capacity": events kept until taken, 1…65536 (default 1024)
**     "capacity_bytes": bytes of events kept until taken, 65536…1073741824
**                 (default 16 MiB; since 0.5.0)
**     "kinds":    which events to receive, an array of "state" (state_changed),
**                 "effects" (effects_requested), "app" (the app events),
**                 "tree" (tree_changed: the operations of
**                 jcode_mobile_tree_changes for each revision; since 0.5.0);
**                 default "state", "effects" and "app" ("tree" builds the
**                 tree's window on every change: asked for by name).
**                 subscribed, events_lost and closed always come.
*/

/*
** jcode_mobile_event_callback — what a callback subscription calls.
**
** user_data:  the pointer given to jcode_mobile_subscribe_callback.
** event_json: one event (the bare event object, without {"ok":true,…}),
**   NUL-terminated, borrowed: valid only until the callback returns.
*/
typedef void (*jcode_mobile_event_callback)(void *user_data, const char *event_json);

/*
** jcode_mobile_subscribe — subscribe to an app's events, to take them with
** jcode_mobile_next_event.
**
** Role: method of the app handle; constructor of a subscription handle.
**
** app:          a live app handle.
** options_json: NULL, "" or "{}" (defaults), or {"capacity":N,"kinds":[…]}
**   (see Options above); read during the call only.
** Returns: a new subscription handle, or NULL on failure. Its first event is
**   {"type":"subscribed","revision":R,"next_seq":S}: R is the state's
**   revision at that moment and S the seq of the next event, taken
**   atomically with respect to every other call on the app (read
**   jcode_mobile_state or jcode_mobile_changes(app, R) to start from R).
**   On failure, jcode_mobile_last_error() on the same thread says why:
**     null_argument   app is NULL (field "app")
**     invalid_handle  app is not a live app handle (freed, never issued, a
**                     subscription handle, or not a handle)
**     invalid_utf8, invalid_json, too_large, too_deep  options_json is malformed
**     invalid_field   options_json is not an object, has an unknown member,
**                     a capacity outside 1…65536, a capacity_bytes outside
**                     65536…1073741824, or a "kinds" that is not an
**                     array of "state", "effects", "app", "tree"
**     out_of_memory   no address space left for a new handle (before
**                     0.5.0: internal)
** Ownership: release the handle with jcode_mobile_unsubscribe(), also after
**   the app was freed.
** Threads: safe from any thread; serialised with every other call on `app`.
** Since ABI 1 (library 0.3.0; check jcode_mobile_version() before calling it
**   from a host that may load an older library).
*/
JCODE_MOBILE_API void *jcode_mobile_subscribe(void *app, const char *options_json);

/*
** jcode_mobile_subscribe_callback — subscribe to an app's events, to
** receive them in a function.
**
** Role: method of the app handle; constructor of a subscription handle.
**
** app, options_json: as for jcode_mobile_subscribe; the events are queued
**   the same way (capacity, capacity_bytes, events_lost, closed).
** callback:  called once per event, in order, never twice at once for one
**   subscription. It runs on a thread that called into the library: after
**   each dispatch / platform_event (and this subscribe) has released the
**   app's lock, that thread delivers the events it queued in callback
**   subscriptions, and those queued before them, never those queued after:
**   the call returns once they are delivered. When another thread is
**   running the same subscription's callback, the call waits for it to
**   return (so do not dispatch while holding a lock the callback takes).
**   No library lock is held while it runs: it may call any jcode_mobile_*
**   function, dispatch on the same app included; a call made from inside a
**   callback only queues its events, and the delivery running on that
**   thread delivers them after the callback returns (callbacks never nest),
**   and unsubscribe of its own subscription. Keep it short: it runs on the
**   caller's time. The first call, with the subscribed event, happens
**   before jcode_mobile_subscribe_callback returns (from inside a
**   callback: after that callback returns).
** user_data: passed to callback as is; the library never reads it.
** Returns: a new subscription handle, or NULL on failure (the errors of
**   jcode_mobile_subscribe, and null_argument with field "callback" when
**   callback is NULL), with jcode_mobile_last_error() on the same thread
**   saying why. The handle cannot be passed to jcode_mobile_next_event
**   (invalid_handle).
** On jcode_mobile_app_free the callback receives what was still queued,
**   then {"type":"closed","reason":"app_freed"} once, delivered by the
**   freeing thread (another thread may deliver some of the queued events
**   first); then no more.
** Ownership: release the handle with jcode_mobile_unsubscribe(). After
**   jcode_mobile_unsubscribe returns the callback is never called again
**   (see there).
** Threads: safe from any thread; serialised with every other call on `app`.
** Since ABI 1 (library 0.3.0).
*/
JCODE_MOBILE_API void *jcode_mobile_subscribe_callback(void *app, const char *options_json,
                                                       jcode_mobile_event_callback callback, void *user_data);

/*
** jcode_mobile_next_event — take the next event of a subscription, waiting
** for one if needed.
**
** Role: method of the subscription handle (of jcode_mobile_subscribe).
**
** timeout_ms: < 0 waits until an event comes (or the subscription ends),
**   0 does not wait, > 0 waits up to that many milliseconds (measured on a
**   monotonic clock).
** Returns (owned by the caller)
**     {"ok":true,"event":{"seq":3,"type":"state_changed",…}}
**   or {"ok":true,"event":null} when the time ran out with no event. After
**   jcode_mobile_app_free: the events still queued, then
**   {"ok":true,"event":{"type":"closed","reason":"app_freed"}}, and that
**   same answer at once at every later call. A call waiting when
**   jcode_mobile_unsubscribe is called returns
**   {"ok":true,"event":{"type":"closed","reason":"unsubscribed"}}.
** Errors: null_argument (subscription is NULL, field "subscription"),
**   invalid_handle (field "subscription"; the message says which: not a live
**   subscription handle — unsubscribed, never issued or not a handle —, an
**   app handle, or a callback subscription, whose events go to its
**   callback), out_of_memory (the event stays queued for the next call).
**   NULL: not even the out_of_memory answer could be allocated.
** Threads: safe from any thread, also while calls on the app run. Several
**   threads may wait on one subscription: each event goes to exactly one
**   of them (in seq order of taking; which thread gets which is not fixed).
** Since ABI 1 (library 0.3.0).
*/
JCODE_MOBILE_API char *jcode_mobile_next_event(void *subscription, int32_t timeout_ms);

/*
** jcode_mobile_unsubscribe — end a subscription and release its handle.
**
** Role: destructor of the subscription handle.
**
** subscription: a handle from jcode_mobile_subscribe or
**   jcode_mobile_subscribe_callback, also one whose app was freed. NULL, an
**   already released handle, an app handle and a value that is not a handle
**   are ignored (nothing happens): releasing twice is harmless.
** Undelivered events are discarded. Every thread waiting in
** jcode_mobile_next_event on it wakes and returns
** {"ok":true,"event":{"type":"closed","reason":"unsubscribed"}}; later
** calls with the handle return invalid_handle. A callback subscription's
** callback is never called after jcode_mobile_unsubscribe returns: a call
** running on another thread is waited for; called from inside the callback
** itself, that invocation is the last. (So do not call it, with a lock held
** that the callback takes; nor have two callbacks unsubscribe each
** other's subscriptions at the same time: each would wait for the other.)
** When the app has no subscription left it stops recording events.
** Threads: safe from any thread, inside a callback too.
** Since ABI 1 (library 0.3.0).
*/
JCODE_MOBILE_API void jcode_mobile_unsubscribe(void *subscription);

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
