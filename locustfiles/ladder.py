"""The concurrency ladder: 1, 5, 10, 20, 30, 50 users, 5 minutes each, steady windows measured.

    locust -f locustfiles/ladder.py --host http://my-vllm:8000 --headless --summary-json s.json
    locust -f locustfiles/ladder.py --host ... --ladder 1,2,5,10,20,50,100 --step-time 3m --step-warmup 30s

Start it from the web UI too (no --headless): the shape drives the user count.
"""

from locust import events

from llmload.ladder.shape import LadderShape
from llmload.plugin import activate
from llmload.users import LLMUser

activate(events, ladder="1,5,10,20,30,50")


class ChatUser(LLMUser):
    pass


class Ladder(LadderShape):
    pass
