# The image every swarmq service in docker-compose.yml runs (workers, beat, Flower).
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN apt-get update && apt-get install -y --no-install-recommends ripgrep && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY requirements ./requirements
COPY swarmq ./swarmq
# The README's install: the locked versions and the default models (MiniLM, multilingual).
RUN pip install -c requirements/lock.txt '.[minilm,multilingual]'
COPY swarm.yaml ./
RUN useradd --create-home swarm && mkdir -p /data && chown swarm /data
USER swarm
# The quantised MiniLM the default settings run, built once into the image (the user's cache),
# not by every container's first query (swarmq.similarity.quantized).
RUN python -c "from swarmq.similarity.packaged import packaged_embedder; packaged_embedder('minilm')"
VOLUME ["/data"]
CMD ["swarmq", "status"]
