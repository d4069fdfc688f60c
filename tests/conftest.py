"""Test-suite set-up.

Locust patches the standard library with gevent when it is imported. Import it first,
as a real Locust process does, so every test runs in the same (patched) world; servers
under test run as child processes.
"""

from __future__ import annotations

import locust  # noqa: F401  (must come first: gevent monkey-patching)
