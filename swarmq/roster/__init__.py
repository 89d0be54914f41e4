"""The swarm.yaml roster: schema, loader and cross-entry checks (nothing of Celery here)."""

from swarmq.coord.quota_config import QuotaConfig, QuotaWindow
from swarmq.names import JOB_FAMILIES
from swarmq.roster.loader import RosterError, RosterProblem, RosterReport, load_report, load_roster
from swarmq.roster.schema import Roster, WorkerConfig

__all__ = [
    "JOB_FAMILIES",
    "QuotaConfig",
    "QuotaWindow",
    "Roster",
    "RosterError",
    "RosterProblem",
    "RosterReport",
    "WorkerConfig",
    "load_report",
    "load_roster",
]
