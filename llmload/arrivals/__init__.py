"""Open-loop arrivals: the schedule (:mod:`.schedules`) and the dispatcher that sends on it (:mod:`.dispatcher`).

* :mod:`~llmload.arrivals.schedules` — arrival processes: when each request of an open-loop run is
  meant to be sent (:class:`~llmload.arrivals.schedules.ArrivalSpec`, :class:`~llmload.arrivals.schedules.RatePlan`,
  each worker's share), drawn from the run seed;
* :mod:`~llmload.arrivals.dispatcher` — :class:`~llmload.arrivals.dispatcher.Dispatcher`: one greenlet
  per load process that releases the arrivals on time to its users.

The flags are :mod:`llmload.config.arrival`; the load process (:mod:`llmload.runtime.load_role`) owns
the dispatcher.
"""
