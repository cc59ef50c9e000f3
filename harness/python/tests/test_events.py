"""The event stream from Python: ``App.events()`` is an iterator with a
timeout, ``App.subscribe()`` a subscription with a blocking ``next``,
``App.on_event()`` a callback. A UI thread blocks on the stream and redraws
only when told. Every test bounds its own run time (thread joins with a
timeout, stream timeouts)."""

import threading
import time

import pytest

from jcode_mobile import App, JcodeMobileError
from jcode_mobile.host import BackgroundHost, VirtualClock
from jcode_mobile.mirror import apply_ops

from test_real_host import CODE, WORKING_DIR, ThreadedGateway

DRAFT = {"type": "set_draft", "value": "draft"}


def drafts(app: App, n: int, prefix: str = "d") -> None:
    for i in range(n):
        app.dispatch({"type": "set_draft", "value": f"{prefix}{i}"})


def test_the_first_event_is_subscribed_with_the_revision_to_start_from_then_a_call_brings_its_events():
    with App({"scenario": "connected_empty_chat"}) as app:
        start = app.revision
        with app.events(timeout=0.2) as events:
            first = next(events)
            app.dispatch({"type": "set_draft", "value": "hello"})
            rest = list(events)  # ends when nothing comes for 0.2 s
        assert first == {"type": "subscribed", "revision": start, "next_seq": 1}
        assert [e["type"] for e in rest] == ["state_changed", "effects_requested"]
        assert rest[0]["seq"] == 1 and rest[0]["revision"] == start + 1
        assert {"op": "replace", "path": "/draft", "value": "hello"} in rest[0]["ops"]
        assert [e["type"] for e in rest[1]["effects"]] == ["storage_write"]


def test_a_ui_thread_blocked_on_the_stream_redraws_once_per_change_and_its_mirror_equals_the_state():
    with App({"scenario": "connected_empty_chat"}) as app:
        subscription = app.subscribe(kinds=["state"], timeout=None)
        start = subscription.next(timeout=1.0)
        assert start["type"] == "subscribed"
        mirror = {"state": app.state()}
        redraws = []

        def ui_thread():
            for event in subscription:  # blocks without a limit; ends when closed
                if event["type"] == "state_changed":
                    mirror["state"] = apply_ops(mirror["state"], event["ops"])
                    mirror["state"]["revision"] = event["revision"]
                    redraws.append(event["revision"])

        thread = threading.Thread(target=ui_thread)
        thread.start()
        drafts(app, 50)
        final = app.state()
        deadline = time.monotonic() + 10
        while len(redraws) < 50 and time.monotonic() < deadline:
            time.sleep(0.01)
        # Unsubscribing drops what is still queued and wakes the blocked
        # thread with "closed": so it happens once the thread has caught up.
        subscription.close()
        thread.join(10)
        assert not thread.is_alive()
        assert redraws == list(range(start["revision"] + 1, start["revision"] + 51))
        assert mirror["state"] == final


