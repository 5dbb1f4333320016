"""The channels to the person, one module each behind ``base.Channel``: Apprise's URLs (one way),
ntfy and Telegram (two way: buttons, and the answers read back). A new channel: its settings in
``routine/config/notify.py`` (``CHANNELS``), its module here, its line in ``MAKERS``."""

from __future__ import annotations

from typing import Any, Callable

from routine.config.notify import CHANNELS, ChannelSettings, NotifySettings, NtfySettings, TelegramSettings
from routine.person.channels.apprise import AppriseChannel
from routine.person.channels.base import Channel
from routine.person.channels.ntfy import NtfyChannel
from routine.person.channels.telegram import TelegramChannel

# A channel's settings (config/notify.CHANNELS) → the channel made from them.
MAKERS: dict[type[ChannelSettings], Callable[[Any], Channel]] = {
    NtfySettings: NtfyChannel,
    TelegramSettings: TelegramChannel,
}
if set(MAKERS) != set(CHANNELS.values()):  # a channel declared in config/notify.py without its module here
    raise RuntimeError(f"channels without a maker in routine/person/channels: "
                       f"{sorted(c.KEY for c in set(CHANNELS.values()) - set(MAKERS))}")


def channels(settings: NotifySettings) -> list[Channel]:
    """Every channel `notify:` configures: each Apprise URL, then each channel of its own."""
    return [AppriseChannel(url) for url in settings.urls] + [MAKERS[type(c)](c) for c in settings.active]


def answering(settings: NotifySettings) -> list[Channel]:
    """The channels the person's answers come back by (the daemon reads them)."""
    return [MAKERS[type(c)](c) for c in settings.active if c.answers]
