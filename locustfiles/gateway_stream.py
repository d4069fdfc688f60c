"""A gateway endpoint: POST /v1/stream {"prompt", "stream": true, "max_new_tokens"} answering raw text or SSE.

    locust -f locustfiles/gateway_stream.py --host http://gateway:8080 --endpoint-path /v1/stream
"""

from locust import events

from llmload.plugin import activate
from llmload.users import LLMUser

activate(events, api="stream")


class GatewayUser(LLMUser):
    pass