def test_freeing_the_app_wakes_every_blocked_waiter_with_closed_app_freed():
    app = App({"scenario": "connected_empty_chat"})
    subscriptions = [app.subscribe(timeout=None) for _ in range(4)]
    for s in subscriptions:
        assert s.next(timeout=1.0)["type"] == "subscribed"
    seen = [[] for _ in subscriptions]

    def wait(i):
        seen[i].append(subscriptions[i].next(timeout=None))

    threads = [threading.Thread(target=wait, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    app.close()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert seen == [[{"type": "closed", "reason": "app_freed"}]] * 4
    # The stream stays closed until the host releases it.
    assert subscriptions[0].next(timeout=0) == {"type": "closed", "reason": "app_freed"}
    for s in subscriptions:
        s.close()
    with pytest.raises(JcodeMobileError) as problem:
        subscriptions[0].next(timeout=0)
    assert problem.value.code == "invalid_handle"


def test_a_slow_subscriber_is_told_what_it_lost_and_catches_up_from_the_change_feed():
    with App({"scenario": "connected_empty_chat"}) as app:
        with app.subscribe(kinds=["state"], capacity=3, timeout=0.2) as slow:
            start = slow.next(timeout=1.0)["revision"]
            drafts(app, 10)
            events = list(slow)
        kept = [e for e in events if e["type"] == "state_changed"]
        # Each draft is two events (state_changed, then effects_requested with the
        # snapshot write), so the state_changed seqs are 1, 3, 5 …; 7 … 19 were dropped.
        assert [e["type"] for e in events] == ["state_changed"] * 3 + ["events_lost"]
        assert [e["revision"] for e in kept] == [start + 1, start + 2, start + 3]
        assert events[3] == {"type": "events_lost", "count": 7, "first_seq": 7, "last_seq": 19, "effects_lost": 0}
        caught_up = app.changes(kept[-1]["revision"])
        assert [r["revision"] for r in caught_up["changes"]] == list(range(start + 4, start + 11))
        assert caught_up["revision"] == app.revision


def test_a_subscriber_that_keeps_at_most_64_kib_of_events_is_told_what_it_lost_past_them():
    with App({"scenario": "connected_empty_chat"}) as app:
        with app.subscribe(kinds=["state"], capacity_bytes=65536, timeout=0.2) as slow:
            start = slow.next(timeout=1.0)["revision"]
            # Each draft's state_changed carries its 30 000-letter value: two fit, the third does not.
            for k in range(5):
                app.dispatch({"type": "set_draft", "value": "abcde"[k] * 30_000})
            events = list(slow)
        assert [e["type"] for e in events] == ["state_changed", "state_changed", "events_lost"]
        assert [e["revision"] for e in events[:2]] == [start + 1, start + 2]
        assert events[2]["count"] == 3

def test_a_subscriber_chooses_the_kinds_it_hears():
    with App({"scenario": "connected_empty_chat"}) as app:
        with app.events(timeout=0.2, kinds=["effects"]) as effects, app.events(timeout=0.2, kinds=["app"]) as app_events:
            app.dispatch({"type": "send_message", "text": "hello"})
            effect_types = [e["type"] for e in effects]
            app_types = [e["type"] for e in app_events]
        assert effect_types == ["subscribed", "effects_requested"]
        assert app_types == ["subscribed"]


def test_a_callback_hears_every_event_in_order_from_four_dispatching_threads_and_nothing_after_close():
    with App({"scenario": "connected_empty_chat"}) as app:
        heard = []
        inside = threading.Lock()
        overlaps = []

        def on_event(event):
            if not inside.acquire(blocking=False):
                overlaps.append(event)
                return
            try:
                heard.append(event)
            finally:
                inside.release()

        subscription = app.on_event(on_event)
        threads = [threading.Thread(target=drafts, args=(app, 25, f"t{n}-")) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        subscription.close()
        count = len(heard)
        app.dispatch(DRAFT)
        assert subscription.errors == [] and overlaps == []
        assert heard[0]["type"] == "subscribed"
        # 100 drafts: a state_changed and an effects_requested each, seqs 1 … 200.
        assert [e["seq"] for e in heard[1:]] == list(range(1, 201))
        assert len(heard) == count == 201, "nothing after close()"


def test_bad_options_and_a_closed_subscription_answer_stable_codes():
    with App() as app:
        for options, field in [("{", None), ({"capacity": 0}, "capacity"), ({"capacity": 70000}, "capacity"),
                               ({"kinds": "state"}, "kinds"), ({"kinds": ["everything"]}, "kinds[0]"),
                               ({"colour": "blue"}, "colour")]:
            with pytest.raises(JcodeMobileError) as problem:
                app.subscribe(options=options)
            assert problem.value.code == ("invalid_json" if field is None else "invalid_field"), options
            if field is not None:
                assert problem.value.field == field
        s = app.subscribe()
        s.close()
        with pytest.raises(JcodeMobileError) as problem:
            s.next(timeout=0)
        assert problem.value.code == "invalid_handle"


def test_a_ui_learns_of_pairing_the_connection_and_the_history_over_real_sockets():
    with ThreadedGateway() as gateway:
        app = App({"device_id": "device-under-test"})
        with app.events(timeout=5.0, kinds=["app"]) as events:
            with BackgroundHost(app, clock=VirtualClock(), http_timeout=2.0, connect_timeout=2.0) as host:
                for kind, value in [("set_host", "127.0.0.1"), ("set_port", str(gateway.port)),
                                    ("set_pair_code", CODE), ("set_device_name", "Test iPhone"),
                                    ("set_working_dir", WORKING_DIR)]:
                    host.dispatch({"type": kind, "value": value})
                host.dispatch({"type": "submit_pairing"})
                seen = []
                for event in events:
                    seen.append({k: v for k, v in event.items() if k not in ("seq", "revision")})
                    if event["type"] == "history_synced":
                        break
        app.close()
    assert seen == [
        {"type": "subscribed", "next_seq": 1},
        {"type": "connection_phase_changed", "from": "disconnected", "to": "pairing"},
        {"type": "server_paired", "server_id": f"127.0.0.1:{gateway.port}", "server_name": "devbox"},
        {"type": "connection_phase_changed", "from": "pairing", "to": "connecting"},
        {"type": "connection_phase_changed", "from": "connecting", "to": "connected"},
        {"type": "history_synced", "session_id": "s1", "entries": 2, "shown": 2},
    ]
