"""Streaming text completions (/v1/completions) with the default 3:4:3 mix.

    locust -f locustfiles/completions_stream.py --host http://127.0.0.1:8000 --headless -u 20 -r 20 -t 60s
"""

from locust import events

from llmload.plugin import activate
from llmload.users import LLMUser

activate(events, api="openai-completions")


class CompletionsUser(LLMUser):
    pass
