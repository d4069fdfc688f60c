"""What a Locust user holds while it is idle, made smaller: a cookie jar made on the first cookie, a list of tasks.

A session that thinks or waits for its tools is a Locust user asleep; at 10 000 sessions every
byte it holds counts 10 000 times (``benchmarks/sessions_scale.py``, ``docs/performance.md``).
Two of Locust's per-user objects are made for cases an LLM client rarely meets:

* **The cookie jar.** ``FastHttpSession`` gives each user an ``http.cookiejar.CookieJar``
  (its policy, a lock and its tables: ~0.5 KB) that an API which sets no cookie never fills.
  :class:`LazyCookieJar` stands in for it and makes the real jar on the first response that
  sets a cookie (or the first time code asks the jar for anything else): from then on every
  cookie is kept and sent exactly as before. A response without ``Set-Cookie`` is all it
  looks at until then, which is also cheaper per request than the jar's own parsing.
* **The task queue.** Locust's ``TaskSet`` keeps the next tasks in a ``collections.deque``,
  whose first block costs ~0.6 KB, for a queue that holds one task at a time.
  :class:`TaskQueue` is a list with the deque's ``append``/``appendleft``/``popleft``.

:func:`lighten` applies both to a user (``LLMUser.on_start``: the ``TaskSet`` exists by then).
Locust internals used: ``FastHttpSession.cookiejar`` and its agent's ``cookiejar`` (one object),
``TaskSet._task_queue``; ``tests/unit/users/test_idle_footprint.py`` pins them.
"""

from __future__ import annotations

from collections import deque
from http.cookiejar import CookieJar
from typing import Any

__all__ = ["LazyCookieJar", "TaskQueue", "lighten"]


class LazyCookieJar:
    """An ``http.cookiejar.CookieJar`` made when a first cookie arrives (module docstring)."""

    __slots__ = ("_jar",)

    def __init__(self) -> None:
        self._jar: CookieJar | None = None

    @property
    def jar(self) -> CookieJar:
        """The real jar (made now if there was none)."""
        jar = self._jar
        if jar is None:
            jar = self._jar = CookieJar()
        return jar

    @property
    def made(self) -> bool:
        """Whether the real jar exists (a cookie arrived, or the jar was asked for)."""
        return self._jar is not None

    def add_cookie_header(self, request: Any) -> None:
        if self._jar is not None:  # no jar: no cookie to send
            self._jar.add_cookie_header(request)

    def extract_cookies(self, response: Any, request: Any) -> None:
        if self._jar is None:
            headers = response.info()
            if not (headers.get_all("Set-Cookie") or headers.get_all("Set-Cookie2")):
                return
        self.jar.extract_cookies(response, request)

    def __iter__(self) -> Any:
        return iter(()) if self._jar is None else iter(self._jar)

    def __len__(self) -> int:
        return 0 if self._jar is None else len(self._jar)

    def __getattr__(self, name: str) -> Any:  # the rest of CookieJar's interface (set_cookie, clear, ...)
        return getattr(self.jar, name)


class TaskQueue(list):
    """Locust's task queue (a ``deque`` there) as a list: it holds a task or two, never many."""

    __slots__ = ()

    def appendleft(self, item: Any) -> None:
        self.insert(0, item)

    def popleft(self) -> Any:
        return self.pop(0)


def lighten(user: Any) -> None:
    """Put :class:`LazyCookieJar` and :class:`TaskQueue` in a Locust user's session and task set (idempotent).

    Only what is still in its initial state is replaced: a jar that holds cookies, or a queue
    with tasks in it, is left as it is.
    """
    session = getattr(user, "client", None)
    jar = getattr(session, "cookiejar", None)
    agent = getattr(session, "client", None)
    if session is not None and agent is not None and type(jar) is CookieJar and not len(jar) \
            and getattr(agent, "cookiejar", None) is jar:
        session.cookiejar = agent.cookiejar = LazyCookieJar()
    taskset = getattr(user, "_taskset_instance", None)
    queue = getattr(taskset, "_task_queue", None)
    if type(queue) is deque and not queue:
        taskset._task_queue = TaskQueue()  # type: ignore[union-attr]
