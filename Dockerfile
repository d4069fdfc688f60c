# llmload: `llmload run | sim | gpu-sidecar | demo` in one image (docker-compose.yml,
# docs/dashboards.md). Build: docker build -t llmload:local .
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /opt/llmload
COPY pyproject.toml README.md ./
COPY llmload ./llmload
COPY locustfiles ./locustfiles
# The gpu extra is nvidia-ml-py (pure Python, loaded only by `llmload gpu-sidecar`).
RUN pip install ".[gpu]" \
 && useradd --create-home --uid 10001 llmload \
 && mkdir -p /runs && chown llmload /runs

USER llmload
WORKDIR /runs
# 8089 web UI (+ /metrics), 5557 master <-> workers, 9646 exporter, 8000 simulator, 9401 GPU sidecar
EXPOSE 8089 5557 9646 8000 9401
ENTRYPOINT ["llmload"]
CMD ["--help"]
