"""Orchestrator missions: the ledger, routing, checkpoint markers, context loading and agent runs.

Kept import-light: the roster schema imports :mod:`swarmq.missions.config` from here.
"""
