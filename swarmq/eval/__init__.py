"""Quality evaluation on labelled real data: forge extraction, consolidation, injection.

Shared machinery lives here (counts, rates, reports); each evaluation has its own module. No
Celery or Redis: an evaluation runs the domain code in a scratch workspace.
"""
