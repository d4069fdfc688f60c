from __future__ import annotations

from llmload.users.error_body import LIMIT, error_message


def test_openai_vllm_shape():
    body = b'{"error": {"message": "maximum context length is 32768 tokens. However, you requested 100050 tokens", "type": "BadRequestError", "code": 400}}'
    assert error_message(body) == "maximum context length is 32768 tokens. However, you requested 100050 tokens"


def test_anthropic_tgi_fastapi_and_plain_shapes():
    assert error_message(b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}') == "Overloaded"
    assert error_message(b'{"error":"Input validation error: too long","error_type":"validation"}') == (
        "Input validation error: too long"
    )
    assert error_message(b'{"detail":"Not Found"}') == "Not Found"
    assert error_message(b'{"detail":[{"loc":["body"],"msg":"field required"},{"msg":"bad"}]}') == "field required; bad"
    assert error_message(b'{"message":"rate limited"}') == "rate limited"
    assert error_message(b"upstream connect error\n or disconnect") == "upstream connect error or disconnect"


def test_html_is_reduced_to_its_text():
    html = b"<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
    assert error_message(html, "text/html") == "502 Bad Gateway 502 Bad Gateway"


def test_long_or_cut_bodies_are_bounded():
    long = b'{"error": {"message": "' + b"x" * 1000 + b'"}}'
    msg = error_message(long)
    assert len(msg) == LIMIT and msg.endswith("…")
    assert error_message(b'{"error": {"message": "cut') == '{"error": {"message": "cut'
    assert error_message(b"") == ""
    assert error_message(b"{}") == "{}"
