"""Domain code and canonical storage. Files only: nothing here imports Celery or Redis."""
