"""Swarm2 worker profile memory: IDENTITY/SOUL/MEMORY, missions, episodes, handoffs, runtime.json.

The lead's process code calls :func:`ensure_profiles` from ``swarmq up`` and :func:`read_runtime`
from ``swarmq status``.
"""

from swarmq.profiles.archive import archive_mission
from swarmq.profiles.bootstrap import ensure_profile, ensure_profiles
from swarmq.profiles.episodes import append_episode
from swarmq.profiles.events import EventType, MissionEvent, append_events, read_events
from swarmq.profiles.handoffs import Handoff, latest_handoff, write_handoff
from swarmq.profiles.layout import ProfileLayout, SharedLayout
from swarmq.profiles.runtime import read_runtime, update_runtime
from swarmq.profiles.summary import SummaryUpdate, update_summary

__all__ = [
    "EventType",
    "Handoff",
    "MissionEvent",
    "ProfileLayout",
    "SharedLayout",
    "SummaryUpdate",
    "append_episode",
    "append_events",
    "archive_mission",
    "ensure_profile",
    "ensure_profiles",
    "latest_handoff",
    "read_events",
    "read_runtime",
    "update_runtime",
    "update_summary",
    "write_handoff",
]
