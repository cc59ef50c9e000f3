"""The phone's hardware, scripted: push registration, camera, dictation, photos,
haptics, local notifications, the clipboard, and this install's identity (``create_device_id``)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Tuple

#: The effect types a :class:`DeviceScript` answers.
DEVICE_EFFECTS = frozenset({
    "register_push_notifications", "request_camera_qr_scan", "request_speech_transcript",
    "request_image_picker", "haptic", "create_device_id", "show_local_notification", "copy_to_clipboard",
})


def new_device_id() -> str:
    """A fresh identity for an install: a random UUID (what an iOS host uses)."""
    return str(uuid.uuid4())


@dataclass
class DeviceScript:
    """What the device answers when the core asks for its hardware.

    Attributes:
        push_token: the token ``register_push_notifications`` yields
            (``push_token_received``); None: the OS never answers.
        qr_payload: what the camera reads (``qr_payload_scanned``); None: the
            person closes the scanner (``qr_scan_cancelled``).
        speech_text: the final dictated text (``speech_transcript`` with
            ``is_final: true``); None: dictation never answers.
        image: ``(media_type, data_base64)`` the photo picker yields
            (``image_attachment_selected``); None: nothing is picked.
        haptics: the styles of every ``haptic`` played, in order.
        notifications: the local notifications shown (``show_local_notification``:
            ``{"title", "body", "session_id"}``), in order; like the OS, a later
            one for the same ``session_id`` replaces the one still shown.
        device_id: what ``create_device_id`` answers (``device_id_created``);
            None: a fresh :func:`new_device_id` (a uuid4) each time it is asked,
            or what ``device_id_factory`` returns when that is given.
        device_id_factory: makes the answer to ``create_device_id`` when
            ``device_id`` is None (tests inject a deterministic one).
        answer_device_id: False: ``create_device_id`` is never answered (an
            OS that hangs), so pairing waits for the identity.
        device_ids_created: every identity handed to the core, in order.
        clipboard: every text put on the clipboard (``copy_to_clipboard``),
            in order; the last one is what a paste would give.
    """

    push_token: Optional[str] = None
    qr_payload: Optional[str] = None
    speech_text: Optional[str] = None
    image: Optional[Tuple[str, str]] = None
    haptics: List[str] = field(default_factory=list)
    notifications: List[dict] = field(default_factory=list)
    device_id: Optional[str] = None
    device_id_factory: Optional[Callable[[], str]] = None
    answer_device_id: bool = True
    device_ids_created: List[str] = field(default_factory=list)
    clipboard: List[str] = field(default_factory=list)

    def handles(self, effect_type: str) -> bool:
        """Whether ``effect_type`` is one of the device's effects."""
        return effect_type in DEVICE_EFFECTS

    def answer(self, effect: dict) -> Optional[dict]:
        """Carry out a device effect; returns the platform event to report, or None."""
        kind = effect.get("type")
        if kind == "create_device_id":
            if not self.answer_device_id:
                return None
            if self.device_id is not None:
                value = self.device_id
            else:
                value = (self.device_id_factory or new_device_id)()
            self.device_ids_created.append(value)
            return {"type": "device_id_created", "effect_id": effect["effect_id"], "device_id": value}
        if kind == "haptic":
            self.haptics.append(str(effect.get("style")))
            return None
        if kind == "copy_to_clipboard":
            self.clipboard.append(str(effect.get("text")))
            return None
        if kind == "show_local_notification":
            shown = {"title": effect.get("title"), "body": effect.get("body"), "session_id": effect.get("session_id")}
            self.notifications = [n for n in self.notifications if n["session_id"] != shown["session_id"]]
            self.notifications.append(shown)
            return None
        if kind == "register_push_notifications":
            return None if self.push_token is None else {"type": "push_token_received", "token": self.push_token}
        if kind == "request_camera_qr_scan":
            if self.qr_payload is None:
                return {"type": "qr_scan_cancelled"}
            return {"type": "qr_payload_scanned", "payload": self.qr_payload}
        if kind == "request_speech_transcript":
            if self.speech_text is None:
                return None
            return {"type": "speech_transcript", "text": self.speech_text, "is_final": True}
        if kind == "request_image_picker":
            if self.image is None:
                return None
            media_type, data = self.image
            return {"type": "image_attachment_selected", "media_type": media_type, "data_base64": data}
        raise ValueError(f"not a device effect: {kind!r}")


def notification_opened(notification: dict) -> dict:
    """The platform event a host sends when the person opens a local
    notification: ``push_notification_opened`` with its user info, which
    holds the ``session_id`` it was shown for (docs/LIFECYCLE.md)."""
    payload = {} if notification.get("session_id") is None else {"session_id": notification["session_id"]}
    return {"type": "push_notification_opened", "payload": payload}
