"""The metrics exporter, its dashboard and alert rules."""
