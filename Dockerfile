# The image every swarmq service in docker-compose.yml runs (workers, beat, Flower).
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN apt-get update && apt-get install -y --no-install-recommends ripgrep && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY swarmq ./swarmq
RUN pip install .
COPY swarm.yaml ./
RUN useradd --create-home swarm && mkdir -p /data && chown swarm /data
USER swarm
VOLUME ["/data"]
CMD ["swarmq", "status"]
