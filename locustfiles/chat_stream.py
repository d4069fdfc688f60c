"""Streaming chat completions (/v1/chat/completions) with the default 3:4:3 mix.

    locust -f locustfiles/chat_stream.py --host http://127.0.0.1:8000 --headless -u 20 -r 20 -t 60s
    locust -f locustfiles/chat_stream.py --host http://my-vllm:8000 --model meta-llama/Llama-3.1-8B-Instruct

Every llmload flag works here too (``--profile quadrants``, ``--summary-json s.json``,
``--ttft-timeout 30s`` ...; see ``locust -f locustfiles/chat_stream.py --help``).
"""

from locust import between, events  # noqa: F401  (between: for think time, see below)

from llmload.plugin import activate
from llmload.users import LLMUser

activate(events, api="openai-chat")


class ChatUser(LLMUser):
    # Closed loop: the next request goes out as soon as the previous one ends.
    # For think time between requests use e.g. `wait_time = between(1, 3)`.
    pass
